import CryptoExtras
import FoundationEssentials

/// A new RSA key pair for SSH certificates (Entra ID signs RSA keys only).
public enum SSHKeyGenerator {
    /// A 3072-bit RSA key: the private key as PEM (PKCS #1, which `ssh` and `ssh-add` read) and
    /// the public key.
    public static func rsa() throws -> (privateKeyPEM: String, publicKey: OpenSSHPublicKey) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits3072)
        let numbers = try key.publicKey.getKeyPrimitives()
        return (key.pemRepresentation, OpenSSHPublicKey(modulus: Array(numbers.modulus), exponent: Array(numbers.publicExponent)))
    }
}
