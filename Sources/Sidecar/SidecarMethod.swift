import AuthCore

/// Every request method of the protocol, in one place, with whether it needs the application
/// configured first.
public enum SidecarMethod: String, CaseIterable, Sendable {
    case initialize
    case ping
    case getDeviceInformation
    case getCurrentAccount
    case getAccounts
    case setCurrentAccount
    case acquireToken
    case acquireTokenSilent
    case signout
    case callGraph
    case signHttpRequest
    case getCacheSummary
    case diagnosticsSleep = "diagnostics/sleep"
    case diagnosticsEcho = "diagnostics/echo"

    /// Needs a configured application (`initialize` or `--client-id`).
    public var needsConfiguration: Bool {
        switch self {
        case .initialize, .ping: false
        default: true
        }
    }

    /// Test-only methods, present with `--enable-diagnostics`.
    public var isDiagnostic: Bool { self == .diagnosticsSleep || self == .diagnosticsEcho }
}
