import Testing

@testable import SidecarCLI

@Suite struct InstalledPathsTests {
    private func paths(_ executable: String?, existing: Set<String>) -> InstalledPaths {
        var found = InstalledPaths(executable: executable)
        found.isDirectory = { existing.contains($0) }
        return found
    }

    @Test func everyPackageKeepsItsFilesBesideItsBinary() {
        let deb = paths("/usr/bin/auth-sidecar", existing: ["/usr/share/auth-sidecar/neovim", "/usr/share/doc/auth-sidecar"])
        #expect(deb.existing(.neovim) == "/usr/share/auth-sidecar/neovim")
        #expect(deb.existing(.docs) == "/usr/share/doc/auth-sidecar")
        #expect(deb.installed(.keyring) == "/usr/share/auth-sidecar/keyring-shim/bin")
        #expect(deb.installed(.az) == "/usr/share/auth-sidecar/az-shim/bin")
        #expect(deb.existing(.emacs) == nil)
        #expect(deb.missing(.emacs).contains("(looked in /usr/share/auth-sidecar/emacs)"))
        let npm = paths("/p/lib/node_modules/auth-sidecar/bin/auth-sidecar", existing: [])
        #expect(npm.installed(.shell) == "/p/lib/node_modules/auth-sidecar/share/auth-sidecar/shell")
        #expect(paths("/bin/auth-sidecar", existing: []).installed(.emacs) == "/share/auth-sidecar/emacs")
        #expect(paths(nil, existing: []).existing(.neovim) == nil)
    }

    @Test func aBinaryBuiltInACloneNamesTheClonesDirectories() {
        let built = "/src/repo/.build/x86_64-unknown-linux-gnu/release/auth-sidecar"
        let clone = paths(built, existing: ["/src/repo/clients/neovim", "/src/repo/clients/emacs", "/src/repo"])
        #expect(clone.existing(.neovim) == "/src/repo/clients/neovim")
        #expect(clone.existing(.docs) == "/src/repo")
        #expect(clone.existing(.az) == nil)
        // an installed file wins over the clone's; no clone without its clients/neovim
        let both = paths(built, existing: ["/src/repo/clients/neovim", "/src/repo/.build/x86_64-unknown-linux-gnu/share/auth-sidecar/neovim"])
        #expect(both.existing(.neovim) == "/src/repo/.build/x86_64-unknown-linux-gnu/share/auth-sidecar/neovim")
        #expect(paths(built, existing: ["/src/repo"]).existing(.docs) == nil)
    }
}
