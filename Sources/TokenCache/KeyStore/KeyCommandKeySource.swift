import POSIXSupport

/// Layer 3b, a program the user trusts to print the key (`cache.encryption.keyCommand`, e.g.
/// `["pass", "show", "auth-sidecar"]`, `["op", "read", "op://..."]`, a TPM tool): started with
/// `posix_spawnp` (no shell; arguments as given), stdin from /dev/null, its stderr ours; its
/// stdout is the key (32 raw bytes, 64 hex digits or base64). At most ``maxOutput`` bytes
/// and ``timeLimit``; then it is killed. It must exit 0.
public struct KeyCommandKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.keyCommand
    /// The program and its arguments; `nil`: not configured.
    public let arguments: [String]?
    /// The longest output read.
    public static let maxOutput = 4096
    /// How long the command may take.
    public let timeLimit: Duration

    public init(arguments: [String]?, timeLimit: Duration = .seconds(10)) {
        self.arguments = arguments
        self.timeLimit = timeLimit
    }

    public func obtainKey() -> CacheKeyOutcome {
        guard let arguments, let program = arguments.first, !program.isEmpty else {
            return .unavailable(reason: "not configured", enable: "\"cache\": {\"encryption\": {\"keyCommand\": [\"program\", \"arg\"]}}")
        }
        switch POSIX.commandOutput(arguments, timeLimit: timeLimit, maxOutput: Self.maxOutput) {
        case .success(let output):
            guard let key = AESGCMCacheEncryption.key(from: output) else {
                return .unavailable(
                    reason: "\(program) printed no 32-byte key (raw, 64 hex digits or base64)", enable: "fix the key command")
            }
            return .key(key, created: false)
        case .failure(let failure):
            return .unavailable(reason: "\(program): \(failure.reason)", enable: "fix the key command")
        }
    }
}
