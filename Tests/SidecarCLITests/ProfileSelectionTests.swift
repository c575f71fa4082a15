import JSON
import JSONRPC
import Sidecar
import Testing

@testable import SidecarCLI

/// Profiles in the configuration file: which one a command line chooses, and `profiles use`'s edit.
@Suite struct ProfileSelectionTests {
    static let twoProfiles = twoProfiles(defaultProfile: "work")

    static func twoProfiles(defaultProfile: String) -> String {
        """
        {
          "httpTimeoutSeconds": 12,
          "profiles": {
            "work": {"clientId": "work-client", "authority": "https://login.microsoftonline.com/contoso.com"},
            "b2c-test": {"clientId": "b2c-client", "cache": {"persistence": "memory"}}
          },
          "defaultProfile": "\(defaultProfile)"
        }
        """
    }

    static func load(_ text: String, _ options: LaunchOptions = LaunchOptions(), profileVariable: String? = nil) throws -> ConfigurationSources {
        let home = try ConfigurationSourcesTests.configHome(text)
        return try ConfigurationSources.load(options) { name in
            switch name {
            case "XDG_CONFIG_HOME": home
            case ConfigurationFile.environmentVariable: profileVariable
            default: nil
            }
        }
    }

    static func refusal(_ body: () throws -> ConfigurationSources) -> String {
        do {
            _ = try body()
            return "accepted"
        } catch let error as RPCError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aFlatFileIsOneProfileAndKeepsTheDefaultCache() throws {
        let sources = try Self.load(#"{"clientId": "flat"}"#)
        #expect(sources.overrides.clientId == "flat")
        #expect(sources.overrides.cache == nil)
        #expect(sources.profile == nil)
        #expect(sources.profiles.file?.profileNames == ["default"])
        let named = try Self.load(#"{"clientId": "flat"}"#, LaunchOptions(), profileVariable: "default")
        #expect(named.overrides.clientId == "flat")
        #expect(Self.refusal { try Self.load(#"{"clientId": "flat"}"#, profileVariable: "work") }.contains("has no profiles"))
    }

    @Test func theDefaultProfileOverTheSharedKeysWithItsOwnCache() throws {
        let sources = try Self.load(Self.twoProfiles)
        #expect(sources.profile == "work")
        #expect(sources.overrides.clientId == "work-client")
        #expect(sources.overrides.httpTimeoutSeconds == 12)
        guard case .file(let path, _, _)? = sources.overrides.cache else {
            Issue.record("no cache file for the profile")
            return
        }
        #expect(path.hasSuffix("/auth-sidecar/msal_token_cache.work.json"))
        #expect(sources.profiles.bases.keys.sorted() == ["b2c-test", "work"])
        #expect(sources.origins.last == "profile work")
    }

    @Test func theFlagThenTheVariableChooseAProfile() throws {
        var options = LaunchOptions(clientID: "from-flag")
        options.profile = "b2c-test"
        let flag = try Self.load(Self.twoProfiles, options, profileVariable: "work")
        #expect(flag.profile == "b2c-test")
        #expect(flag.overrides.clientId == "from-flag")
        #expect(flag.overrides.cache == .memory)
        #expect(flag.profiles.bases["work"]?.clientId == "from-flag")  // flags over every profile
        let variable = try Self.load(Self.twoProfiles, profileVariable: "b2c-test")
        #expect(variable.profile == "b2c-test")
        #expect(variable.overrides.clientId == "b2c-client")
    }

    @Test func anUnknownProfileListsTheKnownOnes() {
        var options = LaunchOptions()
        options.profile = "nope"
        let message = Self.refusal { try Self.load(Self.twoProfiles, options) }
        #expect(message.contains("unknown profile 'nope'"))
        #expect(message.contains("work, b2c-test"))
    }

    @Test func severalProfilesWithoutADefaultNeedAChoice() throws {
        let text = #"{"profiles": {"a": {"clientId": "a"}, "b": {"clientId": "b"}}}"#
        #expect(Self.refusal { try Self.load(text) }.contains("no defaultProfile"))
        let home = try ConfigurationSourcesTests.configHome(text)
        let lenient = try ConfigurationSources.load(LaunchOptions(), requireProfile: false) { $0 == "XDG_CONFIG_HOME" ? home : nil }
        #expect(lenient.overrides.clientId == nil)
        #expect(lenient.profiles.bases["b"]?.clientId == "b")
        let single = try Self.load(#"{"profiles": {"only": {"clientId": "o"}}}"#)
        #expect(single.profile == "only")
    }

    @Test func badFilesAreRefusedNamingTheMember() {
        #expect(Self.refusal { try Self.load(#"{"profiles": {"w": {"clientId": 3}}}"#) }.contains("profile 'w'"))
        #expect(Self.refusal { try Self.load(#"{"profiles": {"../x": {}}}"#) }.contains("profile name"))
        #expect(Self.refusal { try Self.load(#"{"profiles": {"a": {}}, "defaultProfile": "b"}"#) }.contains("defaultProfile 'b'"))
        #expect(Self.refusal { try Self.load(#"{"clientId": "x", "defaultProfile": "b"}"#) }.contains("no profiles"))
        #expect(Self.refusal { try Self.load(#"{"profiles": {}}"#) }.contains("profiles must be"))
    }

    @Test func anEngineLayersAClientsProfileOverThatProfile() throws {
        let sources = try Self.load(Self.twoProfiles)
        var given = ConfigurationOverrides()
        given.scopes = ["x"]
        let base = try sources.profiles.base(profile: "b2c-test", given: given, startup: sources.overrides)
        #expect(base.clientId == "b2c-client")
        #expect(try sources.profiles.base(profile: nil, given: given, startup: sources.overrides) == sources.overrides)
        #expect(throws: RPCError.self) { try sources.profiles.base(profile: "other", given: given, startup: sources.overrides) }
        given.clientId = "own"  // a verb's own profile, unknown to this engine: over the flags alone
        #expect(try sources.profiles.base(profile: "other", given: given, startup: sources.overrides) == ConfigurationOverrides())
    }

    @Test func useReplacesOrAddsDefaultProfileAndKeepsTheRest() throws {
        let replaced = try #require(DefaultProfileEdit.setting("b2c-test", in: Self.twoProfiles))
        #expect(replaced == Self.twoProfiles(defaultProfile: "b2c-test"))
        let withoutDefault = #"{"profiles": {"a": {"defaultProfile": 1}, "b": {}}}"#
        #expect(DefaultProfileEdit.setting("b", in: withoutDefault) == #"{"defaultProfile": "b", "profiles": {"a": {"defaultProfile": 1}, "b": {}}}"#)
        let lines = "{\n  \"profiles\": {\"a\": {}},\n  \"defaultProfile\": null\n}\n"
        #expect(DefaultProfileEdit.setting("a", in: lines) == "{\n  \"profiles\": {\"a\": {}},\n  \"defaultProfile\": \"a\"\n}\n")
        let spread = "{\n    \"profiles\": {\"a\": {}}\n}"
        #expect(DefaultProfileEdit.setting("a", in: spread) == "{\n    \"defaultProfile\": \"a\",\n    \"profiles\": {\"a\": {}}\n}")
        let escaped = #"{"x\"defaultProfile": "no", "profiles": {"a": {}}}"#
        #expect(DefaultProfileEdit.setting("a", in: escaped)?.hasPrefix(#"{"defaultProfile": "a", "x\"#) == true)
        #expect(DefaultProfileEdit.setting("a", in: "[1]") == nil)
    }
}
