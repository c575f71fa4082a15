import AuthCore
import AuthSeams
import Dispatch
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One input through one client assertion source, as the engine reads it. The first byte
/// picks the source, the rest is what it gives:
///
/// - 0: the content of the assertion file (``FileAssertionSource``, a private temporary file);
/// - 1: a command's output (``CommandAssertionSource`` running `cat` on that file: the pipe,
///   the process group, the exit);
/// - 2: a CI endpoint's answer (``GitHubActionsAssertionSource`` over a transport that answers
///   with it; the second byte picks 200, 403 or 404: no retried status, so no waits).
///
/// Then whatever the engine computes from the assertion's `exp` (the error text's age at
/// several moments, the extremes too). A crash (a trap on overflow) stops libFuzzer.
final class AssertionHarness {
    private let path: String

    /// Makes the private temporary file inputs are written to; `nil` when it cannot.
    init?() {
        var template = Array("/tmp/fuzz-assertion-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else { return nil }
        close(fd)
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { unlink(path) }

    /// Runs one input; returns what it gave (for the replay mode).
    func run(_ input: UnsafeRawBufferPointer) -> String {
        let bytes = Array(input)
        guard let selector = bytes.first else { return "empty input" }
        let payload = Array(bytes.dropFirst())
        let source: any ClientAssertionSource
        var transport: any HTTPTransport = Answering(status: 200, body: [])
        switch selector % 3 {
        case 0, 1:
            guard write(payload) else { return "cannot write the input file" }
            source =
                selector % 3 == 0
                ? FileAssertionSource(path: path, retryPause: .zero) : CommandAssertionSource(arguments: ["/bin/cat", path], timeLimit: .seconds(5))
        default:
            let status = [200, 200, 403, 404][Int(payload.first ?? 0) % 4]
            transport = Answering(status: status, body: Array(payload.dropFirst()))
            let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://ci.example/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"]
            source = GitHubActionsAssertionSource(variable: { variables[$0] })
        }
        let outcome = Self.wait { [transport] in
            do {
                return .success(try await source.assertion(transport: transport))
            } catch {
                return .failure(String(describing: error))
            }
        }
        switch outcome {
        case .failure(let reason): return "refused: \(reason)"
        case .success(let assertion):
            var texts: [String] = []
            let expiry = assertion.expiresOn
            for now in [0, 1, -1, .max, .min, 1_700_000_000, expiry ?? 0, (expiry ?? 0) &+ 1, (expiry ?? 0) &- 1] as [Int64] {
                texts.append(assertion.lifeText(now: now))
            }
            return "exp \(expiry.map(String.init) ?? "none"), well formed \(assertion.isWellFormed):\(texts[0])"
        }
    }

    private enum Outcome: Sendable {
        case success(ClientAssertion)
        case failure(String)
    }

    /// Runs `body` on a task and waits for it (libFuzzer calls in synchronously).
    private static func wait(_ body: @escaping @Sendable () async -> Outcome) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let result = PthreadMutex<Outcome?>(nil)
        Task {
            let outcome = await body()
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure("no outcome")
    }

    /// Replaces the input file's content (0600, owned by us: the file source accepts it).
    private func write(_ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

/// A CI endpoint that answers every request with one status and body.
private struct Answering: HTTPTransport {
    let status: Int
    let body: [UInt8]

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }
}
