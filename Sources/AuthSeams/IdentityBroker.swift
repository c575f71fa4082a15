/// The methods of the Linux identity broker's D-Bus interface (`com.microsoft.identity.Broker1`)
/// the sidecar calls; each takes the protocol version, a correlation id and a request JSON,
/// and answers a JSON text.
public enum BrokerMethod: String, Sendable, CaseIterable {
    case acquireTokenInteractively, acquireTokenSilently, getAccounts, removeAccount
    case cancelInteractiveFlow, getLinuxBrokerVersion
}

/// Why a call to the broker gave no answer (an answer carrying an error object is an answer).
public enum BrokerCallError: Error, Sendable, Equatable {
    /// No broker to call: no D-Bus library, no session bus, or the broker's name is not on it.
    case unavailable(String)
    /// No answer within the call's time limit.
    case timedOut(Duration)
    /// The bus or the broker answered with a D-Bus error (`name`: e.g. `org.freedesktop.DBus.Error.Failed`).
    case failed(name: String, message: String)
    /// The broker or the bus went away during the call (the broker crashed: `NoReply` naming a
    /// disconnection; the bus daemon gone: `Disconnected`): not a time-out.
    case gone(String)
    /// The answer is larger than the message limit (bytes): refused unread.
    case tooLarge(Int)
}

/// The identity broker as the auth core sees it: text in, text out, over whatever carries it
/// (the session D-Bus in the sidecar, a fake in tests).
///
/// ```swift
/// let answer = try await broker.call(.getAccounts, correlationId: id, request: json, timeout: .seconds(10))
/// ```
public protocol IdentityBroker: Sendable {
    /// Starts, in the background, what the first call needs (loading a library, connecting)
    /// and makes `call` (a query whose answer the first request will want: `getAccounts`), so
    /// that they overlap the rest of a process's start; the first call identical to `call`
    /// takes that answer.
    func prepare(_ call: BrokerCall?)

    /// `call` made on this thread, blocking up to `timeout` (a prepared identical call's answer
    /// taken as ``call(_:correlationId:request:timeout:)`` takes it); `nil`: this broker has no
    /// blocking calls (then only the async one is used).
    func callNow(_ call: BrokerCall, timeout: Duration) -> Result<String, BrokerCallError>?

    /// Calls `method` with the broker protocol's version, `correlationId` and `request`
    /// (a JSON text) and returns the broker's answer. `timeout` `nil`: no time limit (an
    /// interactive sign-in waits for the user).
    func call(_ method: BrokerMethod, correlationId: String, request: String, timeout: Duration?) async throws(BrokerCallError)
        -> String
}

extension IdentityBroker {
    /// Nothing to prepare.
    public func prepare(_ call: BrokerCall?) {}

    /// No blocking calls.
    public func callNow(_ call: BrokerCall, timeout: Duration) -> Result<String, BrokerCallError>? { nil }
}

/// One call to the broker: the method, its correlation id and its request (JSON text).
public struct BrokerCall: Sendable, Equatable {
    public let method: BrokerMethod
    public let correlationId: String
    public let request: String

    public init(method: BrokerMethod, correlationId: String, request: String) {
        self.method = method
        self.correlationId = correlationId
        self.request = request
    }
}

/// The broker's well-known names and constants (the open description of its interface).
public enum BrokerInterface {
    /// The bus name the broker owns on the session bus.
    public static let busName = "com.microsoft.identity.broker1"
    /// Its object path.
    public static let objectPath = "/com/microsoft/identity/broker1"
    /// Its interface.
    public static let interface = "com.microsoft.identity.Broker1"
    /// The protocol version every call carries.
    public static let protocolVersion = "0.0"
    /// The parent window handle of a console program's sign-in (what MSALRuntime sends for one).
    public static let consoleWindowHandle: Int64 = 1
    /// The redirect URI the broker serves (the app registration must list it).
    public static let redirectURI = "https://login.microsoftonline.com/common/oauth2/nativeclient"
}
