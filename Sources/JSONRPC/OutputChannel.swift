import JSON
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes framed messages to a file descriptor, from a dedicated thread when they must wait.
///
/// Senders serialize and frame on their own thread, then append under a lock, so output is
/// never interleaved; one batch is written at a time, by one thread. The reader's own replies
/// (queued with `deferringWake`) are written by the reader at ``flush()`` when that cannot
/// block (a little output to a pipe the client has emptied, or to a file): one request
/// answered from memory needs no other thread. Everything else goes to a writer thread,
/// started the first time it is needed, which takes all that is pending in one `write` loop,
/// so replies batch up under load and go out at once when idle. A write error (the reader
/// went away) makes later sends no-ops instead of killing the process.
public final class OutputChannel: @unchecked Sendable {
    private let fd: Int32
    private let lock = ConditionLock()
    private var pending = OutputBlocks()
    private var closing = false
    private var finished = false
    private var broken = false
    /// Messages were queued without waking anyone (``flush()`` writes or wakes).
    private var wakeOwed = false
    /// A batch is being written (by the writer thread or by a flushing reader): nobody else
    /// writes until it is done.
    private var writing = false
    private var writer = Writer.notStarted
    public let framing: Framing
    /// A deferred wake is given up once this much is queued: the writer takes it while the reader
    /// goes on (a reader answering a 64 KB chunk of cached-token requests queues 2 MB).
    static let deferredWakeLimit = 256 << 10
    /// The most a flushing reader writes itself (when the descriptor takes it without blocking).
    static let directWriteLimit = 64 << 10
    /// The capacity asked for an output pipe once a batch outgrows a default pipe (64 KB): a
    /// pipelining client then takes 1 MB per read, where the writer stopped every 64 KB (about
    /// 18 token replies) for a switch to the client and back. Asked only then, because a
    /// user's pipes share a kernel allowance (`pipe-user-pages-soft`), and a client sending one
    /// request at a time never needs it.
    static let pipeCapacity: Int32 = 1 << 20
    /// Whether the pipe was enlarged, or tried; the writer's own.
    private var pipeSized = false

    private enum Writer {
        case notStarted, running
        /// No thread could be started: senders write themselves, under the lock.
        case unavailable
    }

    /// Whether the writer thread was started (for tests).
    var writerStarted: Bool { lock.withLock { if case .running = writer { true } else { false } } }

    public init(fd: Int32, framing: Framing) {
        self.fd = fd
        self.framing = framing
    }

    /// Queues one message (`deferringWake`: as in ``send(serialized:deferringWake:)``).
    public func send(_ message: JSONValue, deferringWake: Bool = false) {
        send(serialized: [message.serialized()], deferringWake: deferringWake)
    }

    /// Queues one message already serialized (by this process: the text is trusted), in
    /// pieces sent one after the other. With `deferringWake`, nothing is written until
    /// ``flush()`` or the next send without it: a reader answering many requests of one input
    /// chunk writes them, or wakes the writer, once.
    public func send(serialized pieces: [[UInt8]], deferringWake: Bool = false) {
        lock.withLock {
            guard !closing, !broken else { return }
            if case .unavailable = writer {
                var framed: [UInt8] = []
                framing.frame(pieces: pieces, into: &framed)
                lock.wait(until: { !writing })
                broken = !POSIX.writeAll(fd, framed)
                return
            }
            let wasEmpty = pending.isEmpty
            pending.append(pieces, framing: framing)
            if deferringWake, pending.byteCount < Self.deferredWakeLimit {
                if wasEmpty { wakeOwed = true }
            } else if wasEmpty || wakeOwed {
                wakeOwed = false
                wakeWriter()
            }
        }
    }

    /// Sends what was queued with `deferringWake`: written by the caller when nobody else is
    /// writing and the descriptor takes it without blocking, else handed to the writer.
    public func flush() {
        var batch: [[UInt8]] = []
        let writesItself: Bool = lock.withLock {
            guard wakeOwed else { return false }
            wakeOwed = false
            guard !writing, pending.byteCount <= Self.directWriteLimit,
                POSIX.canWriteWithoutBlocking(fd, count: pending.byteCount)
            else {
                wakeWriter()
                return false
            }
            pending.take(into: &batch)
            writing = true
            return true
        }
        if writesItself { write(&batch) }
    }

    /// Writes everything queued, then stops the writer. Later sends are dropped.
    public func close(timeoutSeconds: Double = 5) {
        lock.withLock {
            closing = true
            wakeOwed = false
            if case .notStarted = writer, !pending.isEmpty, !POSIX.canWriteWithoutBlocking(fd, count: pending.byteCount) {
                wakeWriter()  // the client may not read: the wait below gives up in time
            }
            switch writer {
            case .running:
                lock.broadcast()
                lock.wait(until: { finished }, timeoutSeconds: timeoutSeconds)
            case .notStarted, .unavailable:
                guard lock.wait(until: { !writing }, timeoutSeconds: timeoutSeconds) else { return }
                var batch: [[UInt8]] = []
                pending.take(into: &batch)
                if !broken { _ = batch.allSatisfy { POSIX.writeAll(fd, $0) } }
            }
        }
    }

    /// Starts the writer thread if it is not running, and wakes it. Call under the lock.
    private func wakeWriter() {
        if case .notStarted = writer {
            do {
                try POSIX.startThread { [self] in writerLoop() }
                writer = .running
            } catch {
                writer = .unavailable
                lock.wait(until: { !writing })
                var batch: [[UInt8]] = []
                pending.take(into: &batch)
                broken = !batch.allSatisfy { POSIX.writeAll(fd, $0) }
                return
            }
        }
        lock.broadcast()
    }

    /// Writes a batch taken with `writing` set, then gives the blocks back and clears `writing`.
    private func write(_ batch: inout [[UInt8]]) {
        let written = batch.allSatisfy { POSIX.writeAll(fd, $0) }
        lock.withLock {
            pending.recycle(&batch)
            if !written {
                broken = true
                pending.discardQueued()
            }
            writing = false
            if case .running = writer, pending.isEmpty, !closing {
                // The writer thread waits for output to write, and there is none: waking it
                // would only send it back to sleep (two switches per reply under load).
                return
            }
            lock.broadcast()  // the writer, a closing channel or a sender may be waiting for its turn
        }
    }

    private func writerLoop() {
        var batch: [[UInt8]] = []
        while true {
            let stop: Bool = lock.withLock {
                lock.wait(until: { !writing && (!pending.isEmpty || closing) })
                pending.take(into: &batch)
                writing = !batch.isEmpty
                return closing && batch.isEmpty
            }
            if stop { break }
            if !pipeSized, batch.reduce(0, { $0 + $1.count }) > 64 << 10 {
                pipeSized = true
                POSIX.enlargePipe(fd, to: Self.pipeCapacity)
            }
            write(&batch)
        }
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }
}
