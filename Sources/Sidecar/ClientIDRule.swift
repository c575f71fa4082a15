import AuthCore
import AuthSeams
import JSONRPC

/// What a client id may be, checked with the configuration so a mistake fails at start-up
/// (or at `initialize`) with its fix, instead of later as a network or service error.
///
/// - Never a placeholder copied from a sample (`YOUR-CLIENT-ID`, `<app id>`, the all-zero GUID).
/// - A GUID, the application (client) ID of an app registration, when the authority is one of
///   Microsoft's (Entra ID and its sovereign clouds, B2C, External ID). Other OpenID providers
///   (and the tests' mock) use free-form ids such as `my-app`.
enum ClientIDRule {
    /// Where the README explains where a client id comes from.
    static let registrationHelp = "see \"Register your application\" in the README"

    /// Throws -32602 naming `clientId` when `clientId` cannot be right for `authority`.
    static func check(_ clientId: String, authority: String) throws(RPCError) {
        if isPlaceholder(clientId) {
            throw .invalidParams(
                "clientId '\(quoted(clientId))' is a placeholder: set clientId to your application's client ID "
                    + "(Entra admin center > App registrations > Application (client) ID); \(registrationHelp)",
                member: "clientId")
        }
        if let host = URLParts(authority)?.host, isMicrosoftHost(host), !isGUID(clientId) {
            throw .invalidParams(
                "clientId '\(quoted(clientId))' is not a GUID: \(host) needs the Application (client) ID of an app "
                    + "registration, such as 00001111-aaaa-2222-bbbb-3333cccc4444; \(registrationHelp)",
                member: "clientId")
        }
    }

    /// A sample's stand-in for a real id.
    /// On the bytes: `String.contains(String)` (swift-string-processing) compares Characters
    /// and builds its searcher's metadata at run time, which cost a fresh process more than the
    /// rest of its configuration checks together.
    static func isPlaceholder(_ clientId: String) -> Bool {
        clientId == "00000000-0000-0000-0000-000000000000"
            || clientId.utf8.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }
            || contains(Array(clientId.lowercased().utf8), Array("your".utf8))
    }

    /// Whether `needle` occurs in `haystack`, byte for byte.
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...haystack.count - needle.count).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// `8-4-4-4-12` hexadecimal digits.
    static func isGUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// Microsoft's sign-in hosts: the public and sovereign clouds, B2C and External ID (CIAM).
    static func isMicrosoftHost(_ host: String) -> Bool {
        AuthorityTrust.wellKnownHosts.contains(host) || host.hasSuffix(".b2clogin.com") || host.hasSuffix(".ciamlogin.com")
    }

    /// `text` cut to a length a one-line message can carry.
    private static func quoted(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
}
