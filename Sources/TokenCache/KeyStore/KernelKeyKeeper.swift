import Logging
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the kernel keyring's copy of a cache key alive while this process holds the key in
/// memory. The persistent keyring expires `persistent_keyring_expiry` seconds (3 days by
/// default) after its last `KEYCTL_GET_PERSISTENT`, and a process that only uses the key it
/// read at start makes no keyring call at all: without this, an agent running for days would
/// outlive the key, and the next process without it would find none.
///
/// - Renewal and check, bounded by time (never by requests): at most once per
///   ``interval`` (a tenth of the expiry), `KEYCTL_GET_PERSISTENT` (which renews the keyring),
///   then a search for the key. Done before a write when that much time has passed since the
///   last check, and by a timer in a long-running process (``CacheKeyRenewal``).
/// - A key missing from the keyring (expired with it, unlinked, invalidated) while this process
///   holds it is stored back, under the cache's lock (a process that stored a key of its own in
///   the meantime keeps it), with one log line.
///
/// One keeper per key (by description) in a process, whatever the number of engines using it.
final class KernelKeyKeeper: Sendable {
    private let key: KernelKey
    private let lockPath: String
    private let logger = Logger(label: "auth-sidecar.token-cache")
    private let state = PthreadMutex(State())

    private struct State {
        /// The key this process holds (the one in the keyring when it was last seen).
        var held: GuardedKey?
        /// When (monotonic nanoseconds) the keyring was last renewed and searched.
        var lastCheck = POSIX.monotonicNanoseconds()
        var timerStarted = false
    }

    private init(key: KernelKey, cachePath: String) {
        self.key = key
        lockPath = CacheFileLayout(path: cachePath).lockFile
    }

    private static let keepers = PthreadMutex<[String: KernelKeyKeeper]>([:])

    /// The keeper of `key`, the cache at `cachePath`'s key (made on first use).
    static func keeper(of key: KernelKey, cachePath: String) -> KernelKeyKeeper {
        keepers.withLock { keepers in
            if let kept = keepers[key.description] { return kept }
            let made = KernelKeyKeeper(key: key, cachePath: cachePath)
            keepers[key.description] = made
            return made
        }
    }

    /// This process holds `held`, the key in the keyring (read from it or stored there now);
    /// in a long-running process the timer starts.
    func hold(_ held: [UInt8]) {
        let start = state.withLock { state -> Bool in
            state.held = GuardedKey(held)
            guard CacheKeyRenewal.inBackground, !state.timerStarted else { return false }
            state.timerStarted = true
            return true
        }
        if start { startTimer() }
    }

    /// Before a write, under the cache's lock: the check when it is due.
    func beforeWrite() {
        guard let held = due() else { return }
        restoreIfMissing(held)
    }

    /// The held key when a check is due (and marks it done), else `nil`.
    private func due() -> [UInt8]? {
        let now = POSIX.monotonicNanoseconds()
        let interval = UInt64(Self.interval) * 1_000_000_000
        return state.withLock { state -> [UInt8]? in
            guard let held = state.held, now &- state.lastCheck >= interval else { return nil }
            state.lastCheck = now
            return held.bytes()
        }
    }

    /// Renews the persistent keyring and stores `held` back when the key is not there (call
    /// under the cache's lock).
    private func restoreIfMissing(_ held: [UInt8]) {
        guard case .success(let ring) = KernelKey.persistentKeyring(), key.isAbsent(in: ring) else { return }
        if let refusal = key.store(held, in: ring) {
            logger.warning(
                "the cache key is missing from the kernel keyring and could not be stored back",
                metadata: ["key": "\(key.description)", "reason": "\(refusal.message)"])
        } else {
            logger.notice(
                "the cache key was missing from the kernel keyring (expired or removed) while this process held it; stored it back",
                metadata: ["key": "\(key.description)"])
        }
    }

    /// Every ``interval``: the check, under the cache's lock (taken only when the key is missing).
    private func startTimer() {
        do {
            try POSIX.startThread { [self] in
                var pause = Self.interval
                while true {
                    sleep(UInt32(clamping: pause))
                    pause = Self.interval
                    guard let held = due() else { continue }
                    guard case .success(let ring) = KernelKey.persistentKeyring(), key.isAbsent(in: ring) else { continue }
                    do {
                        try CacheFileLock.withLock(path: lockPath, timeout: .seconds(10)) { restoreIfMissing(held) }
                    } catch {  // the cache's lock held too long: again within a minute (or at the next write)
                        state.withLock { $0.lastCheck = POSIX.monotonicNanoseconds() &- UInt64(Self.interval) * 1_000_000_000 }
                        pause = min(pause, 60)
                    }
                }
            }
        } catch {
            logger.warning("cannot start the cache key's renewal timer; renewing before writes only", metadata: ["error": "\(error)"])
        }
    }

    /// A tenth of the persistent keyring's expiry, in seconds (at least 1).
    static var interval: Int { max(1, expiry / 10) }

    /// `/proc/sys/kernel/keys/persistent_keyring_expiry` (or the file
    /// `AUTH_SIDECAR_TEST_KEYRING_EXPIRY` names: tests only), read once; 3 days when unreadable.
    private static let expiry = readExpiry()

    private static func readExpiry() -> Int {
        let path = getenv("AUTH_SIDECAR_TEST_KEYRING_EXPIRY").map { String(cString: $0) } ?? "/proc/sys/kernel/keys/persistent_keyring_expiry"
        let digits = (POSIX.readFile(path, limit: 64) ?? []).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int(String(decoding: digits, as: UTF8.self)) ?? 259_200
    }
}

/// Whether this process keeps the cache keys it holds alive with a timer (a long-running
/// process: the agent, the stdio mode) besides the check before each write.
public enum CacheKeyRenewal {
    private static let enabled = Atomic<Bool>(false)

    /// Turns the timer on (call at start, before the cache is opened).
    public static func runInBackground() { enabled.store(true, ordering: .relaxed) }

    static var inBackground: Bool { enabled.load(ordering: .relaxed) }
}
