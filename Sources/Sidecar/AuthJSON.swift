import AuthCore
import AuthSeams
import JSON
import JSONRPC
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The protocol's JSON shapes for auth values.
public enum AuthJSON {
    /// - Parameter claimsStandIn: a string put where the claims go, for text that puts the
    ///   claims in afterwards (``SilentReplyCache``); `nil`: the claims, parsed.
    static func account(_ account: Account?, claimsStandIn: String? = nil) -> JSONValue {
        guard let account else { return .null }
        var object: JSONObject = [
            "homeAccountId": .string(account.homeAccountId), "localAccountId": .string(account.localAccountId),
            "environment": .string(account.environment), "tenantId": .string(account.tenantId),
            "username": .string(account.username),
        ]
        if let name = account.name { object["name"] = .string(name) }
        if let claims = account.idTokenClaims { object["idTokenClaims"] = claimsStandIn.map(JSONValue.string) ?? .object(claims.object) }
        return .object(object)
    }

    /// An account of a listing (`getAccounts`): the Account plus `tenants` and `isCurrent`.
    static func listedAccount(_ listed: ListedAccount) -> JSONValue {
        guard case .object(var object) = account(listed.account) else { return .null }
        object["tenants"] = .array(listed.tenants.map(JSONValue.string))
        object["isCurrent"] = .bool(listed.isCurrent)
        return .object(object)
    }

    static func tokenResult(_ result: TokenResult, claimsStandIn: String? = nil) -> JSONValue {
        var object: JSONObject = [
            "accessToken": .string(result.accessToken), "tokenType": .string(result.tokenType),
            "expiresOn": .int(result.expiresOn), "scopes": JSONValue(result.scopes),
            "account": account(result.account, claimsStandIn: claimsStandIn),
        ]
        if let idToken = result.idToken { object["idToken"] = .string(idToken) }
        object["tenantId"] = .string(result.tenantId)
        object["authority"] = .string(result.authority)
        object["correlationId"] = .string(result.correlationId)
        object["fromCache"] = .bool(result.fromCache)
        if result.tokenType == SSHKeyBinding.tokenType, let certificate = OpenSSHCertificate(base64: result.accessToken) {
            object["sshCertificate"] = [
                "line": .string(SSHKeyBinding.certificateLine(result.accessToken)), "keyId": .string(certificate.keyId),
                "principals": JSONValue(certificate.principals), "validAfter": .int(certificate.validAfter),
                "validBefore": .int(certificate.validBefore),
            ]
        }
        return .object(object)
    }

    /// `{homeAccountId}` or `{username}` at `key`, if present.
    static func accountReference(_ params: Params, key: String = "account") throws(RPCError) -> AccountReference? {
        guard let reference = try params.nested(key, allowed: ["homeAccountId", "username"]) else { return nil }
        let id: String? = try reference.optional("homeAccountId")
        let name: String? = try reference.optional("username")
        switch (id, name) {
        case (let id?, nil) where !id.isEmpty: return .homeAccountId(id)
        case (nil, let name?) where !name.isEmpty: return .username(name)
        case (.some, .some): throw .invalidParams("'\(key)' must have homeAccountId or username, not both", member: key)
        default: throw .invalidParams("'\(key)' must have a non-empty homeAccountId or username", member: key)
        }
    }

    /// An account reference as params carry it: `{homeAccountId}` or `{username}`.
    static func json(_ reference: AccountReference) -> JSONValue {
        switch reference {
        case .homeAccountId(let id): ["homeAccountId": .string(id)]
        case .username(let name): ["username": .string(name)]
        }
    }

    /// The request's `correlationId` (sent to the service as client-request-id), else a new one.
    static func correlationId(_ params: Params) throws(RPCError) -> String {
        try givenCorrelationId(params) ?? correlationId()
    }

    /// The request's `correlationId`, checked, if it names one.
    static func givenCorrelationId(_ params: Params) throws(RPCError) -> String? {
        guard let given: String = try params.optional("correlationId") else { return nil }
        guard !given.isEmpty, given.count <= 128, given.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .invalidParams("'correlationId' must be a GUID-like string of letters, digits and dashes", member: "correlationId")
        }
        return given
    }

    /// A per-request `authority`: an absolute https URL (http only for loopback hosts), an
    /// authority of the configured kind whose tenant is a tenant (``TenantName``).
    static func authority(_ params: Params, of configuration: ClientConfiguration) throws(RPCError) -> String? {
        try authority(try authorityURL(params), of: configuration)
    }

    /// The request's `authority`, if it names one: an absolute https URL (http only for
    /// loopback hosts), not yet checked against the configured authority.
    static func authorityURL(_ params: Params) throws(RPCError) -> String? {
        guard let text: String = try params.optional("authority") else { return nil }
        guard let url = URLParts(text), url.isSecureOrLoopback else {
            throw .invalidParams("'authority' must be an https URL (http only for loopback hosts)", member: "authority")
        }
        return text
    }

    /// `text` (an ``authorityURL(_:)``) as the flows will parse it: an authority of the
    /// configured kind whose tenant is a tenant (``TenantName``).
    static func authority(_ text: String?, of configuration: ClientConfiguration) throws(RPCError) -> String? {
        guard let text else { return nil }
        // Parsed as the flows will (a tenant `..` or a dot segment refused here, -32602).
        do throws(AuthError) { _ = try configuration.authority(for: text) } catch {
            throw .invalidParams("'authority': \(error.message)", member: "authority")
        }
        return text
    }

    /// A fresh correlation id (a random UUID, version 4, lower-case). The bits come from the
    /// kernel's generator 512 bytes at a time (``RandomPool``): `UUID()` opens `/dev/urandom` on
    /// every call, and the standard library's generator makes a system call per 8 bytes, costs
    /// paid on every request. A pthread mutex, which ThreadSanitizer sees (``PthreadMutex``):
    /// requests answered at once on several threads take ids here together.
    private static let randomPool = PthreadMutex(RandomPool())

    /// A fresh version-4 UUID from the pooled random bytes (the engine's correlation ids).
    public static func correlationId() -> String {
        var bytes = randomPool.withLock { $0.take(16) }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Random bytes from the kernel (`arc4random_buf`, a `getrandom` call), fetched ``size`` bytes
/// at a time and handed out once each. For correlation ids, which are trace ids, not secrets.
struct RandomPool {
    /// 32 correlation ids a call. The kernel takes about 1 µs for 512 bytes and 7 µs for 4 KiB
    /// (the size until 2026-11-26, paid by a fresh process's first request), so a pipelined
    /// request's share is the same either way.
    static let size = 512
    private var bytes = [UInt8](repeating: 0, count: Self.size)
    private var used = Self.size

    mutating func take(_ count: Int) -> [UInt8] {
        if used + count > bytes.count {
            bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { arc4random_buf(base, $0.count) } }
            used = 0
        }
        defer { used += count }
        return Array(bytes[used..<(used + count)])
    }
}
