import AuthSeams
import POSIXSupport

/// The assertion in a file, read again at each exchange: Kubernetes workload identity's
/// projected service account token (`AZURE_FEDERATED_TOKEN_FILE`, which the kubelet rewrites
/// before it expires), or a file a CI step writes (`clientAssertion: {"file": PATH}`).
public struct FileAssertionSource: ClientAssertionSource {
    public let path: String
    /// The largest file read (a JWT is a few KiB).
    static let limit = 64 * 1024

    public init(path: String) {
        self.path = path
    }

    public var name: String { "file \(path)" }

    public func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
        // Not the own-file rule: the platform writes this file (the kubelet, as root, 0644).
        guard let bytes = POSIX.readFile(path, limit: Self.limit) else {
            throw failure("it cannot be read (missing, not a regular file, or over \(Self.limit) bytes)")
        }
        return try assertion(fromText: String(decoding: bytes, as: UTF8.self))
    }
}
