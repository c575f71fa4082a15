import JSON
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes framed messages to a file descriptor from a dedicated thread.
///
/// Senders serialize and frame on their own thread, then append under a lock, so output is
/// never interleaved; the writer takes everything pending in one `write` loop, so replies
/// batch up under load and go out at once when idle. A write error (the reader went away)
/// makes later sends no-ops instead of killing the process.
public final class OutputChannel: @unchecked Sendable {
    private let fd: Int32
    private let lock = ConditionLock()
    private var pending: [UInt8] = []
    private var closing = false
    private var finished = false
    private var broken = false
    /// No writer thread could be started: senders write themselves, under the lock.
    private var writesDirectly = false
    public let framing: Framing

    public init(fd: Int32, framing: Framing) {
        self.fd = fd
        self.framing = framing
        do { try POSIX.startThread { [self] in writerLoop() } } catch { writesDirectly = true }
    }

    /// Queues one message.
    public func send(_ message: JSONValue) {
        var framed: [UInt8] = []
        framing.frame(message.serialized(), into: &framed)
        lock.withLock {
            guard !closing, !broken else { return }
            if writesDirectly {
                broken = !POSIX.writeAll(fd, framed)
                return
            }
            let wasEmpty = pending.isEmpty
            pending.append(contentsOf: framed)
            if wasEmpty { lock.broadcast() }
        }
    }

    /// Writes everything queued, then stops the writer. Later sends are dropped.
    public func close(timeoutSeconds: Double = 5) {
        lock.withLock {
            closing = true
            lock.broadcast()
            if !writesDirectly { lock.wait(until: { finished }, timeoutSeconds: timeoutSeconds) }
        }
    }

    private func writerLoop() {
        var batch: [UInt8] = []
        while true {
            let stop: Bool = lock.withLock {
                lock.wait(until: { !pending.isEmpty || closing })
                swap(&batch, &pending)
                return closing && batch.isEmpty
            }
            if stop { break }
            if !POSIX.writeAll(fd, batch) {
                lock.withLock {
                    broken = true
                    pending = []
                }
            }
            batch.removeAll(keepingCapacity: batch.capacity <= 1 << 20)
        }
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }
}
