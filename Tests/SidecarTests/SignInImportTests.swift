import Synchronization
import Testing

@testable import Sidecar
@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// `login --import`'s sources: Azure CLI's file where `AZURE_CONFIG_DIR` says, azure-identity's
/// item only with a D-Bus session, each problem named; the configured authority decides what moves.
@Suite struct SignInImportTests {
    struct FakeItem: SecretServiceAccess {
        let secret: Result<String?, SecretServiceFailure>
        func lookup(schema: String, attributes: [String: String]) -> Result<String?, SecretServiceFailure> {
            guard schema == "msal.cache.nocae", attributes == ["MsalClientID": "Microsoft.Developer.IdentityService"] else {
                return .success(nil)
            }
            return secret
        }
        func store(schema: String, attributes: [String: String], label: String, secret: String) -> Result<Void, SecretServiceFailure> {
            Issue.record("an import never writes")
            return .failure(.serviceError("no"))
        }
        func defaultCollectionUnlocked() -> Result<Void, SecretServiceFailure> { .success(()) }
    }

    static let cache = """
        {"RefreshToken": {"a.t-login.microsoftonline.com-refreshtoken-04b07795-8ddb-461a-bbee-02f9e1bf7b46--": {"home_account_id": "a.t", "environment": "login.microsoftonline.com", "credential_type": "RefreshToken", "client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46", "secret": "rt", "family_id": "1"}},
         "Account": {"a.t-login.microsoftonline.com-t": {"home_account_id": "a.t", "environment": "login.microsoftonline.com", "realm": "t", "local_account_id": "l", "username": "alice@contoso.com", "authority_type": "MSSTS"}}}
        """

    func configuration(_ authority: String = "https://login.microsoftonline.com/organizations") -> Configuration {
        var configuration = Configuration(clientId: "00001111-aaaa-2222-bbbb-3333cccc4444")
        configuration.authority = authority
        return configuration
    }

    @Test func theSourcesAndTheirProblems() throws {
        var template = Array("/tmp/signin-import-XXXXXX".utf8CString)
        let dir = try #require(template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }.map { String(cString: $0) })
        defer { _ = unlink(dir + "/msal_token_cache.json") }
        defer { _ = rmdir(dir) }
        #expect(SignInImport.azureCLICachePath(environment: ["HOME": "/h"]) == "/h/.azure/msal_token_cache.json")
        #expect(SignInImport.azureCLICachePath(environment: ["HOME": "/h", "AZURE_CONFIG_DIR": dir]) == dir + "/msal_token_cache.json")
        let file = fopen(dir + "/msal_token_cache.json", "w")
        fputs(Self.cache, file)
        fclose(file)
        let env = ["AZURE_CONFIG_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/bus"]

        let both = SignInImport.scan(configuration(), environment: env, secretService: FakeItem(secret: .success(Self.cache)))
        #expect(both.found.map(\.source) == ["Azure CLI (\(dir)/msal_token_cache.json)", "azure-identity (Secret Service item msal.cache.nocae)"])
        #expect(both.usernames == ["alice@contoso.com"] && both.problems.isEmpty)

        let noBus = SignInImport.scan(configuration(), environment: ["AZURE_CONFIG_DIR": dir], secretService: FakeItem(secret: .success("{")))
        #expect(noBus.found.count == 1 && noBus.problems.isEmpty)  // the item is not even asked for

        let broken = SignInImport.scan(configuration(), environment: env, secretService: FakeItem(secret: .success("[1]")))
        #expect(
            broken.problems == [
                "azure-identity (Secret Service item msal.cache.nocae): not an MSAL token cache (the top level is a JSON array, not an object); left untouched"
            ])
        let locked = SignInImport.scan(configuration(), environment: env, secretService: FakeItem(secret: .failure(.timedOut(.seconds(3)))))
        #expect(locked.problems.first?.contains("no answer from the Secret Service within 3 s") == true)

        let elsewhere = SignInImport.scan(configuration("https://login.microsoftonline.us/organizations"), environment: env, secretService: nil)
        #expect(elsewhere.found.isEmpty && elsewhere.problems.isEmpty)
    }
}
