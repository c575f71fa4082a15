import AuthCore
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The files of SSH certificates: a key's public half (`KEY.pub`), its certificate
/// (`KEY-cert.pub`, the name `ssh` and `ssh-add` look for beside `KEY`, written atomically,
/// 0644), and the runtime key pair made once under `$XDG_RUNTIME_DIR/auth-sidecar/ssh/` (0700).
public enum SSHKeyFiles {
    /// Why a key or certificate file cannot be used; one line.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The runtime key's path (`$XDG_RUNTIME_DIR/auth-sidecar/ssh/id_rsa`), `nil` without a runtime directory.
    public static func runtimeKeyPath(variable: (String) -> String? = ProcessEnvironment.value) -> String? {
        guard let base = variable("XDG_RUNTIME_DIR"), base.hasPrefix("/") else { return nil }
        return base + "/auth-sidecar/ssh/id_rsa"
    }

    /// The certificate file beside `key`: `KEY-cert.pub`.
    public static func certificatePath(forKey key: String) -> String { key + "-cert.pub" }

    /// The runtime key, made (RSA 3072, private 0600, directories 0700) when neither of its
    /// files exists. Fails closed: a directory that is not this user's own and private, or a
    /// key pair with one half missing, is refused, never replaced.
    public static func runtimeKey() throws(Failure) -> String {
        guard let path = runtimeKeyPath() else { throw Failure(description: "XDG_RUNTIME_DIR is not set: give --key KEY") }
        let directory = String(path.dropLast("/id_rsa".count))
        for dir in [String(directory.dropLast("/ssh".count)), directory] {
            if mkdir(dir, 0o700) != 0, errno != EEXIST { throw Failure(description: "cannot make \(dir): \(POSIX.lastErrorString)") }
            var info = stat()
            guard lstat(dir, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
                throw Failure(description: "\(dir) is not a private directory of this user's (chmod 700 it, or give --key KEY)")
            }
        }
        switch (access(path, F_OK) == 0, access(path + ".pub", F_OK) == 0) {
        case (true, true): return path  // read, with the own-file rule, by its users
        case (false, false): break
        default: throw Failure(description: "\(path) or \(path).pub is missing: remove the other to have a new key pair made")
        }
        let pair: (privateKeyPEM: String, publicKey: OpenSSHPublicKey)
        do {
            pair = try SSHKeyGenerator.rsa()
        } catch {
            throw Failure(description: "cannot make an RSA key: \(error)")
        }
        try write(Array(pair.privateKeyPEM.utf8), to: path, mode: 0o600)
        try write(Array((pair.publicKey.line(comment: "auth-sidecar") + "\n").utf8), to: path + ".pub", mode: 0o644)
        return path
    }

    /// The OpenSSH public key line of the private key `key` (read from `KEY.pub`).
    public static func publicKeyLine(ofKey key: String) throws(Failure) -> String {
        let path = key + ".pub"
        let bytes: [UInt8]?
        do {
            bytes = try POSIX.readOwnFile(path, limit: 1 << 16, followingLink: true)
        } catch {
            throw Failure(description: "cannot read \(path): \(error)")
        }
        guard let bytes else { throw Failure(description: "\(path) does not exist (the public half of \(key))") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The certificate line in `path`, `nil` when there is none to read.
    public static func certificateLine(at path: String) -> String? {
        guard let bytes = (try? POSIX.readOwnFile(path, limit: 1 << 16, followingLink: true)) ?? nil else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

    /// A key the agent keeps a certificate for, and what its certificate file says.
    public struct Kept: Sendable, Equatable {
        public var key: String
        public var certificate: String
        public var principals: [String] = []
        /// `nil`: no certificate (yet) in the file.
        public var validBefore: Int64?
    }

    /// The keys the agent keeps (`configured`, then the runtime key when it exists) and their certificates.
    public static func kept(configured: [String]) -> [Kept] {
        var keys = configured
        if let runtime = runtimeKeyPath(), access(runtime + ".pub", F_OK) == 0, !keys.contains(runtime) { keys.append(runtime) }
        return keys.map { key in
            let path = certificatePath(forKey: key)
            var item = Kept(key: key, certificate: path)
            if let line = certificateLine(at: path), let blob = line.split(separator: " ").dropFirst().first,
                let certificate = OpenSSHCertificate(base64: String(blob))
            {
                item.principals = certificate.principals
                item.validBefore = certificate.validBefore
            }
            return item
        }
    }

    /// Writes the certificate line to `path` (0644, atomically) unless it holds it already.
    /// - Returns: whether the file was written.
    @discardableResult
    public static func writeCertificate(_ line: String, to path: String) throws(Failure) -> Bool {
        guard certificateLine(at: path) != line else { return false }
        try write(Array((line + "\n").utf8), to: path, mode: 0o644)
        return true
    }

    /// `bytes` to `path` by a temporary file beside it renamed over it.
    private static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        let temporary = POSIX.temporaryPath(beside: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "cannot write \(temporary): \(POSIX.lastErrorString)") }
        let written = fchmod(fd, mode) == 0 && POSIX.writeAll(fd, bytes) && fsync(fd) == 0
        let closed = close(fd) == 0
        guard written, closed, rename(temporary, path) == 0 else {
            let reason = POSIX.lastErrorString
            unlink(temporary)
            throw Failure(description: "cannot write \(path): \(reason)")
        }
    }
}
