import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's SSH certificates kept fresh: for each key of the configuration's
/// `sshCertificates` (and the runtime key once `ssh-cert` has made it), a certificate is asked
/// for through the agent's own socket, as a verb asks, and `KEY-cert.pub` rewritten when it
/// changed; the next round comes when a third of the certificate's life (at most 5 minutes) is
/// left, which is when the engine no longer serves it from the cache. With `sshAgent`, the key and
/// its certificate are also given to `$SSH_AUTH_SOCK` (`ssh-add -t` the certificate's remaining
/// life), the old identities removed first (`ssh-add -d KEY` while the file still holds the old one).
public final class SSHCertificateKeeper: Sendable {
    private let socketPath: String
    private let keys: [String]
    private let sshAgent: Bool
    private let logger: Logger
    /// How long to wait after a failed round before the next one, in seconds.
    static let retrySeconds: Int64 = 30
    /// How often a keeper without a key looks for the runtime key, in seconds.
    static let idleSeconds: Int64 = 60

    public init(socketPath: String, keys: [String], sshAgent: Bool, logger: Logger) {
        self.socketPath = socketPath
        self.keys = keys
        self.sshAgent = sshAgent
        self.logger = logger
    }

    /// The configured keys and, when it exists, the runtime key.
    func keysNow() -> [String] { SSHKeyFiles.kept(configured: keys).map(\.key) }

    /// Keeps the certificates on a thread of its own, for the agent's life.
    public func start() throws {
        try POSIX.startThread { [self] in
            var added: [String: String] = [:]  // key -> the certificate line given to ssh-agent
            for _ in 0..<100 where access(socketPath, F_OK) != 0 { usleep(50_000) }  // the agent starts listening
            while true {
                let wake = round(&added)
                let now = Int64(time(nil))
                if wake > now { sleep(UInt32(min(wake - now, 3600))) }
            }
        }
    }

    /// One pass over the keys; returns when (Unix seconds) the next one is due.
    func round(_ added: inout [String: String]) -> Int64 {
        let now = Int64(time(nil))
        let keys = keysNow()
        var wake = now + (keys.isEmpty ? Self.idleSeconds : 3600)  // the runtime key may come
        for key in keys {
            do {
                let (line, certificate) = try renew(key)
                if sshAgent, let old = added[key], old != line { _ = run(["ssh-add", "-q", "-d", key]) }  // the old identity
                try write(line, forKey: key)
                let validBefore = certificate["validBefore"]?.intValue ?? now
                let validAfter = certificate["validAfter"]?.intValue ?? now
                let margin = min(300, max(validBefore - validAfter, 0) / 3)
                wake = min(wake, max(now + 1, validBefore - margin + 1))
                if sshAgent, added[key] != line {
                    giveToSSHAgent(key, seconds: validBefore - Int64(time(nil)))
                    added[key] = line
                }
            } catch {
                logger.warning("cannot renew the SSH certificate", metadata: ["key": "\(key)", "error": "\(error)"])
                wake = min(wake, now + Self.retrySeconds)
            }
        }
        return wake
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The key's certificate from the engine.
    func renew(_ key: String) throws(Failure) -> (line: String, certificate: JSONValue) {
        let publicKey: String
        do { publicKey = try SSHKeyFiles.publicKeyLine(ofKey: key) } catch { throw Failure(description: error.description) }
        guard let fd = AgentConnection.connect(to: socketPath) else { throw Failure(description: "the agent socket does not answer") }
        let client = JSONRPCClient(fd: fd)
        defer { client.close() }
        let outcome: Result<JSONValue, RPCError>
        do {
            _ = try client.call("initialize", params: [:], timeoutSeconds: 30)
            outcome = try client.call(
                "acquireTokenSilent", params: ["sshCertificate": ["publicKey": .string(publicKey)]], timeoutSeconds: 120)
        } catch {
            throw Failure(description: "the agent socket: \(error)")
        }
        let result: JSONValue
        switch outcome {
        case .success(let value): result = value
        case .failure(let error): throw Failure(description: error.message)
        }
        guard let certificate = result["sshCertificate"], let line = certificate["line"]?.stringValue else {
            throw Failure(description: "the answer carries no SSH certificate")
        }
        return (line, certificate)
    }

    /// `KEY-cert.pub`, rewritten when the certificate changed.
    private func write(_ line: String, forKey key: String) throws(Failure) {
        let path = SSHKeyFiles.certificatePath(forKey: key)
        do {
            if try SSHKeyFiles.writeCertificate(line, to: path) {
                logger.notice("wrote the SSH certificate", metadata: ["certificate": "\(path)"])
            }
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// `ssh-add -t SECONDS KEY`: the key and `KEY-cert.pub`, for the certificate's remaining life.
    private func giveToSSHAgent(_ key: String, seconds: Int64) {
        guard seconds > 0 else { return }
        if run(["ssh-add", "-q", "-t", String(seconds), key]) != 0 {
            logger.warning("ssh-add failed", metadata: ["key": "\(key)"])
        }
    }

    /// Runs a helper with stdout on stderr; its exit status (-1 when it did not start).
    private func run(_ arguments: [String]) -> Int32 {
        guard case .success(let pid) = POSIX.spawn(arguments, stdout: STDERR_FILENO, newSession: false) else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }
}
