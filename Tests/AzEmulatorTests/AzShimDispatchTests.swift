import Testing

@testable import AzEmulator

@Suite struct AzShimDispatchTests {
    @Test func startedAsAzOrWithTheAzVerb() {
        #expect(AzShim.arguments(programName: "/home/u/.local/share/auth-sidecar/az-shim/bin/az", ["account", "show"]) == ["account", "show"])
        #expect(AzShim.arguments(programName: "az", []) == [])
        #expect(AzShim.arguments(programName: "/usr/bin/auth-sidecar", ["az", "account", "show"]) == ["account", "show"])
    }

    @Test func otherwiseNotTheShim() {
        #expect(AzShim.arguments(programName: "/usr/bin/auth-sidecar", ["token"]) == nil)
        #expect(AzShim.arguments(programName: "/opt/az-tools/auth-sidecar", ["account"]) == nil)
        #expect(AzShim.arguments(programName: "/usr/bin/azure", ["account"]) == nil)
        #expect(AzShim.arguments(programName: "/usr/bin/baz", ["account"]) == nil)
        #expect(AzShim.arguments(programName: "/opt/az/auth-sidecar", ["account"]) == nil)
        #expect(AzShim.arguments(programName: nil, ["token", "az"]) == nil)
    }

    @Test func passthroughSkipsThisBinary() throws {
        // /proc/self/exe is this test binary: a PATH naming only it finds no other az
        #expect(AzPassthrough.realAz(path: "/nonexistent:relative/dir") == nil)
        #expect(AzPassthrough.realAz(path: nil) == nil)
    }
}
