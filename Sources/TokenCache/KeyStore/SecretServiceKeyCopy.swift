import POSIXSupport

/// Where the Secret Service layer keeps a short-lived copy of the key it was given, so the
/// next process skips libsecret (its load, bus connection and session cost a fresh process
/// ~8 ms; the copy ~0.1 ms): the kernel keyring's (``KernelKeyringKeyCopy``), or a test's fake.
public protocol SecretServiceKeyCopy: Sendable {
    /// The copy, if there is one (of 32 bytes) that has not timed out.
    func find() -> [UInt8]?
    /// Puts (or replaces) the copy, to be forgotten `seconds` from now.
    func keep(_ key: [UInt8], seconds: Int)
    /// Removes the copy, if there is one.
    func drop()
}

/// The copy as a `user` key in this user's persistent kernel keyring, described as
/// `auth-sidecar:secret-service-key:<cache path>`, readable by this uid only, with a kernel
/// timeout (`KEYCTL_SET_TIMEOUT`) set when it is put and never extended by use: the Secret
/// Service is asked again at least once per timeout. Kernel memory only, never on disk; gone
/// on timeout and at reboot. A keyring that refuses it costs nothing but the fast path.
public struct KernelKeyringKeyCopy: SecretServiceKeyCopy {
    private let key: KernelKey

    public init(cachePath: String) {
        key = KernelKey(description: "auth-sidecar:secret-service-key:" + cachePath)
    }

    public func find() -> [UInt8]? {
        guard case .success(let keyring) = KernelKey.persistentKeyring() else { return nil }
        return key.find(in: keyring)
    }

    public func keep(_ copy: [UInt8], seconds: Int) {
        guard seconds > 0, case .success(let keyring) = KernelKey.persistentKeyring() else { return }
        _ = key.store(copy, in: keyring, timeout: UInt32(clamping: seconds))
    }

    public func drop() {
        guard case .success(let keyring) = KernelKey.persistentKeyring() else { return }
        key.invalidate(in: keyring)
    }
}

/// The copy put back, before a write, when it went missing (removed from the keyring, or the
/// keyring expired) while this process holds the key the service gave it, within the copy's
/// own rule: it lives `seconds` from when the service gave the key, never longer, so it is
/// put back only with the time it has left. Checked at most every tenth of that time.
final class SecretServiceCopyKeeper: Sendable {
    private struct Given {
        /// Out of core dumps (``GuardedKey``).
        var key: GuardedKey
        /// When (monotonic nanoseconds) the copy's time runs out.
        var until: UInt64
        var lastCheck: UInt64
        var every: UInt64
    }

    private let state = PthreadMutex<Given?>(nil)

    /// The service gave (or took) `key`; the copy lives `seconds` from now.
    func given(_ key: [UInt8], seconds: Int) {
        let now = POSIX.monotonicNanoseconds()
        let span = UInt64(max(1, seconds)) * 1_000_000_000
        state.withLock { $0 = Given(key: GuardedKey(key), until: now + span, lastCheck: now, every: max(1_000_000_000, span / 10)) }
    }

    /// Before a write: `copy` put back with the time it has left, when due and missing.
    func beforeWrite(_ copy: any SecretServiceKeyCopy) {
        let now = POSIX.monotonicNanoseconds()
        let due = state.withLock { given -> (key: [UInt8], seconds: Int)? in
            guard let held = given, now < held.until, now &- held.lastCheck >= held.every else { return nil }
            given?.lastCheck = now
            return (held.key.bytes(), Int((held.until - now) / 1_000_000_000))
        }
        guard let due, due.seconds > 0, copy.find() == nil else { return }
        copy.keep(due.key, seconds: due.seconds)
    }
}
