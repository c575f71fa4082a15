import Testing

@testable import SidecarCLI

@Suite struct MultiCallNamesTests {
    @Test func startedByNameOrAsASubcommand() {
        let keyring = MultiCallNames.match(programName: "/home/u/.local/share/auth-sidecar/keyring-shim/bin/keyring", ["get", "s", "u"])
        #expect(keyring?.entry.program == "keyring" && keyring?.arguments == ["get", "s", "u"])
        let helper = MultiCallNames.match(programName: "docker-credential-auth-sidecar", ["get"])
        #expect(helper?.entry.program == "docker-credential-auth-sidecar" && helper?.arguments == ["get"])
        let sub = MultiCallNames.match(programName: "/usr/bin/auth-sidecar", ["docker-credential", "list"])
        #expect(sub?.entry.subcommand == "docker-credential" && sub?.arguments == ["list"])
        #expect(MultiCallNames.match(programName: "/usr/bin/auth-sidecar", ["token"]) == nil)
        #expect(MultiCallNames.match(programName: "/usr/bin/keyring-tool", ["get"]) == nil)
    }
}

@Suite struct KeyringShimParsingTests {
    @Test func pipsAndUvsLines() throws {
        #expect(try KeyringShim.parse(["get", "https://h/simple/", "me"]).get() == .init(service: "https://h/simple/", username: "me"))
        #expect(
            try KeyringShim.parse(["get", "https://h/simple/", "--mode", "creds"]).get()
                == .init(service: "https://h/simple/", username: nil, creds: true))
        #expect(
            try KeyringShim.parse(["--mode=creds", "--output", "json", "get", "h"]).get()
                == .init(service: "h", username: nil, creds: true, json: true))
        #expect(try KeyringShim.parse(["-b", "keyring.backends.null.Keyring", "get", "s", "u"]).get().service == "s")
    }

    @Test func usageErrors() {
        for line in [["get", "s"], ["set", "s", "u"], ["del", "s", "u"], [], ["get"], ["--mode", "x", "get", "s"], ["--bogus", "get", "s", "u"]] {
            guard case .failure = KeyringShim.parse(line) else {
                Issue.record("accepted \(line)")
                continue
            }
        }
    }

    @Test func answers() {
        let request = KeyringShim.Request(service: "s", username: nil, creds: true)
        #expect(KeyringShim.answer(request, username: "me", token: "t") == "me\nt")
        #expect(KeyringShim.answer(.init(service: "s", username: "u"), username: "u", token: "t") == "t")
    }
}
