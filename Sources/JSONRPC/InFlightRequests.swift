import JSON

/// The requests running in their own tasks, so that `$/cancelRequest` can find one by id,
/// a duplicate id can be refused, and shutdown can wait for or cancel them all.
final class InFlightRequests: @unchecked Sendable {
    private struct Entry {
        let id: RequestID
        var task: Task<Void, Never>?
        var cancelRequested = false
    }

    private let lock = ConditionLock()
    private var entries: [Int: Entry] = [:]
    private var serialByID: [RequestID: Int] = [:]
    private var nextSerial = 0

    /// At most this many requests run at once; the reader waits for a free slot (so a peer
    /// that pipelines faster than requests finish is slowed down through the pipe, and memory
    /// stays bounded). Nothing in flight waits for the reader except a client's `openUrl`
    /// reply, and only one interactive sign-in runs at a time, so this cannot deadlock.
    let limit: Int

    init(limit: Int = 1024) { self.limit = limit }

    /// Reserves a slot for `id`, waiting while `limit` requests run; `nil` when a request
    /// with that id is still running. A `null` id is never tracked by id (it cannot be
    /// cancelled or duplicated).
    func reserve(_ id: RequestID) -> Int? {
        lock.withLock {
            if id != .null, serialByID[id] != nil { return nil }
            lock.wait(until: { entries.count < limit })
            if id != .null, serialByID[id] != nil { return nil }
            nextSerial += 1
            entries[nextSerial] = Entry(id: id)
            if id != .null { serialByID[id] = nextSerial }
            return nextSerial
        }
    }

    /// Whether a request with this (non-null) id is running.
    func contains(_ id: RequestID) -> Bool {
        id != .null && lock.withLock { serialByID[id] != nil }
    }

    /// Attaches the task to its slot (cancelling it at once if a cancel already arrived).
    func attach(_ task: Task<Void, Never>, to serial: Int) {
        let cancelNow: Bool = lock.withLock {
            guard entries[serial] != nil else { return false }  // already finished
            entries[serial]?.task = task
            return entries[serial]?.cancelRequested ?? false
        }
        if cancelNow { task.cancel() }
    }

    /// Frees the request's id (before its reply is written, so a peer that reuses the id as
    /// soon as it reads the reply is never refused).
    func releaseID(_ serial: Int) {
        lock.withLock {
            guard let entry = entries[serial], serialByID[entry.id] == serial else { return }
            serialByID[entry.id] = nil
        }
    }

    /// Frees the slot once the request has been answered.
    func finish(_ serial: Int) {
        lock.withLock {
            guard let entry = entries.removeValue(forKey: serial) else { return }
            if serialByID[entry.id] == serial { serialByID[entry.id] = nil }
            if entries.isEmpty || entries.count == limit - 1 { lock.broadcast() }
        }
    }

    /// Cancels the running request with `id`, if any.
    func cancel(_ id: RequestID) {
        let task: Task<Void, Never>? = lock.withLock {
            guard let serial = serialByID[id] else { return nil }
            entries[serial]?.cancelRequested = true
            return entries[serial]?.task
        }
        task?.cancel()
    }

    /// Cancels every running request.
    func cancelAll() {
        let tasks: [Task<Void, Never>] = lock.withLock {
            for serial in entries.keys { entries[serial]?.cancelRequested = true }
            return entries.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    /// Blocks the calling thread until no request runs, or the timeout passes.
    @discardableResult
    func waitUntilEmpty(timeoutSeconds: Double? = nil) -> Bool {
        lock.withLock { lock.wait(until: { entries.isEmpty }, timeoutSeconds: timeoutSeconds) }
    }

    var count: Int { lock.withLock { entries.count } }
}
