import AuthCore
import AuthTestSupport
import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar
import Synchronization
import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The real `JSONRPCServer` with the real `SidecarService`, on a thread at one end of a
/// socketpair; the test is the client at the other end (as sourcekit-lsp's
/// `TestJSONRPCConnection`). No process, no network: the auth dependencies are fakes
/// (``Fakes``), waits are virtual (`ManualClock`).
///
/// Two ways to talk to it:
/// - ``exchange(_:)``: write raw bytes, close the input, and read everything the server wrote
///   until it exits (framing, batches, exactly-once).
/// - ``call(_:_:)``: one request at a time through `JSONRPCClient`, with ``FakePeer``
///   answering `openUrl` and recording `deviceCode` (the handlers, whole flows).
///
/// Blocking reads run on their own threads, never on the test's task: the server's request
/// tasks need the cooperative pool.
public final class InProcessServer: @unchecked Sendable {
    /// The application the harness configures: a GUID, as a Microsoft authority requires
    /// (the ID tokens of the fake service name it as their audience).
    public static let clientId = "11111111-2222-3333-4444-555555555555"

    /// The auth dependencies the service is given.
    public struct Fakes: Sendable {
        public var transport: FakeHTTPTransport
        public var clock = ManualClock()
        public var listener = ScriptedRedirectListener()
        public var browser: ScriptedBrowser
        public var cache = TokenCache(store: MemoryTokenCacheStore())

        public init(transport: FakeHTTPTransport, browserActions: [ScriptedBrowser.Action] = [.complete(code: "code-1")]) {
            self.transport = transport
            browser = ScriptedBrowser(listener: listener, browserActions.first ?? .complete(code: "code-1"))
        }

        /// The fakes as a door's wiring: every engine built over them.
        public var dependencies: SidecarService.DependencyFactory {
            { [self] _, logger in
                EngineDependencies(
                    AuthDependencies(
                        transport: transport, cache: cache, clock: clock, browser: browser, listener: listener, logger: logger))
            }
        }
    }

    public let fakes: Fakes
    public let peer: FakePeer
    /// The client's end (owned by `client`).
    private let fd: Int32
    /// The client, behind a lock: each call runs on its own thread, so the lock is what
    /// orders one call's use of the client before the next's (and keeps it one at a time).
    private let client: Mutex<JSONRPCClient>
    private let exitStatus: ExitStatus

    /// Starts a server; `diagnostics` offers `diagnostics/sleep` and `diagnostics/echo`.
    public init(fakes: Fakes, diagnostics: Bool = false) throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw HarnessError("socketpair failed: errno \(errno)")
        }
        var options = SidecarService.Options(policy: OpenSessionPolicy(), dependencies: fakes.dependencies)
        options.diagnostics = diagnostics
        let logger = Logger(label: "in-process") { _ in SwiftLogNoOpLogHandler() }
        let server = JSONRPCServer(service: try SidecarService(options: options, logger: logger), logger: logger)
        let serverFD = fds[1]
        let status = ExitStatus()
        do {
            try POSIX.startThread {
                let code = server.run(input: serverFD, output: serverFD)
                close(serverFD)
                status.value.withLock { $0 = code }
            }
        } catch {
            throw HarnessError("cannot start the server thread")
        }
        self.fakes = fakes
        exitStatus = status
        fd = fds[0]
        let client = JSONRPCClient(fd: fds[0])
        peer = FakePeer(browser: fakes.browser)
        peer.install(on: client)
        self.client = Mutex(client)
    }

    deinit { client.withLock { $0.close() } }

    /// Sends `method` and waits (at most 10 s) for its outcome, the peer handling what the
    /// server sends meanwhile.
    public func call(_ method: String, _ params: JSONValue = [:]) async throws -> Result<JSONValue, RPCError> {
        try await onThread { [self] () throws(JSONRPCClient.Failure) in
            try client.withLock { (client) throws(JSONRPCClient.Failure) in
                try client.call(method, params: params, timeoutSeconds: 10)
            }
        }
    }

    /// `initialize` with an in-memory configuration plus `extra`; the result.
    @discardableResult
    public func initialize(_ extra: JSONObject = [:]) async throws -> JSONValue {
        var params: JSONObject = [
            "clientId": .string(Self.clientId), "authority": "https://login.microsoftonline.com/common",
            "cache": ["persistence": "memory"],
        ]
        for (key, value) in extra { params[key] = value }
        return try await call("initialize", .object(params)).get()
    }

    /// Writes `input`, closes the input and returns every byte the server wrote until it
    /// exited, with its exit status.
    public func exchange(_ input: String) async throws -> (output: String, status: Int32) {
        let fd = self.fd
        let status = exitStatus
        return try await onThread { () throws(HarnessError) in
            guard POSIX.writeAll(fd, Array(input.utf8), to: .socketWithoutSignal) else {
                throw HarnessError("write failed: errno \(errno)")
            }
            shutdown(fd, Int32(SHUT_WR))
            var output: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 10_000) > 0 else { throw HarnessError("no output for 10 s") }
                let count = read(fd, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                output += chunk[..<count]
            }
            for _ in 0..<1_000 where status.value.withLock({ $0 }) == nil { usleep(1_000) }
            return (String(decoding: output, as: UTF8.self), status.value.withLock { $0 } ?? -1)
        }
    }

    /// Runs `body` on a new thread and returns its outcome.
    private func onThread<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            do {
                try POSIX.startThread {
                    do throws(E) {
                        continuation.resume(returning: try body())
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            } catch {
                continuation.resume(throwing: HarnessError("cannot start a thread"))
            }
        }
    }
}

/// The server thread's exit status, once it returned.
final class ExitStatus: Sendable {
    let value = Mutex<Int32?>(nil)
}

/// A failure of the harness itself (not of the server under test).
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The ND-JSON messages of a whole output, parsed (a line that is not JSON fails the test).
public func messages(in output: String) throws -> [JSONValue] {
    try output.split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
}
