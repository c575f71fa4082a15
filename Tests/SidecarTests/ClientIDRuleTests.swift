import JSON
import JSONRPC
import Testing

@testable import Sidecar

/// Configuration mistakes refused at start-up: placeholders, non-GUID ids for Microsoft
/// authorities, authorities that are not URLs.
@Suite struct ClientIDRuleTests {
    private func resolve(_ params: JSONObject) throws(RPCError) -> Configuration {
        try ConfigurationOverrides(params: .object(params)).resolved()
    }

    private func refusal(_ params: JSONObject) -> RPCError? {
        do {
            _ = try resolve(params)
            return nil
        } catch {
            return error
        }
    }

    static let placeholders = [
        "YOUR-CLIENT-ID", "<app id>", "00000000-0000-0000-0000-000000000000", "your_client_id", "<guid>",
        "Your-App-Id", "app>",
    ]

    @Test(arguments: placeholders)
    func refusesPlaceholdersForEveryAuthority(clientId: String) throws {
        for authority in ["https://login.microsoftonline.com/common", "https://accounts.example.com", "http://localhost:8443/common"] {
            let error = try #require(refusal(["clientId": .string(clientId), "authority": .string(authority)]))
            #expect(error.code == -32602)
            #expect(error.data["member"] == "clientId")
            #expect(error.message.contains("placeholder") && error.message.contains("Register your application"))
        }
    }

    static let microsoftAuthorities = [
        "https://login.microsoftonline.com/common", "https://login.microsoftonline.us/contoso.onmicrosoft.com",
        "https://login.partner.microsoftonline.cn/organizations", "https://LOGIN.MICROSOFT.COM/consumers",
        "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin", "https://contoso.ciamlogin.com/",
    ]

    @Test(arguments: microsoftAuthorities)
    func refusesNonGUIDsForMicrosoftAuthorities(authority: String) throws {
        for clientId in ["abc", "family-app-2", "1111111-2222-3333-4444-555555555555", "11111111-2222-3333-4444-55555555555g"] {
            let error = try #require(refusal(["clientId": .string(clientId), "authority": .string(authority)]))
            #expect(error.data["member"] == "clientId")
            #expect(error.message.contains("not a GUID") && error.message.contains("Application (client) ID"))
        }
        let config = try resolve(["clientId": "00001111-AAAA-2222-bbbb-3333cccc4444", "authority": .string(authority)])
        #expect(config.clientId == "00001111-AAAA-2222-bbbb-3333cccc4444")
    }

    @Test func acceptsFreeFormIdsElsewhere() throws {
        for authority in ["https://accounts.example.com/realms/x", "http://localhost:8443/common", "https://login.example.org/common"] {
            for clientId in ["abc", "client", "family-app-2"] {
                #expect(try resolve(["clientId": .string(clientId), "authority": .string(authority)]).clientId == clientId)
            }
        }
    }

    @Test(arguments: [
        "login.microsoftonline.com/common", "common", "ftp://login.microsoftonline.com/common",
        "https://login.microsoftonline.com/<tenant>", "https://login.microsoftonline.com/{tenant-id}",
    ])
    func refusesAuthoritiesThatAreNotUsableURLs(authority: String) throws {
        let error = try #require(refusal(["clientId": "00001111-aaaa-2222-bbbb-3333cccc4444", "authority": .string(authority)]))
        #expect(error.code == -32602)
        #expect(error.data["member"] == "authority")
        #expect(error.message.contains("https://login.microsoftonline.com/") || error.message.contains("your tenant"))
    }
}
