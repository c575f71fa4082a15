import AuthCore
import JSON
import JSONRPC

/// What an `ssh-cert` request asks for: the `sshCertificate` parameter's key, and the scope,
/// `sshCertScope` when configured, else the PAS scope of the authority's cloud (as `az ssh`
/// asks for it). Another cloud, or a custom authority, must configure it.
enum SSHCertScope {
    /// The PAS scope of each cloud, by authority host.
    static let byHost: [String: String] = {
        let pairs: [(hosts: [String], scope: String)] = [
            (
                ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"],
                "https://pas.windows.net/CheckMyAccess/Linux/.default"
            ),
            (["login.microsoftonline.us", "login.usgovcloudapi.net"], "https://pasff.usgovcloudapi.net/CheckMyAccess/Linux/.default"),
            (["login.chinacloudapi.cn", "login.partner.microsoftonline.cn"], "https://pas.chinacloudapi.cn/CheckMyAccess/Linux/.default"),
        ]
        return Dictionary(uniqueKeysWithValues: pairs.flatMap { pair in pair.hosts.map { ($0, pair.scope) } })
    }()

    /// The scope of an `ssh-cert` request to `authority`.
    static func scope(configured: String?, authority: Authority) throws(RPCError) -> String {
        if let configured, !configured.isEmpty { return configured }
        guard let scope = byHost[authority.host.lowercased()] else {
            throw .invalidParams(
                "no SSH certificate scope is known for the authority host \(authority.host): configure sshCertScope",
                member: "sshCertScope")
        }
        return scope
    }

    /// `sshCertificates: [{"key": PATH}]`: the private keys (absolute paths) whose certificates
    /// the agent keeps.
    static func keptKeys(_ p: Params) throws(RPCError) -> [String]? {
        guard let value: JSONValue = try p.optional("sshCertificates"), !value.isNull else { return nil }
        guard let list = value.arrayValue else {
            throw .invalidParams("sshCertificates must be an array of {\"key\": PATH}", member: "sshCertificates")
        }
        var keys: [String] = []
        for (index, item) in list.enumerated() {
            let entry = try Params(item, allowed: ["key"], path: "sshCertificates[\(index)]")
            guard let key: String = try entry.optional("key"), key.hasPrefix("/") else {
                throw .invalidParams("sshCertificates[\(index)].key must be an absolute path", member: "sshCertificates[\(index)].key")
            }
            keys.append(key)
        }
        return keys
    }

    /// The `sshCertificate: {publicKey}` parameter's key, if present (an RSA OpenSSH public key).
    static func key(_ p: Params) throws(RPCError) -> SSHKeyBinding? {
        guard let nested = try p.nested("sshCertificate", allowed: ["publicKey"]) else { return nil }
        guard let text: String = try nested.optional("publicKey") else {
            throw .invalidParams("missing member 'sshCertificate.publicKey'", member: "sshCertificate.publicKey")
        }
        do {
            return try SSHKeyBinding(openSSH: text)
        } catch {
            throw .invalidParams("sshCertificate.publicKey: \(error.description)", member: "sshCertificate.publicKey")
        }
    }
}
