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
    private var pending = OutputBlocks()
    private var closing = false
    private var finished = false
    private var broken = false
    /// Messages were queued for a sleeping writer without waking it (``flush()`` will).
    private var wakeOwed = false
    /// No writer thread could be started: senders write themselves, under the lock.
    private var writesDirectly = false
    public let framing: Framing
    /// A deferred wake is given up once this much is queued: the writer takes it while the reader
    /// goes on (a reader answering a 64 KB chunk of cached-token requests queues 2 MB).
    static let deferredWakeLimit = 256 << 10
    /// The capacity asked for an output pipe once a batch outgrows a default pipe (64 KB): a
    /// pipelining client then takes 1 MB per read, where the writer stopped every 64 KB (about
    /// 18 token replies) for a switch to the client and back. Asked only then, because a
    /// user's pipes share a kernel allowance (`pipe-user-pages-soft`), and a client sending one
    /// request at a time never needs it.
    static let pipeCapacity: Int32 = 1 << 20
    /// Whether the pipe was enlarged, or tried; the writer's own.
    private var pipeSized = false

    public init(fd: Int32, framing: Framing) {
        self.fd = fd
        self.framing = framing
        do { try POSIX.startThread { [self] in writerLoop() } } catch { writesDirectly = true }
    }

    /// Queues one message.
    public func send(_ message: JSONValue) {
        send(serialized: [message.serialized()])
    }

    /// Queues one message already serialized (by this process: the text is trusted), in
    /// pieces sent one after the other. With
    /// `deferringWake`, an idle writer is left asleep until ``flush()`` or the next send
    /// without it: a reader answering many requests of one input chunk wakes it once.
    public func send(serialized pieces: [[UInt8]], deferringWake: Bool = false) {
        lock.withLock {
            guard !closing, !broken else { return }
            if writesDirectly {
                var framed: [UInt8] = []
                framing.frame(pieces: pieces, into: &framed)
                broken = !POSIX.writeAll(fd, framed)
                return
            }
            let wasEmpty = pending.isEmpty
            pending.append(pieces, framing: framing)
            if deferringWake, pending.byteCount < Self.deferredWakeLimit {
                if wasEmpty { wakeOwed = true }
            } else if wasEmpty || wakeOwed {
                wakeOwed = false
                lock.broadcast()
            }
        }
    }

    /// Wakes the writer for what was queued with `deferringWake`.
    public func flush() {
        lock.withLock {
            guard wakeOwed else { return }
            wakeOwed = false
            lock.broadcast()
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
        var batch: [[UInt8]] = []
        while true {
            let stop: Bool = lock.withLock {
                lock.wait(until: { !pending.isEmpty || closing })
                pending.take(into: &batch)
                return closing && batch.isEmpty
            }
            if stop { break }
            if !pipeSized, batch.reduce(0, { $0 + $1.count }) > 64 << 10 {
                pipeSized = true
                POSIX.enlargePipe(fd, to: Self.pipeCapacity)
            }
            let written = batch.allSatisfy { POSIX.writeAll(fd, $0) }
            lock.withLock {
                pending.recycle(&batch)
                if !written {
                    broken = true
                    pending.discardQueued()
                }
            }
        }
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }
}
