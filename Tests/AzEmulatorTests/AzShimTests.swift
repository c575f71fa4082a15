import Adapters
import JSON
import Testing

@testable import AzEmulator

@Suite struct AzCommandLineTests {
    private func parse(_ line: String) -> Result<AzCommandLine.Parsed, AzCommandLine.Failure> {
        AzCommandLine.parse(line.split(separator: " ").map(String.init))
    }

    @Test func readsWhatAzureIdentityRuns() throws {
        var expected = AzCommandLine.GetAccessToken()
        expected.resource = "https://graph.microsoft.com"
        expected.tenant = "contoso.com"
        let parsed = parse("account get-access-token --output json --resource https://graph.microsoft.com --tenant contoso.com")
        #expect(parsed == .success(.getAccessToken(expected, AzOutputOptions(format: .json))))
    }

    @Test func readsTheOptionForms() throws {
        guard
            case .success(.getAccessToken(let request, let output)) = parse(
                "account get-access-token -o=tsv --scope a b --scope=c -t T --resource-type ms-graph --query accessToken --only-show-errors")
        else {
            Issue.record("not parsed")
            return
        }
        #expect(request.scopes == ["a", "b", "c"] && request.tenant == "T" && request.resourceType == .msGraph)
        #expect(output == AzOutputOptions(format: .tsv, query: AzQuery("accessToken")))
        #expect(parse("account show -ojson --subscription S") == .success(.accountShow(subscription: "S", AzOutputOptions())))
        #expect(AzCommandLine.split("-o=json") == ("-o", "json") && AzCommandLine.split("-otsv") == ("-o", "tsv"))
        #expect(AzCommandLine.split("--output=json") == ("--output", "json") && AzCommandLine.split("-o") == ("-o", nil))
    }

    @Test func refusesWhatAzRefuses() {
        let refusals: [(String, String)] = [
            ("account get-access-token --bogus", "unrecognized arguments: --bogus"),
            ("account get-access-token --resource", "argument --resource: expected one argument"),
            ("account get-access-token --resource --tenant T", "argument --resource: expected one argument"),
            ("account get-access-token --scope", "argument --scope: expected at least one argument"),
            ("account get-access-token --resource-type nope", "'nope' is not a valid value for '--resource-type'"),
            ("account get-access-token --output yaml", "--output"),
            ("account get-access-token --query length(@)", "--query"),
            ("account show --debug=1", "unrecognized arguments: --debug=1"),
        ]
        for (line, needle) in refusals {
            guard case .failure(let failure) = parse(line) else {
                Issue.record("accepted: \(line)")
                continue
            }
            #expect(failure.description.contains(needle), "\(line): \(failure.description)")
        }
    }

    @Test func otherCommandsAreOther() {
        #expect(parse("login --use-device-code") == .success(.other(["login"])))
        #expect(parse("account list-locations") == .success(.other(["account", "list-locations"])))  // account list is answered since #39
        #expect(AzCommandLine.parse(["--version"]) == .success(.other(["--version"])))
        guard case .success(.help) = parse("account get-access-token --help") else {
            Issue.record("no help")
            return
        }
    }
}

@Suite struct AzOutputTests {
    @Test func printsJSONAsPythonsDumpsSorted() {
        let value: JSONValue = [
            "tokenType": "Bearer", "accessToken": "a\"b\\c\u{1}é", "expires_on": 1_700_000_000, "expiresOn": "x",
            "user": ["type": "user", "name": "n"], "list": [], "empty": [:], "isDefault": true,
        ]
        let expected = """
            {
              "accessToken": "a\\"b\\\\c\\u0001é",
              "empty": {},
              "expiresOn": "x",
              "expires_on": 1700000000,
              "isDefault": true,
              "list": [],
              "tokenType": "Bearer",
              "user": {
                "name": "n",
                "type": "user"
              }
            }

            """
        #expect(AzOutput.json(value) == expected)
        #expect(AzOutput.json(["a", 1]) == "[\n  \"a\",\n  1\n]\n")
    }

    @Test func printsTSVAsKnack() {
        let value: JSONValue = ["b": 2, "a": "x", "c": true, "d": ["k": 1], "e": [1, 2]]
        #expect(AzOutput.tsv(value) == "x\t2\tTrue\t\t2\n")
        #expect(AzOutput.tsv(["Bearer", "x"]) == "Bearer\nx\n")
        #expect(AzOutput.tsv(true) == "true\n")
        #expect(AzOutput.tsv("token") == "token\n")
    }

    @Test func appliesTheQuery() {
        let value: JSONValue = ["accessToken": "t", "user": ["name": "n"], "expires_on": 5]
        let tsv = AzOutputOptions(format: .tsv, query: AzQuery("user.name"))
        #expect(AzOutput.render(value, tsv) == "n\n")
        let json = AzOutputOptions(format: .json, query: AzQuery("[accessToken, expires_on]"))
        #expect(AzOutput.render(value, json) == "[\n  \"t\",\n  5\n]\n")
        #expect(AzOutput.render(value, AzOutputOptions(query: AzQuery("missing"))) == "")
        #expect(AzOutput.render(value, AzOutputOptions(format: .none)) == "")
        for bad in ["", "a..b", "[]", "a[0]", "length(@)", "1a", "a || b"] { #expect(AzQuery(bad) == nil, "\(bad)") }
    }
}

@Suite struct AzResultsTests {
    @Test func getAccessTokenHasAzsKeys() {
        let plain = AzResults.accessToken(token: "t", expiresOn: 1_700_000_000, tokenType: "Bearer", requestedTenant: nil, accountTenant: "tid")
        #expect(plain.objectValue?.keys.sorted() == ["accessToken", "expiresOn", "expires_on", "subscription", "tenant", "tokenType"])
        #expect(plain["subscription"] == "tid" && plain["tenant"] == "tid")
        let pinned = AzResults.accessToken(token: "t", expiresOn: 0, tokenType: "Bearer", requestedTenant: "other", accountTenant: "tid")
        #expect(pinned["subscription"] == nil && pinned["tenant"] == "other")
    }

    @Test func scopesAsAzMakesThem() {
        var request = AzCommandLine.GetAccessToken()
        let cloud = AzCloud.forAuthority("https://login.microsoftonline.com/common")
        #expect(AzResults.scopes(request, cloud: cloud) == ["https://management.core.windows.net//.default"])
        request.resourceType = .msGraph
        #expect(AzResults.scopes(request, cloud: cloud) == ["https://graph.microsoft.com//.default"])
        request.resource = "https://vault.azure.net"
        #expect(AzResults.scopes(request, cloud: cloud) == ["https://vault.azure.net/.default"])
        request.scopes = ["s1", "s2"]
        #expect(AzResults.scopes(request, cloud: cloud) == ["s1", "s2"])
        #expect(AzCloud.forAuthority("https://login.microsoftonline.us/t").name == "AzureUSGovernment")
        #expect(AzCloud.forAuthority("https://login.chinacloudapi.cn/t").resource(.msGraph) == "https://microsoftgraph.chinacloudapi.cn")
        #expect(AzCloud.forAuthority("https://127.0.0.1:8443/t").name == "AzureCloud")
    }

    @Test func accountIsTenantLevel() {
        let account = AzResults.account(username: "u", tenantId: "tid", cloud: AzCloud.forAuthority(""))
        #expect(account["id"] == "tid" && account["name"] == "N/A(tenant level account)" && account["user"]?["type"] == "user")
        #expect(AzResults.names("TID", tenantId: "tid") && !AzResults.names("other", tenantId: "tid"))
    }

    @Test func claimsChallengeIsBase64OfJSON() {
        #expect(ClaimsChallenge.claims(fromChallenge: "eyJhIjoxfQ==") == "{\"a\":1}")
        #expect(ClaimsChallenge.claims(fromChallenge: "eyJhIjoxfQ") == "{\"a\":1}")
        #expect(ClaimsChallenge.claims(fromChallenge: "{\"a\":1}") == "{\"a\":1}")
        #expect(ClaimsChallenge.claims(fromChallenge: "%%%") == nil)
        #expect(ClaimsChallenge.claims(fromChallenge: "aGVsbG8=") == nil)
    }
}
