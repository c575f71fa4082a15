/// An RSA public key in OpenSSH's format: the line `ssh-rsa <base64> [comment]` of a `.pub`
/// file, whose blob is the strings `ssh-rsa`, the exponent and the modulus (RFC 4253 6.6,
/// mpints). The one reader and writer of that format.
public struct OpenSSHPublicKey: Sendable, Hashable {
    /// Big-endian, without leading zero bytes.
    public let modulus: [UInt8]
    public let exponent: [UInt8]

    public init(modulus: [UInt8], exponent: [UInt8]) {
        self.modulus = Array(modulus.drop { $0 == 0 })
        self.exponent = Array(exponent.drop { $0 == 0 })
    }

    /// Reads a `.pub` line; any key type but `ssh-rsa` is refused by name.
    public init(line: String) throws(OpenSSHKeyError) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard words.count >= 2 else { throw .malformed("not an OpenSSH public key line ('TYPE BASE64 [comment]')") }
        let type = String(words[0])
        guard type == "ssh-rsa" else { throw .notRSA(String(type.prefix(64))) }
        guard let blob = Base64URL.decode(words[1]) else { throw .malformed("the key is not base64") }
        var reader = SSHBlobReader(bytes: blob[...])
        guard let name = reader.string(), name.elementsEqual("ssh-rsa".utf8) else {
            throw .malformed("the key's blob does not say ssh-rsa")
        }
        guard let e = reader.string(), let n = reader.string(), reader.bytes.isEmpty else {
            throw .malformed("the key's blob is not an RSA public key")
        }
        self.init(modulus: Array(n), exponent: Array(e))
        guard modulus.count * 8 >= 2048, !exponent.isEmpty else { throw .malformed("the RSA key is shorter than 2048 bits") }
    }

    /// The `.pub` line: `ssh-rsa <base64> comment`.
    public func line(comment: String) -> String {
        var blob: [UInt8] = []
        Self.append(Array("ssh-rsa".utf8), to: &blob)
        Self.append(Self.mpint(exponent), to: &blob)
        Self.append(Self.mpint(modulus), to: &blob)
        return "ssh-rsa " + Self.base64(blob) + (comment.isEmpty ? "" : " " + comment)
    }

    /// Standard base64 with padding (the `.pub` format's).
    static func base64(_ bytes: [UInt8]) -> String {
        var text = Base64URL.encode(bytes).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }
        while text.count % 4 != 0 { text.append("=") }
        return String(text)
    }

    private static func mpint(_ magnitude: [UInt8]) -> [UInt8] {
        magnitude.first.map { $0 & 0x80 != 0 } == true ? [0] + magnitude : magnitude
    }

    private static func append(_ bytes: [UInt8], to blob: inout [UInt8]) {
        let count = UInt32(bytes.count)
        blob += [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
        blob += bytes
    }

}

/// Reads the SSH wire format (RFC 4251 5): length-prefixed strings, 32- and 64-bit numbers.
struct SSHBlobReader {
    var bytes: ArraySlice<UInt8>

    mutating func uint(_ size: Int) -> UInt64? {
        guard bytes.count >= size else { return nil }
        defer { bytes = bytes.dropFirst(size) }
        return bytes.prefix(size).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func string() -> ArraySlice<UInt8>? {
        guard bytes.count >= 4 else { return nil }
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        bytes = bytes.dropFirst(4)
        guard length <= bytes.count else { return nil }
        defer { bytes = bytes.dropFirst(length) }
        return bytes.prefix(length)
    }
}

/// Why a public key cannot be bound to an SSH certificate.
public enum OpenSSHKeyError: Error, Sendable, CustomStringConvertible {
    /// A key of another type (`ssh-ed25519`, `ecdsa-sha2-nistp256`...): Entra ID signs RSA only.
    case notRSA(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .notRSA(let type): "the key is \(type), not ssh-rsa: Entra ID signs certificates for RSA keys only"
        case .malformed(let why): why
        }
    }
}
