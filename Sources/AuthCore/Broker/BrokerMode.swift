/// Whether sign-in goes through the Linux identity broker (the `broker` configuration key).
public enum BrokerMode: String, Sendable, CaseIterable {
    /// Never (the default: the app registration must list the broker's redirect URI first).
    case off
    /// When its name is on the session bus; else the usual flows, said once on stderr.
    case auto
    /// Always; without a broker every sign-in fails with `brokerUnavailable`, naming it.
    case required
}
