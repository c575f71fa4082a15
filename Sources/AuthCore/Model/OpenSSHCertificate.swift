/// What an OpenSSH RSA user certificate (`ssh-rsa-cert-v01@openssh.com`, PROTOCOL.certkeys)
/// says about itself: the fields a user is shown and renewal is timed by. Its signature is
/// sshd's to check, not ours.
public struct OpenSSHCertificate: Sendable, Hashable {
    /// The key the certificate certifies.
    public let publicKey: OpenSSHPublicKey
    public let keyId: String
    public let principals: [String]
    /// Unix seconds.
    public let validAfter: Int64
    /// Unix seconds.
    public let validBefore: Int64

    /// Reads the certificate from its base64 (what the token endpoint sends as the token).
    public init?(base64 text: String) {
        guard let blob = Base64URL.decode(text) else { return nil }
        var reader = SSHBlobReader(bytes: blob[...])
        guard let type = reader.string(), type.elementsEqual(SSHKeyBinding.certificateType.utf8),
            reader.string() != nil,  // nonce
            let e = reader.string(), let n = reader.string(),
            reader.uint(8) != nil,  // serial
            reader.uint(4) == 1,  // a user certificate
            let keyId = reader.string(), let packed = reader.string(),
            let after = reader.uint(8), let before = reader.uint(8)
        else { return nil }
        var names = SSHBlobReader(bytes: packed)
        var principals: [String] = []
        while !names.bytes.isEmpty {
            guard let name = names.string() else { return nil }
            principals.append(String(decoding: name, as: UTF8.self))
        }
        publicKey = OpenSSHPublicKey(modulus: Array(n), exponent: Array(e))
        self.keyId = String(decoding: keyId, as: UTF8.self)
        self.principals = principals
        validAfter = Int64(clamping: after)
        validBefore = Int64(clamping: before)
    }
}
