import Testing

@testable import Adapters

@Suite struct PackageFeedsTests {
    let devops = PackageFeeds.azureDevOpsScope

    @Test func azureArtifactsHostsAlways() {
        let feeds = PackageFeeds()
        #expect(feeds.scope(forService: "https://pkgs.dev.azure.com/org/_packaging/f/pypi/simple/") == devops)
        #expect(feeds.scope(forService: "https://me@ORG.pkgs.visualstudio.com/_packaging/f/pypi/simple/") == devops)
        #expect(feeds.scope(forService: "pkgs.dev.azure.com") == devops)
        #expect(feeds.scope(forService: "https://pkgs.dev.azure.com:443/x") == devops)
        for other in [
            "http://pkgs.dev.azure.com/org/", "https://pkgs.dev.azure.com.evil/x", "https://pkgs.dev.azure.com:8443/x",
            "https://.pkgs.visualstudio.com/x", "https://evilpkgs.visualstudio.com/x", "https://pypi.org/simple/",
        ] {
            #expect(feeds.scope(forService: other) == nil, "\(other)")
        }
    }

    @Test func longestConfiguredPrefixWinsAtABoundary() {
        let feeds = PackageFeeds(["https://feeds.example/": "a/.default", "https://feeds.example/team": "b/.default"])
        #expect(feeds.scope(forService: "https://feeds.example/team/simple/") == "b/.default")
        #expect(feeds.scope(forService: "https://FEEDS.example/team") == "b/.default")
        #expect(feeds.scope(forService: "https://feeds.example/teamX/simple/") == "a/.default")
        #expect(feeds.scope(forService: "https://feeds.example/other/") == "a/.default")
        #expect(feeds.scope(forService: "feeds.example") == "b/.default")  // the host alone: its longest prefix
        #expect(feeds.scope(forService: "https://feeds.example.evil/team/") == nil)
        #expect(feeds.scope(forService: "http://feeds.example/team/") == nil)
        #expect(PackageFeeds(["https://h:8443/pypi": "s"]).scope(forService: "https://h:8443/pypi2/") == nil)
    }

    @Test func refusesPlaintextOrHostlessPrefixes() {
        #expect(PackageFeeds.problem(["https://ok.example/": "s"]) == nil)
        #expect(PackageFeeds.problem(["http://feeds.example/": "s"]) != nil)
        #expect(PackageFeeds.problem(["feeds.example": "s"]) != nil)
        #expect(PackageFeeds.problem(["https:///x": "s"]) != nil)
        #expect(PackageFeeds.problem(["https://ok.example/": ""]) != nil)
    }
}

@Suite struct ContainerRegistriesTests {
    @Test func acrLoginServersAndListedRegistriesOnly() {
        let registries = ContainerRegistries(["Registry.Example:5000"])
        #expect(registries.registry(forServerURL: "myreg.azurecr.io") == "myreg.azurecr.io")
        #expect(registries.registry(forServerURL: "https://MyReg.azurecr.cn/v2/\n") == "myreg.azurecr.cn")
        #expect(registries.registry(forServerURL: "myreg.azurecr.us:443") == "myreg.azurecr.us")
        #expect(registries.registry(forServerURL: "registry.example:5000") == "registry.example:5000")
        for other in [
            "https://index.docker.io/v1/", "http://myreg.azurecr.io", "a.b.azurecr.io", ".azurecr.io", "myreg.azurecr.io:5000",
            "myreg.azurecr.io.evil", "registry.example", "user@registry.example:5000", "",
        ] {
            #expect(registries.registry(forServerURL: other) == nil, "\(other)")
        }
        #expect(ContainerRegistries.problem(["ok.example:5000"]) == nil)
        #expect(ContainerRegistries.problem(["https://x.example"]) != nil)
        #expect(ContainerRegistries.problem(["x.example/path"]) != nil)
    }
}
