import AuthCore
import JSON
import JSONRPC

/// The protocol's JSON shapes for auth values.
enum AuthJSON {
    static func account(_ account: Account?) -> JSONValue {
        guard let account else { return .null }
        var object: JSONObject = [
            "homeAccountId": .string(account.homeAccountId), "localAccountId": .string(account.localAccountId),
            "environment": .string(account.environment), "tenantId": .string(account.tenantId),
            "username": .string(account.username),
        ]
        if let name = account.name { object["name"] = .string(name) }
        if let claims = account.idTokenClaims { object["idTokenClaims"] = .object(claims) }
        return .object(object)
    }

    static func tokenResult(_ result: TokenResult) -> JSONValue {
        var object: JSONObject = [
            "accessToken": .string(result.accessToken), "tokenType": .string(result.tokenType),
            "expiresOn": .int(result.expiresOn), "scopes": JSONValue(result.scopes),
            "account": account(result.account),
        ]
        if let idToken = result.idToken { object["idToken"] = .string(idToken) }
        object["tenantId"] = .string(result.tenantId)
        object["authority"] = .string(result.authority)
        object["correlationId"] = .string(result.correlationId)
        object["fromCache"] = .bool(result.fromCache)
        return .object(object)
    }

    /// `{homeAccountId}` or `{username}` at `key`, if present.
    static func accountReference(_ params: Params, key: String = "account") throws(RPCError) -> AccountReference? {
        guard let reference = try params.nested(key, allowed: ["homeAccountId", "username"]) else { return nil }
        if let id: String = try reference.optional("homeAccountId") { return .homeAccountId(id) }
        if let name: String = try reference.optional("username") { return .username(name) }
        throw .invalidParams("'\(key)' must have homeAccountId or username", member: key)
    }

    /// A fresh correlation id (a random UUID, version 4).
    static func correlationId() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)]
        }
        return groups.joined(separator: "-")
    }
}
