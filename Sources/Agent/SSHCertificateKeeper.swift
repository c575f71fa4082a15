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
/// of the agent's own engine, called directly (``AgentServer/ownEngine()``, a
/// ``LocalEngineClient``: the typed request a verb sends, no socket), and `KEY-cert.pub` rewritten when it
/// changed; the next round comes when a third of the certificate's life (at most 5 minutes) is
/// left, which is when the engine no longer serves it from the cache. With `sshAgent`, the key and
/// its certificate are also given to `$SSH_AUTH_SOCK` (`ssh-add -t` the certificate's remaining
/// life), the old identities removed first (`ssh-add -d KEY` while the file still holds the old one).
public final class SSHCertificateKeeper: Sendable {
    private let engine: @Sendable () throws(RPCError) -> any EngineClient
    private let keys: [String]
    private let sshAgent: Bool
    private let logger: Logger
    /// How long to wait after a failed round before the next one, in seconds.
    static let retrySeconds: Int64 = 30
    /// How often a keeper without a key looks for the runtime key, in seconds.
    static let idleSeconds: Int64 = 60

    /// - Parameter engine: a connection to the agent's engine (each round opens one and closes it).
    public init(engine: @escaping @Sendable () throws(RPCError) -> any EngineClient, keys: [String], sshAgent: Bool, logger: Logger) {
        self.engine = engine
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
        let client: any EngineClient
        do { client = try engine() } catch { throw Failure(description: error.message) }
        defer { client.close() }
        var request = AcquireTokenSilentRequest()
        request.sshCertificate = SSHCertificateParams(publicKey: publicKey)
        let outcome: Result<TokenResponse, RPCError>
        do { outcome = try client.call(request, timeoutSeconds: 120) } catch { throw Failure(description: "the agent's engine: \(error)") }
        let result: TokenResponse
        switch outcome {
        case .success(let value): result = value
        case .failure(let error): throw Failure(description: error.message)
        }
        guard let certificate = result.sshCertificate, let line = certificate["line"]?.stringValue else {
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

    /// Runs a helper with stdout on stderr; its exit status as a shell says it (128 + N for
    /// signal N), -1 when it did not start or cannot be waited for.
    private func run(_ arguments: [String]) -> Int32 {
        guard case .success(let pid) = POSIX.spawn(arguments, stdout: STDERR_FILENO, newSession: false) else { return -1 }
        return POSIX.waitForTermination(of: pid)?.shellStatus ?? -1
    }
}
