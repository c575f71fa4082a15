import Sidecar
import Testing

@testable import SidecarCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The default configuration file, `--config`, the flags, and where each key came from.
@Suite struct ConfigurationSourcesTests {
    /// A fresh `$XDG_CONFIG_HOME` holding `auth-sidecar/config.json` with `text`.
    static func configHome(_ text: String?) throws -> String {
        let template = try #require(strdup("/tmp/verbs-config-XXXXXX"))
        defer { free(template) }
        let made = try #require(mkdtemp(template))
        let home = String(decoding: UnsafeRawBufferPointer(start: made, count: strlen(made)), as: UTF8.self)
        guard let text else { return home }
        mkdir(home + "/auth-sidecar", 0o700)
        let fd = open(home + "/auth-sidecar/config.json", O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return home
    }

    @Test func theDefaultFileIsReadWhenPresent() throws {
        let home = try Self.configHome(#"{"clientId": "from-file", "authority": "https://login.microsoftonline.com/organizations"}"#)
        let sources = try ConfigurationSources.load(
            LaunchOptions(authority: "https://login.microsoftonline.com/contoso.com"),
            environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        #expect(sources.overrides.clientId == "from-file")
        #expect(sources.overrides.authority == "https://login.microsoftonline.com/contoso.com")
        #expect(sources.origins == ["file \(home)/auth-sidecar/config.json", "--authority"])
    }

    @Test func noFileNoKeys() throws {
        let home = try Self.configHome(nil)
        let sources = try ConfigurationSources.load(LaunchOptions(), environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        #expect(sources == ConfigurationSources())
    }

    @Test func everyConfigurationFlagGivenIsAnOriginInOrder() throws {
        let home = try Self.configHome(nil)
        var options = LaunchOptions(
            clientID: "c", authority: "https://login.microsoftonline.com/contoso.com", cache: "memory",
            httpTimeoutSeconds: 5, interactiveTimeoutSeconds: 60)
        options.cacheProtection = "plaintext"
        let sources = try ConfigurationSources.load(options, environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        #expect(
            sources.origins == [
                "--client-id", "--authority", "--cache", "--cache-protection", "--http-timeout-seconds",
                "--interactive-timeout-seconds",
            ])
        options.clientID = nil
        options.cache = nil
        let two = try ConfigurationSources.load(options, environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        #expect(two.origins == ["--authority", "--cache-protection", "--http-timeout-seconds", "--interactive-timeout-seconds"])
    }

    @Test func configWinsOverTheDefaultFile() throws {
        let home = try Self.configHome(#"{"clientId": "default"}"#)
        let other = try Self.configHome(#"{"clientId": "explicit"}"#) + "/auth-sidecar/config.json"
        let sources = try ConfigurationSources.load(LaunchOptions(config: other), environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        #expect(sources.overrides.clientId == "explicit")
        #expect(sources.origins == ["file \(other)"])
    }

    @Test func authSidecarConfigNamesTheDefaultFile() throws {
        let home = try Self.configHome(#"{"clientId": "xdg"}"#)
        let chosen = try Self.configHome(#"{"clientId": "chosen"}"#) + "/auth-sidecar/config.json"
        let environment: [String: String] = ["XDG_CONFIG_HOME": home, "AUTH_SIDECAR_CONFIG": chosen]
        let sources = try ConfigurationSources.load(LaunchOptions(), environment: { environment[$0] })
        #expect(sources.overrides.clientId == "chosen")
        #expect(sources.origins == ["file \(chosen)"])
        let relative = try ConfigurationSources.load(LaunchOptions(), environment: { $0 == "AUTH_SIDECAR_CONFIG" ? "c.json" : environment[$0] })
        #expect(relative.overrides.clientId == "xdg")
    }

    @Test func aBadDefaultFileIsNamed() throws {
        let home = try Self.configHome("{not json")
        #expect {
            _ = try ConfigurationSources.load(LaunchOptions(), environment: { $0 == "XDG_CONFIG_HOME" ? home : nil })
        } throws: { error in
            "\(error)".contains("default configuration file")
        }
    }
}
