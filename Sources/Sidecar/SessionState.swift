import AuthCore
import JSONRPC
import Synchronization

/// The configuration once known, and whether `initialize` already ran.
final class SessionState: Sendable {
    private struct Guarded {
        var configured: Configured?
        var initialized = false
    }

    /// A configuration and the application built from it.
    struct Configured: Sendable {
        let configuration: Configuration
        let methods: AuthMethods
        /// `acquireTokenSilent`'s route, made once: on the reader thread (from memory, or a quick
        /// read when it is idle), else a task.
        let silentRoute: RPCRoute

        init(configuration: Configuration, methods: AuthMethods) {
            self.configuration = configuration
            self.methods = methods
            silentRoute = .quickOrConcurrent(quick: methods.acquireTokenSilentOnReader(_:moment:), concurrent: methods.acquireTokenSilent)
        }
    }

    private let state: Mutex<Guarded>

    init(configured: Configured?) { state = Mutex(Guarded(configured: configured)) }

    var configuration: Configuration? { state.withLock { $0.configured?.configuration } }
    var methods: AuthMethods? { state.withLock { $0.configured?.methods } }
    var isConfigured: Bool { state.withLock { $0.configured != nil } }
    var silentRoute: RPCRoute? { state.withLock { $0.configured?.silentRoute } }

    func initialize(with configured: Configured) throws(RPCError) {
        let first = state.withLock { state in
            guard !state.initialized else { return false }
            state.initialized = true
            state.configured = configured
            return true
        }
        guard first else {
            throw .invalidRequest("initialize may be sent only once", name: "alreadyInitialized")
        }
    }
}
