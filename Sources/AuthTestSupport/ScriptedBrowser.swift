import AuthSeams
import POSIXSupport

/// A ``BrowserLauncher`` that plays the user: it reads `redirect_uri` and `state` from the
/// authorize URL it is asked to open and delivers the scripted redirect to a
/// ``ScriptedRedirectListener``, at once and in memory. URLs without them (an end-session
/// URL) are only recorded.
///
/// ```swift
/// let listener = ScriptedRedirectListener()
/// let browser = ScriptedBrowser(listener: listener, .complete(code: "code-1"))
/// // AuthDependencies(..., browser: browser, listener: listener, ...)
/// ```
public final class ScriptedBrowser: BrowserLauncher {
    /// What the user does with one opened URL.
    public enum Action: Sendable, Equatable {
        /// Signs in: the redirect carries `code` and the URL's state.
        case complete(code: String)
        /// The service answers with an OAuth error on the redirect (and the URL's state).
        case fail(error: String, description: String? = nil, subcode: String? = nil)
        /// A forged redirect with a wrong state arrives first, then the real one with `code`.
        case forgedStateFirst(code: String)
        /// The user closes the window: nothing arrives, the listener's wait times out.
        case abandon
        /// No browser can be started.
        case unavailable
    }

    private let listener: ScriptedRedirectListener?
    private let actions: [Action]
    private let opened = PthreadMutex<[String]>([])

    /// - Parameters:
    ///   - listener: where redirects are delivered (`nil`: only record URLs).
    ///   - actions: one per `open`, in order; the last one repeats.
    public init(listener: ScriptedRedirectListener?, _ actions: Action...) {
        self.listener = listener
        self.actions = actions.isEmpty ? [.complete(code: "code-1")] : actions
    }

    /// Every URL opened, in order.
    public var openedURLs: [String] { opened.withLock { $0 } }

    /// The query parameters of the `index`th opened URL.
    public func parameters(ofOpened index: Int) -> [String: String] {
        let urls = openedURLs
        guard urls.indices.contains(index) else { return [:] }
        return Self.query(of: urls[index])
    }

    public func open(_ url: String) async throws {
        try play(url)
    }

    /// What `open` does, synchronously: for a fake JSON-RPC peer answering `openUrl`.
    public func play(_ url: String) throws {
        let count = opened.withLock {
            $0.append(url)
            return $0.count
        }
        let action = actions[min(count, actions.count) - 1]
        if action == .unavailable { throw BrowserError.unavailable("the scripted browser is unavailable") }
        let query = Self.query(of: url)
        guard let redirectURI = query["redirect_uri"], let state = query["state"],
            let pending = listener?.pending(for: redirectURI)
        else { return }
        switch action {
        case .complete(let code):
            pending.deliver(["code": code, "state": state])
        case .fail(let error, let description, let subcode):
            var parameters = ["error": error, "state": state]
            parameters["error_description"] = description
            parameters["error_subcode"] = subcode
            pending.deliver(parameters)
        case .forgedStateFirst(let code):
            pending.deliver(["code": "forged", "state": "guessed-\(state.count)"])
            pending.deliver(["code": code, "state": state])
        case .abandon:
            pending.timeOut()
        case .unavailable:
            break
        }
    }

    static func query(of url: String) -> [String: String] {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
        return (try? FormURLEncoding.decode(query)) ?? [:]
    }
}
