import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The identity broker on the session D-Bus, through libdbus-1 loaded on first use. One private
/// connection per process, opened at the first call and kept (opened again after the bus
/// dropped it); each call runs on a thread of its own, blocking there with its time limit, so
/// no task of the engine ever waits on the bus. An interactive sign-in (no time limit) has a
/// connection of its own for its life: libdbus lets one blocked caller hold a connection's
/// input and output, so `cancelInteractiveFlow` and other calls could not pass it on a shared one.
///
/// The bus is the one `DBUS_SESSION_BUS_ADDRESS` names, else `$XDG_RUNTIME_DIR/bus` when that
/// socket exists; never one libdbus would start (autolaunch): without a bus there is no broker.
public final class SessionBusBroker: IdentityBroker {
    private let connection = PthreadMutex<UnsafeMutableRawPointer?>(nil)
    private let address: @Sendable () -> String?
    /// Set by the first `org.freedesktop.DBus.Error.Spawn.*` answer (the broker's D-Bus
    /// activation failed: a broken package): later calls ask the bus to start nothing.
    private let activationFailed = PthreadMutex<String?>(nil)
    /// The largest answer read (bytes); a larger one is refused unread (``BrokerCallError/tooLarge(_:)``).
    let maxAnswerBytes: Int

    /// - Parameters:
    ///   - address: the bus address (default: the environment's, as above).
    ///   - maxAnswerBytes: the largest answer taken (default: the protocol's message limit, 4 MiB).
    public init(address: @escaping @Sendable () -> String? = SessionBusBroker.sessionBusAddress, maxAnswerBytes: Int = 4 << 20) {
        self.address = address
        self.maxAnswerBytes = maxAnswerBytes
    }

    /// `DBUS_SESSION_BUS_ADDRESS`, else `unix:path=$XDG_RUNTIME_DIR/bus` when it exists.
    @Sendable public static func sessionBusAddress() -> String? {
        if let value = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !value.isEmpty { return value }
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") else { return nil }
        let path = runtime + "/bus"
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return "unix:path=" + path
    }

    /// Loads libdbus, connects and makes `call` on a thread of its own now: a process that will
    /// call the broker does so while it reads its configuration and its request. The first
    /// call waits for this one's connection rather than making another; when it is identical
    /// to `call` (method and request) and comes within 2 s of its answer, it takes that answer
    /// instead of asking again. Any other call first drops it (a sign-in changes the accounts).
    public func prepare(_ call: BrokerCall?) {
        prefetch.withLock { $0 = call.map { Prefetch(call: $0) } }
        do {
            try POSIX.startThread {
                let answer = self.withConnection(own: false) { library, bus throws(BrokerCallError) -> String in
                    guard let call else { return "" }
                    return try self.perform(call, timeout: .seconds(10), library: library, bus: bus)
                }
                self.prefetch.withLockAndBroadcast { state in
                    state?.answer = answer
                    state?.answeredAt = POSIX.monotonicMilliseconds()
                }
            }
        } catch {
            prefetch.withLock { $0 = nil }
        }
    }

    /// A call `prepare` makes before anyone asks, kept for the first identical call.
    private struct Prefetch {
        let call: BrokerCall
        var answer: Result<String, BrokerCallError>?
        var answeredAt: Int64?

        func serves(_ method: BrokerMethod, _ request: String) -> Bool {
            call.method == method && call.request == request && answeredAt.map { POSIX.monotonicMilliseconds() - $0 < 2000 } ?? true
        }
    }

    private let prefetch = PthreadMutex<Prefetch?>(nil)

    /// Whether the prepared call is `method` with `request` (else it is dropped).
    private func prefetchServes(_ method: BrokerMethod, _ request: String) -> Bool {
        prefetch.withLock { state in
            defer { if state?.serves(method, request) != true { state = nil } }
            return state?.serves(method, request) == true
        }
    }

    /// The prepared call's answer (taken once), waited for on this thread.
    private func takePrefetched() -> Result<String, BrokerCallError>? {
        prefetch.wait(until: POSIX.monotonicMilliseconds() + 10_000) { (state: inout Prefetch?) -> Result<String, BrokerCallError>? in
            guard let answer = state?.answer else { return nil }
            state = nil
            return answer
        }
    }

    /// The prepared call's answer when `method` and `request` are its own (once), waited for on a thread.
    private func prefetched(_ method: BrokerMethod, request: String) async -> Result<String, BrokerCallError>? {
        guard prefetchServes(method, request) else { return nil }
        return await withCheckedContinuation { continuation in
            do {
                try POSIX.startThread { continuation.resume(returning: self.takePrefetched()) }
            } catch {
                continuation.resume(returning: nil)
            }
        }
    }

    public func callNow(_ call: BrokerCall, timeout: Duration) -> Result<String, BrokerCallError>? {
        if prefetchServes(call.method, call.request), let answer = takePrefetched() { return answer }
        return withConnection(own: false) { library, bus throws(BrokerCallError) -> String in
            try self.perform(call, timeout: timeout, library: library, bus: bus)
        }
    }

    public func call(_ method: BrokerMethod, correlationId: String, request: String, timeout: Duration?) async throws(BrokerCallError)
        -> String
    {
        if let answer = await prefetched(method, request: request) { return try answer.get() }
        let call = BrokerCall(method: method, correlationId: correlationId, request: request)
        guard timeout == nil || method == .acquireTokenInteractively else {
            return try await onThread { library, bus throws(BrokerCallError) -> String in
                try self.perform(call, timeout: timeout, library: library, bus: bus)
            }
        }
        // An interactive call, on its own connection: a cancelled task ends it and closes that
        // connection (never an empty-body cancelInteractiveFlow: it took broker 3.0.2 off the bus).
        let cancelled = PthreadMutex(false)
        let result: Result<String, BrokerCallError> = await withTaskCancellationHandler {
            do throws(BrokerCallError) {
                return .success(
                    try await onThread(ownConnection: true) { library, bus throws(BrokerCallError) -> String in
                        try self.perform(call, timeout: timeout, library: library, bus: bus, cancelled: cancelled)
                    })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
        return try result.get()
    }

    /// One call, blocking, on `bus`; `cancelled` (an interactive call, on its own connection):
    /// the call waits in steps of 200 ms and ends when it is set (the caller then closes the
    /// connection: the broker sees its caller leave the bus).
    private func perform(
        _ call: BrokerCall, timeout: Duration?, library: DBusLibrary, bus: UnsafeMutableRawPointer, cancelled: PthreadMutex<Bool>? = nil
    ) throws(BrokerCallError) -> String {
        let method = call.method
        guard
            let message = library.newMethodCall(
                BrokerInterface.busName, BrokerInterface.objectPath, BrokerInterface.interface, method.rawValue)
        else { throw .failed(name: "org.freedesktop.DBus.Error.NoMemory", message: "no message") }
        defer { library.messageUnref(message) }
        // After one failed activation the bus is asked to start nothing more (one per process).
        if activationFailed.withLock({ $0 != nil }) { library.setAutoStart(message, 0) }
        let iterator = UnsafeMutableRawPointer.allocate(byteCount: DBusLibrary.iterSize, alignment: 8)
        defer { iterator.deallocate() }
        library.iterInitAppend(message, iterator)
        for argument in [BrokerInterface.protocolVersion, call.correlationId, call.request] {
            let appended = argument.withCString { text in
                withUnsafePointer(to: text) { library.iterAppendBasic(iterator, DBusLibrary.stringType, $0) }
            }
            guard appended != 0 else { throw .failed(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "an argument was refused") }
        }
        let reply: UnsafeMutableRawPointer
        if let cancelled {
            reply = try Self.waitForReply(message, library: library, bus: bus, cancelled: cancelled, timeout: timeout)
        } else {
            let milliseconds = timeout.map {
                Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)
            }
            let (answer, failure) = library.withError { error in
                library.sendWithReplyAndBlock(bus, message, milliseconds ?? DBusLibrary.noTimeout, error)
            }
            if let failure { throw classify(failure, timeout: timeout) }
            guard let answer else { throw .failed(name: "org.freedesktop.DBus.Error.NoReply", message: "no reply") }
            reply = answer
        }
        defer { library.messageUnref(reply) }
        let (isError, failure) = library.withError { error in library.setErrorFromMessage(error, reply) }
        if isError != 0, let failure { throw classify(failure, timeout: timeout) }
        guard library.iterInit(reply, iterator) != 0, library.iterArgType(iterator) == DBusLibrary.stringType else {
            throw .failed(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "the broker's answer is not a string")
        }
        var text: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &text) { library.iterGetBasic(iterator, UnsafeMutableRawPointer($0)) }
        guard let text else { return "" }
        // Measured before it becomes a String (a 30 MB answer cost 566 MB when parsed).
        guard strlen(text) <= maxAnswerBytes else { throw .tooLarge(maxAnswerBytes) }
        return String(cString: text)
    }

    /// Sends `message` and waits for its reply, checking `cancelled` and `timeout` every 200 ms.
    private static func waitForReply(
        _ message: UnsafeMutableRawPointer, library: DBusLibrary, bus: UnsafeMutableRawPointer, cancelled: PthreadMutex<Bool>,
        timeout: Duration?
    ) throws(BrokerCallError) -> UnsafeMutableRawPointer {
        let deadline = timeout.map { POSIX.monotonicMilliseconds() + $0.components.seconds * 1000 }
        var pending: UnsafeMutableRawPointer?
        guard library.sendWithReply(bus, message, &pending, DBusLibrary.noTimeout) != 0, let pending else {
            throw .gone(busClosed)
        }
        defer { library.pendingUnref(pending) }
        while library.pendingCompleted(pending) == 0 {
            if cancelled.withLock({ $0 }) {
                library.pendingCancel(pending)
                throw .failed(name: "cancelled", message: "the request was cancelled")
            }
            if let deadline, let timeout, POSIX.monotonicMilliseconds() >= deadline {
                library.pendingCancel(pending)
                throw .timedOut(timeout)
            }
            if library.readWriteDispatch(bus, 200) == 0, library.pendingCompleted(pending) == 0 { throw .gone(busClosed) }
        }
        guard let reply = library.pendingStealReply(pending) else {
            throw .failed(name: "org.freedesktop.DBus.Error.NoReply", message: "no reply")
        }
        return reply
    }

    /// Runs `body` with the library and a referenced connection on a thread of its own.
    private func onThread(
        ownConnection: Bool = false, _ body: @escaping @Sendable (DBusLibrary, UnsafeMutableRawPointer) throws(BrokerCallError) -> String
    ) async throws(BrokerCallError) -> String {
        let result: Result<String, BrokerCallError> = await withCheckedContinuation { continuation in
            do {
                try POSIX.startThread {
                    continuation.resume(returning: self.withConnection(own: ownConnection, body))
                }
            } catch {
                continuation.resume(returning: .failure(.failed(name: "thread", message: "cannot start a thread: \(error)")))
            }
        }
        return try result.get()
    }

    private func withConnection(
        own: Bool, retry: Bool = true, _ body: (DBusLibrary, UnsafeMutableRawPointer) throws(BrokerCallError) -> String
    ) -> Result<String, BrokerCallError> {
        // No bus, no broker: libdbus is not even loaded.
        guard connection.withLock({ $0 != nil }) || address() != nil else { return .failure(.unavailable(Self.noBus)) }
        let library: DBusLibrary
        switch DBusLibrary.shared() {
        case .success(let loaded): library = loaded
        case .failure(let error): return .failure(error)
        }
        let bus: UnsafeMutableRawPointer
        switch own ? connect(library) : open(library) {
        case .success(let opened): bus = opened
        case .failure(let error): return .failure(error)
        }
        defer {
            if own { library.connectionClose(bus) }
            library.connectionUnref(bus)
        }
        do throws(BrokerCallError) {
            return .success(try body(library, bus))
        } catch {
            // The kept connection was closed (the bus restarted): once more on a new one.
            if !own, error == .gone(Self.busClosed) {
                drop(bus, library)
                if retry { return withConnection(own: false, retry: false, body) }
            }
            return .failure(error)
        }
    }

    /// The kept connection (referenced for the caller), opened now when there is none.
    private func open(_ library: DBusLibrary) -> Result<UnsafeMutableRawPointer, BrokerCallError> {
        connection.withLock { kept in
            if let kept, let referenced = library.connectionRef(kept) { return .success(referenced) }
            let opened: UnsafeMutableRawPointer
            switch connect(library) {
            case .success(let connected): opened = connected
            case .failure(let error): return .failure(error)
            }
            kept = opened
            return library.connectionRef(opened).map { .success($0) } ?? .failure(.unavailable("no connection"))
        }
    }

    /// A new private connection to the session bus, registered (`Hello`); the caller holds its reference.
    private func connect(_ library: DBusLibrary) -> Result<UnsafeMutableRawPointer, BrokerCallError> {
        guard let address = address() else {
            return .failure(.unavailable(Self.noBus))
        }
        let (opened, failure) = library.withError { error in library.openPrivate(address, error) }
        guard let opened, failure == nil else {
            return .failure(.unavailable("cannot connect to the session D-Bus: \(failure?.message ?? "no connection")"))
        }
        library.setExitOnDisconnect(opened, 0)
        let (registered, refusal) = library.withError { error in library.register(opened, error) }
        guard registered != 0, refusal == nil else {
            library.connectionClose(opened)
            library.connectionUnref(opened)
            return .failure(.unavailable("the session D-Bus refused the connection: \(refusal?.message ?? "no Hello")"))
        }
        return .success(opened)
    }

    /// Forgets a connection the bus closed (the next call opens another).
    private func drop(_ bus: UnsafeMutableRawPointer, _ library: DBusLibrary) {
        let dropped: UnsafeMutableRawPointer? = connection.withLock { kept in
            guard kept == bus else { return nil }
            kept = nil
            return bus
        }
        guard let dropped else { return }
        library.connectionClose(dropped)
        library.connectionUnref(dropped)
    }

    static let noBus = "no session D-Bus (DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus is absent)"

    static let busClosed = "the session bus closed the connection"

    /// A D-Bus error as the broker seam names it; a failed activation is remembered.
    private func classify(_ failure: (name: String, message: String), timeout: Duration?) -> BrokerCallError {
        let classified = Self.classify(failure, timeout: timeout)
        if failure.name.hasPrefix(Self.spawnErrors) { activationFailed.withLock { $0 = failure.name } }
        if case .unavailable(let reason) = classified, !failure.name.hasPrefix(Self.spawnErrors),
            let earlier = activationFailed.withLock({ $0 })
        {
            return .unavailable(reason + " (its D-Bus activation failed earlier in this process, \(earlier); not tried again)")
        }
        return classified
    }

    static let spawnErrors = "org.freedesktop.DBus.Error.Spawn."

    /// A D-Bus error as the broker seam names it: no owner or a failed activation
    /// (`Spawn.*`: a broken package) is no broker; a broker that left the bus without
    /// answering (`NoReply` naming the disconnection: it crashed) and a closed bus are gone;
    /// only the rest of `NoReply`/`TimedOut` is a time-out.
    static func classify(_ failure: (name: String, message: String), timeout: Duration?) -> BrokerCallError {
        switch failure.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .unavailable("\(BrokerInterface.busName) is not on the session bus: \(failure.message)")
        case let name where name.hasPrefix(spawnErrors):
            return .unavailable("\(BrokerInterface.busName) could not be started by D-Bus activation (\(name)): \(failure.message)")
        case "org.freedesktop.DBus.Error.Disconnected":
            return .gone(busClosed)
        case "org.freedesktop.DBus.Error.NoReply" where failure.message.lowercased().contains("disconnected"):
            return .gone("it left the bus without answering (it stopped or crashed): \(failure.message)")
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.TimedOut":
            return timeout.map(BrokerCallError.timedOut) ?? .failed(name: failure.name, message: failure.message)
        default:
            return .failed(name: failure.name, message: failure.message)
        }
    }
}
