import JSON
import Testing

@testable import AzEmulator

/// `az version`, `account list/set`, `login --claims-challenge`, `-o table` and the
/// subscriptions' rules (#39); the e2e tests compare the whole output with Azure CLI 2.91.0's.
@Suite struct AzSurfaceTests {
    private func parse(_ line: String) -> Result<AzCommandLine.Parsed, AzCommandLine.Failure> {
        AzCommandLine.parse(line.split(separator: " ").map(String.init))
    }

    @Test func readsTheNewCommandLines() {
        #expect(parse("version -o=json") == .success(.version(AzOutputOptions(format: .json))))
        #expect(parse("account list --all --refresh -o table") == .success(.accountList(all: true, refresh: true, AzOutputOptions(format: .table))))
        #expect(parse("account set -s Dev") == .success(.accountSet(subscription: "Dev")))
        #expect(parse("account set") == .failure(AzCommandLine.Failure("the following arguments are required: --name/--subscription/-n/-s")))
        let login = AzCommandLine.LoginWithClaims(claimsChallenge: "e30=", tenant: "T", scopes: ["S"])
        #expect(parse("login --claims-challenge e30= --tenant T --scope S") == .success(.loginWithClaims(login)))
        // Every other login line stays refused, claims or not.
        #expect(parse("login") == .success(.other(["login"])))
        #expect(parse("login --use-device-code") == .success(.other(["login"])))
        #expect(parse("login --claims-challenge e30= --service-principal") == .success(.other(["login"])))
        #expect(parse("account list-locations") == .success(.other(["account", "list-locations"])))
    }

    @Test func tablesAreTabulatesSimpleFormat() {
        let rows: [AzTable.Row] = [[("Name", "a"), ("IsDefault", true)], [("Name", "longer name"), ("IsDefault", false)]]
        #expect(
            AzTable.render(rows) == """
                Name         IsDefault
                -----------  -----------
                a            True
                longer name  False

                """)
        // knack's automatic rows: keys sorted and capitalized, id, objects and nulls left out
        let automatic = AzTable.automaticRows(["id": "x", "b": "2", "a": "1", "o": [:], "n": .null])
        #expect(automatic.map { $0.map(\.header) } == [["A", "B"]])
        #expect(AzTable.render([]) == "")
    }

    @Test func versionKeepsAzureClisMembersFirst() {
        let version = AzVersion.result(sidecarVersion: "9.9.9")
        #expect(version["azure-cli"] == "2.91.0" && version["servedBy"] == "auth-sidecar 9.9.9")
        #expect(AzOutput.tsv(version) == "2.91.0\t2.91.0\t1.1.0\t\tauth-sidecar 9.9.9\n")
    }

    @Test func subscriptionsTakeAzureClisShapeAndDefault() throws {
        let tenant = AzSubscriptions.Tenant(id: "t1", displayName: "Contoso", defaultDomain: "contoso.onmicrosoft.com")
        let page: JSONValue = [
            "value": [
                ["subscriptionId": "s1", "displayName": "One", "state": "Disabled", "tenantId": "home", "managedByTenants": [["tenantId": "m"]]],
                ["id": "/subscriptions/s2", "displayName": "Two", "state": "Enabled"],
            ]
        ]
        let entries = AzSubscriptions.entries(page, tenant: tenant, username: "u", cloud: AzCloud.forAuthority("https://login.microsoftonline.com/x"))
        #expect(entries.count == 2)
        #expect(entries[0]["tenantId"] == "t1" && entries[0]["homeTenantId"] == "home" && entries[1]["homeTenantId"] == "t1")
        #expect(entries[0]["managedByTenants"] == [["tenantId": "m"]] && entries[1]["id"] == "s2")
        #expect(entries[0]["tenantDisplayName"] == "Contoso" && entries[0]["environmentName"] == "AzureCloud")
        // the first enabled one is the default, unless the previous default is still there
        #expect(AzSubscriptions.withDefault(entries, previous: nil).map { $0["isDefault"] } == [false, true])
        #expect(AzSubscriptions.withDefault(entries, previous: "s1").map { $0["isDefault"] } == [true, false])
        #expect(AzSubscriptions.find("TWO", in: entries)?["id"] == "s2" && AzSubscriptions.find("S1", in: entries)?["id"] == "s1")
        let listed = AzSubscriptions.listed(entries, all: false)
        #expect(listed.count == 1 && listed[0]["cloudName"] == "AzureCloud" && listed[0]["environmentName"] == nil)
        #expect(
            AzSubscriptions.setNotFound("No-Such", cloud: AzCloud.azurePublic) == "The subscription of 'no-such' doesn't exist in cloud 'AzureCloud'."
        )
    }

    @Test func resourceManagerIsKnownForAzureCloudsOrConfigured() {
        #expect(AzCloud.resourceManager(configured: nil, authority: "https://login.microsoftonline.com/common") == "https://management.azure.com/")
        #expect(AzCloud.resourceManager(configured: nil, authority: "https://login.chinacloudapi.cn/x") == "https://management.chinacloudapi.cn/")
        #expect(AzCloud.resourceManager(configured: nil, authority: "https://127.0.0.1:8443/organizations") == nil)
        #expect(AzCloud.resourceManager(configured: "https://127.0.0.1:9/arm", authority: "https://127.0.0.1:9/x") == "https://127.0.0.1:9/arm/")
    }
}
