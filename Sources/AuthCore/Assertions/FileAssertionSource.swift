import AuthSeams
import Logging
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The assertion in a file, read again at each exchange: Kubernetes workload identity's
/// projected service account token (`AZURE_FEDERATED_TOKEN_FILE`, which the kubelet rewrites
/// before it expires), or a file a CI step writes (`clientAssertion: {"file": PATH}`).
///
/// Read off the cooperative pool with a deadline, never blocking on what is not a regular file
/// (``POSIX/readRegularFile(_:limit:)``: a FIFO is refused at once). Whoever can write the
/// file speaks for the app, so it must be owned by this user or root and not writable by group
/// or others; one readable by others is used with a warning. A read that looks torn (the file
/// changed meanwhile, or holds no JWT: a writer that truncates and writes in place) is tried
/// again once.
public struct FileAssertionSource: ClientAssertionSource {
    public let path: String
    /// The largest file read (a JWT is a few KiB).
    static let limit = 64 * 1024
    /// How long a read may take (a file on a network or FUSE file system that hangs).
    static let timeLimit = Duration.seconds(10)
    /// The pause before a torn read is tried again (100 ms).
    public let retryPause: Duration
    private static let logger = Logger(label: "auth-sidecar.assertion")
    /// The paths warned about (readable by others) in this process: once each.
    private static let warned = PthreadMutex<Set<String>>([])

    public init(path: String, retryPause: Duration = .milliseconds(100)) {
        self.path = path
        self.retryPause = retryPause
    }

    public var name: String { "file \(path)" }

    public func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
        do {
            return try await readOnce()
        } catch let first as Torn {
            try await Task.sleep(for: retryPause)
            do {
                return try await readOnce()
            } catch is Torn {
                throw first.error
            }
        }
    }

    /// A read that may be torn: tried again once, else `error`.
    private struct Torn: Error {
        let error: AuthError
    }

    private func readOnce() async throws -> ClientAssertion {
        let path = path
        guard let read = await POSIX.offPool(timeLimit: Self.timeLimit, { POSIX.readRegularFile(path, limit: Self.limit) }) else {
            throw failure(.networkError, "no answer within \(Self.timeLimit.components.seconds) s (a file system that hangs?)")
        }
        let file: RegularFile
        switch read {
        case .success(let read): file = read
        case .failure(.cannotOpen(let reason)): throw failure("it cannot be opened (\(reason))")
        case .failure(.notRegular(let kind)): throw failure("it is \(kind), not a regular file")
        case .failure(.tooLarge(let limit)): throw failure("it holds more than \(limit) bytes")
        case .failure(.cannotRead(let reason)): throw failure("it cannot be read (\(reason))")
        }
        try check(owner: file.owner, permissions: file.permissions)
        do {
            let assertion = try assertion(fromText: String(decoding: file.bytes, as: UTF8.self))
            if file.changedDuringRead || !assertion.isWellFormed { throw Torn(error: failure("it changed while it was read")) }
            return assertion
        } catch let error as AuthError {
            throw Torn(error: error)
        }
    }

    /// Refuses a file another user could have written; warns (once) of one others can read.
    private func check(owner: UInt32, permissions: UInt32) throws {
        guard owner == UInt32(geteuid()) || owner == 0 else {
            throw failure("it is owned by uid \(owner), neither this user nor root: anyone who can write it speaks for the app")
        }
        guard permissions & 0o022 == 0 else {
            throw failure(
                "it is writable by \(permissions & 0o020 != 0 ? "its group" : "others") (mode \(String(permissions, radix: 8))): "
                    + "anyone who can write it speaks for the app; chmod go-w it")
        }
        if permissions & 0o004 != 0, Self.warned.withLock({ $0.insert(path).inserted }) {
            Self.logger.warning(
                "the client assertion file is readable by other users (chmod o-r it)",
                metadata: ["file": "\(path)", "mode": "\(String(permissions, radix: 8))"])
        }
    }
}
