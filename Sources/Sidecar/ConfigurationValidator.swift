import AuthSeams
import JSONRPC
import TokenCache

/// Checks a configuration: HTTPS everywhere except loopback hosts
/// (`URLParts.isSecureOrLoopback`), no placeholder authority, a redirect URI the loopback
/// listener can serve (`RedirectURI`, the listener's own parser: `http://localhost` or
/// `http://127.0.0.1`), and the client id (``ClientIDRule``).
enum ConfigurationValidator {
    static func validate(_ config: Configuration) throws(RPCError) {
        try requireAuthority(config.authority)
        try ClientIDRule.check(config.clientId, authority: config.authority)
        try requireSecure(config.graphEndpoint, member: "graphEndpoint")
        if let redirect = config.postLogoutRedirectUri { try requireSecure(redirect, member: "postLogoutRedirectUri") }
        do {
            if config.redirectUri != Configuration.defaultRedirectUri { _ = try RedirectURI(parsing: config.redirectUri) }
        } catch {
            throw .invalidParams(
                "redirectUri must be an http loopback URL the listener can serve, such as http://localhost "
                    + "or http://127.0.0.1:PORT/path (\(error))", member: "redirectUri")
        }
        if case .file(let path, let keyFile, let keyCommand) = config.cache {
            guard path.hasPrefix("/") else { throw .invalidParams("cache.path must be an absolute path", member: "cache.path") }
            if let keyFile, !keyFile.hasPrefix("/") {
                throw .invalidParams("cache.encryption.keyFile must be an absolute path", member: "cache.encryption.keyFile")
            }
            if config.cacheProtection == .only(.plaintext), keyFile != nil || keyCommand != nil {
                throw .invalidParams(
                    "cacheProtection \"plaintext\" leaves the cache unencrypted: remove cache.encryption, or choose another cacheProtection",
                    member: "cacheProtection")
            }
            if let keyCommand, keyCommand.first?.isEmpty ?? true {
                throw .invalidParams("cache.encryption.keyCommand must name a program", member: "cache.encryption.keyCommand")
            }
        }
        try requireRange(config.httpTimeoutSeconds, Configuration.httpTimeoutRange, member: "httpTimeoutSeconds")
        try requireRange(config.interactiveTimeoutSeconds, Configuration.interactiveTimeoutRange, member: "interactiveTimeoutSeconds")
        try requireRange(
            config.secretServiceKeyCacheSeconds, Configuration.secretServiceKeyCacheRange, member: "secretServiceKeyCacheSeconds")
        for host in config.knownAuthorities where host.isEmpty || host.contains("/") && URLParts(host) == nil {
            throw .invalidParams("knownAuthorities must list host names or URLs", member: "knownAuthorities")
        }
    }

    private static func requireRange(_ value: Int, _ range: ClosedRange<Int>, member: String) throws(RPCError) {
        guard range.contains(value) else {
            throw .invalidParams("\(member) must be \(range.lowerBound) to \(range.upperBound) seconds, not \(value)", member: member)
        }
    }

    /// An absolute http(s) URL with nothing left to fill in (`<tenant>`, `{tenant}`).
    private static func requireAuthority(_ authority: String) throws(RPCError) {
        let example =
            "such as https://login.microsoftonline.com/common, https://login.microsoftonline.com/{your tenant id} "
            + "or an OpenID issuer URL"
        guard URLParts(authority) != nil else {
            throw .invalidParams("authority must be an absolute https URL \(example), not '\(authority)'", member: "authority")
        }
        guard !authority.utf8.contains(where: { [UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "{"), UInt8(ascii: "}")].contains($0) }) else {
            throw .invalidParams(
                "authority '\(authority)' has a placeholder left in it: replace it with your tenant "
                    + "(its id, its domain, or common/organizations/consumers)", member: "authority")
        }
        try requireSecure(authority, member: "authority")
    }

    private static func requireSecure(_ text: String, member: String) throws(RPCError) {
        guard let url = URLParts(text) else {
            throw .invalidParams("\(member) must be an absolute URL, not '\(text)'", member: member)
        }
        guard url.isSecureOrLoopback else {
            throw .invalidParams("\(member) must use https (http is allowed only for loopback hosts)", member: member)
        }
    }
}
