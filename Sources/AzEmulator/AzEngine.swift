import JSON
import JSONRPC
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the az emulator needs of the program that starts it (``AzShim/run(_:host:)``): a
/// connection to the engine, and the few rules it shares with the shell verbs. SidecarCLI
/// supplies it over a verb's session (the agent's engine, else one in this process); the
/// emulator builds no engine and no connection of its own, and its one HTTP client, Resource
/// Manager's, is the engine's (``AzResourceManager``).
public protocol AzHost {
    /// One `az` command's connection to the engine, `initialize` sent with the configuration
    /// sources; a failure to reach or start the engine as an az error.
    func open() throws(AzShim.Failure) -> any AzEngine
    /// Whether the configuration enables `azPassthrough` (an unreadable one does not).
    var passthroughEnabled: Bool { get }
}

/// One `az` command's engine session.
public protocol AzEngine: AnyObject {
    /// The configuration in force (`initialize`'s result).
    func configuration() throws(AzShim.Failure) -> JSONValue
    /// The `armEndpoint` of the configuration sources.
    var armEndpoint: String? { get }
    /// A request's result or its JSON-RPC error; throws when the engine cannot be reached.
    func outcome(_ method: String, _ params: JSONValue) throws(AzShim.Failure) -> Result<JSONValue, RPCError>
    /// Prints `text` (a newline added when missing) on the output stdout is reserved for.
    func print(_ text: String)
    /// Ends the session.
    func close()
    /// The verbs' one-line message for an engine error.
    func message(for error: RPCError) -> String
    /// `text` on one line, shortened as the verbs shorten messages.
    func oneLine(_ text: String) -> String
    /// The authority for `tenant` on the configured authority's host; nil when it has none.
    func authority(_ configured: String, tenant: String) -> String?
    /// Why `tenant` (given with `option`) is not a tenant; nil when it is one.
    func tenantProblem(_ tenant: String, option: String) -> String?
    /// An account's name as the verbs print it.
    func username(_ account: JSONValue?) -> String
    /// Replaces the file at `path` atomically with `bytes` (mode `mode`), removing the
    /// temporaries of rewrites that were killed.
    func replaceFile(_ path: String, with bytes: [UInt8], mode: mode_t) throws(AzShim.Failure)
}

/// Where the emulator writes: az's output on stdout (the engine session's ``AzEngine/print(_:)``
/// once a session is open), az's messages on stderr.
enum AzConsole {
    /// Writes `text` whole to `fd`; false when the reader is gone.
    @discardableResult
    static func write(_ text: String, to fd: Int32) -> Bool {
        POSIX.writeAll(fd, Array(text.utf8))
    }
}
