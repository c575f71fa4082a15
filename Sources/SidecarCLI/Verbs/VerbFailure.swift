import JSON
import JSONRPC
import Sidecar

/// Why a verb ends without its output: the exit status and the one line for stderr.
///
/// Exit statuses (documented in the README, "From a shell"): 0 success, 1 failure,
/// 2 sign-in needed (`auth-sidecar login` is the cure), 64 usage error (swift-argument-parser).
struct VerbFailure: Error, Equatable {
    static let failureStatus: Int32 = 1
    static let signInNeededStatus: Int32 = 2

    var status: Int32 = VerbFailure.failureStatus
    /// One line, without the program name; never a token.
    var message: String

    /// A sign-in is needed: names the command that gets one.
    static func signInNeeded(_ reason: String, account: String? = nil) -> VerbFailure {
        let command = account.map { "auth-sidecar login --login-hint \($0)" } ?? "auth-sidecar login"
        return VerbFailure(status: signInNeededStatus, message: "\(reason); run '\(command)'")
    }

    /// Whether a request's error is cured by a sign-in (interaction required, no such account).
    static func isSignInNeeded(_ error: RPCError) -> Bool {
        error.code == AuthErrorMapping.interactionRequiredCode || error.code == AuthErrorMapping.accountNotFoundCode
    }

    /// The failure for a request's error object. `account` is the username the request named.
    static func from(_ error: RPCError, account: String? = nil) -> VerbFailure {
        let name = error.data["name"]?.stringValue ?? "error"
        switch error.code {
        case AuthErrorMapping.interactionRequiredCode where error.data["suberror"]?.stringValue == "no_account":
            return signInNeeded("no account is signed in")
        case AuthErrorMapping.interactionRequiredCode:
            return signInNeeded("sign-in needed: \(oneLine(error.message))", account: account)
        case AuthErrorMapping.accountNotFoundCode:
            let who = account.map { "no signed-in account is \($0)" } ?? "no account is signed in"
            return signInNeeded(who, account: account)
        case -32602 where error.data["member"]?.stringValue == "clientId" && error.message.contains("missing member"):
            return VerbFailure(
                message: "no client id configured: pass --client-id ID, or write {\"clientId\": \"ID\"} to "
                    + UserPaths.defaultConfigFileForMessages())
        case AuthErrorMapping.code(for: .cacheUnavailable) where error.data["layers"] != nil:
            // The key store's own message (no service text in it): one line per layer tried.
            return VerbFailure(message: String(error.message.filter { $0 != "\r" }))
        default:
            return VerbFailure(message: "\(oneLine(error.message)) (\(name))")
        }
    }

    /// The connection to the engine failed.
    static func connection(_ failure: JSONRPCClient.Failure, engine: EngineConnection.Engine) -> VerbFailure {
        let peer = engine == .agent ? "the agent" : "the engine"
        switch failure {
        case .timedOut: return VerbFailure(message: "\(peer) did not answer in time")
        case .closed: return VerbFailure(message: "\(peer) closed the connection")
        }
    }

    /// `text` on one line (service messages carry CR LF and trace lines), at most 300 characters.
    static func oneLine(_ text: String) -> String {
        let line = String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
        return line.count > 300 ? String(line.prefix(297)) + "..." : line
    }
}
