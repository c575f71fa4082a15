/// What the user needs to finish a device code sign-in elsewhere.
public struct DeviceCodeInfo: Sendable, Equatable {
    public var userCode: String
    public var verificationUri: String
    public var message: String
    /// Unix seconds.
    public var expiresOn: Int64
}
