import JSON
import JSONRPC

/// A configuration file (`config.json`): the configuration keys at the top level (the flat
/// form, one implicit profile named `default`), or named profiles beside them:
/// `{"profiles": {"work": {...}, "b2c-test": {...}}, "defaultProfile": "work"}`. With profiles,
/// the top-level keys are shared by every profile, and a profile's own keys win.
///
/// Each named profile without a `cache` key (its own or a shared one) gets a cache file of its
/// own (``Configuration/defaultCachePath(profile:variable:)``), so a profile keeps its own
/// accounts and current account, as separate `AZURE_CONFIG_DIR`s do for az; the flat form keeps
/// the default file. Tokens never cross origins whatever shares a file (the issuer rule).
public struct ConfigurationFile: Sendable, Equatable {
    /// The name of the flat form's one profile.
    public static let implicitProfile = "default"
    /// The environment variable naming the profile when no `--profile` does.
    public static let environmentVariable = "AUTH_SIDECAR_PROFILE"

    /// The file's path (for messages).
    public var path: String
    /// The top-level keys: the whole configuration of a flat file; with profiles, shared by all.
    public var shared: ConfigurationOverrides
    /// The named profiles' own keys, and their names in file order (both empty: the flat form).
    public private(set) var profiles: [String: ConfigurationOverrides] = [:]
    public private(set) var names: [String] = []
    /// `defaultProfile`, when the file names one.
    public var defaultProfile: String?

    /// Reads a parsed configuration file.
    /// - Throws: -32602 naming the bad member (`profiles.work.authority`, `defaultProfile`).
    public init(json: JSONValue, path: String) throws(RPCError) {
        self.path = path
        shared = try ConfigurationOverrides(params: json, alsoAllowed: ["profiles", "defaultProfile"])
        let top = try Params(json, allowed: ConfigurationOverrides.keys.union(["profiles", "defaultProfile"]))
        defaultProfile = try top.optional("defaultProfile")
        guard let raw = top.members["profiles"], !raw.isNull else {
            if defaultProfile != nil { throw .invalidParams("defaultProfile is set but the file has no profiles", member: "defaultProfile") }
            return
        }
        guard let members = raw.objectValue, !members.isEmpty else {
            throw .invalidParams("profiles must be an object of named profiles, such as {\"work\": {\"clientId\": ...}}", member: "profiles")
        }
        for (name, keys) in members {
            try Self.checkName(name)
            do { profiles[name] = try ConfigurationOverrides(params: keys, alsoAllowed: []) } catch {
                let member = error.data["member"]?.stringValue.map { "profiles.\(name).\($0)" } ?? "profiles.\(name)"
                throw .invalidParams("profile '\(name)': \(Self.detail(error))", member: member)
            }
            names.append(name)
        }
        if let defaultProfile, profiles[defaultProfile] == nil {
            throw .invalidParams("defaultProfile '\(defaultProfile)' is not one of the profiles (\(knownList))", member: "defaultProfile")
        }
    }

    /// Whether the file has named profiles (else it is the flat form).
    public var hasProfiles: Bool { !names.isEmpty }

    /// The profiles' names (the flat form: `default`).
    public var profileNames: [String] { hasProfiles ? names : [Self.implicitProfile] }

    /// The profile used when none is named: `defaultProfile`, else the only profile; `nil` when
    /// several profiles and no `defaultProfile`.
    public var defaultProfileName: String? {
        hasProfiles ? defaultProfile ?? (names.count == 1 ? names.first : nil) : Self.implicitProfile
    }

    /// The keys of profile `name` (its own over the shared ones, its cache file filled in).
    /// - Throws: -32602 for a name the file does not have, listing the ones it has.
    public func overrides(ofProfile name: String) throws(RPCError) -> ConfigurationOverrides {
        guard hasProfiles else {
            guard name == Self.implicitProfile else { throw unknownProfile(name) }
            return shared
        }
        guard let own = profiles[name] else { throw unknownProfile(name) }
        var keys = own.merged(over: shared)
        if keys.cache == nil { keys.cache = .file(path: Configuration.defaultCachePath(profile: name)) }
        return keys
    }

    /// -32602: `name` is not a profile of this file; the message lists the ones it has.
    public func unknownProfile(_ name: String) -> RPCError {
        guard hasProfiles else {
            return .invalidParams(
                "unknown profile '\(name)': \(path) has no profiles (a file without \"profiles\" is one profile, '\(Self.implicitProfile)')",
                member: "profile")
        }
        return .invalidParams("unknown profile '\(name)'; the profiles in \(path) are: \(knownList)", member: "profile")
    }

    /// -32602: several profiles and none chosen.
    public var noDefaultProfile: RPCError {
        .invalidParams(
            "\(path) has several profiles (\(knownList)) and no defaultProfile: choose one with --profile NAME "
                + "(or \(Self.environmentVariable)), or make one the default with 'auth-sidecar profiles use NAME'",
            member: "profile")
    }

    private var knownList: String { names.joined(separator: ", ") }

    /// A profile name is also part of a file name: letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.
    static func checkName(_ name: String) throws(RPCError) {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(name.utf8.count), let first = name.first, first != ".", first != "-" else {
            throw .invalidParams(
                "profile name '\(name)' must be 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.' or '-')",
                member: "profiles.\(name)")
        }
    }

    private static func detail(_ error: RPCError) -> String {
        let prefix = "Invalid params: "
        return error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
    }
}
