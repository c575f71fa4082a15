import JSON
import JSONRPC
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// The optional first line of an agent connection: `#auth-sidecar-startup {configuration}`,
/// sent by a stdio sidecar that forwards to the agent, so its command-line configuration
/// (`--config`, `--client-id`, ...) still applies. A connection starting with anything else
/// is plain JSON-RPC (NDJSON or LSP framing).
public enum StartupPreamble {
    static let marker = "#auth-sidecar-startup "
    static let limit = 1 << 16

    /// The line for `configuration` (the keys as `initialize` takes them) and the profile they
    /// are (`initialize`'s `profile`: the agent layers them over that profile, not its default).
    public static func line(_ configuration: JSONValue, profile: String? = nil) -> [UInt8] {
        var members = configuration.objectValue ?? [:]
        members["profile"] = profile.map(JSONValue.string)
        return Array(marker.utf8) + JSONValue.object(members).serialized() + [UInt8(ascii: "\n")]
    }

    /// A preamble's content: the keys, and the profile they are.
    struct Content {
        var overrides: ConfigurationOverrides
        var profile: String?
    }

    /// Reads the preamble when the connection starts with one (consuming exactly that line).
    static func read(from fd: Int32) throws(RPCError) -> Content? {
        var first: UInt8 = 0
        guard recv(fd, &first, 1, Int32(MSG_PEEK)) == 1, first == UInt8(ascii: "#") else { return nil }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < limit, recv(fd, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        guard line.starts(with: Array(marker.utf8)), let json = try? JSONValue.parse(Array(line.dropFirst(marker.utf8.count))) else {
            throw .invalidParams("the connection's first line is not a startup preamble")
        }
        let profile: String? = try Params(json, allowed: ConfigurationOverrides.keys.union(["profile"])).optional("profile")
        return Content(overrides: try ConfigurationOverrides(params: json, alsoAllowed: ["profile"]), profile: profile)
    }

    /// Tells a connection its configuration was refused (a JSON-RPC error with a null id).
    static func refuse(_ fd: Int32, _ error: RPCError) {
        let response: JSONValue = ["jsonrpc": "2.0", "id": nil, "error": error.json]
        let reply = response.serialized() + [UInt8(ascii: "\n")]
        POSIX.writeAll(fd, reply, to: .socketWithoutSignal)
    }
}
