import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A Secret Service as the key store and the import see it: libsecret's
/// (``LibsecretService``), or a test's fake.
public protocol SecretServiceAccess: Sendable {
    /// The secret of the item with `attributes` under `schema`; `nil`: no such item.
    func lookup(schema: String, attributes: [String: String]) -> Result<String?, SecretServiceFailure>
    /// Stores (or replaces) the item in the default collection.
    func store(schema: String, attributes: [String: String], label: String, secret: String) -> Result<Void, SecretServiceFailure>
    /// Whether the default collection exists and is unlocked (a new item needs no prompt).
    func defaultCollectionUnlocked() -> Result<Void, SecretServiceFailure>
}

extension SecretServiceFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .libraryMissing(let reason): "libsecret cannot be loaded (\(reason))"
        case .serviceError(let message): "the Secret Service cannot be reached: \(message)"
        case .timedOut(let limit): "no answer from the Secret Service within \(limit.components.seconds) s (locked, waiting on an unlock prompt?)"
        case .locked(let reason): reason
        }
    }
}

/// libsecret's synchronous calls, each on a thread of its own with a time limit: a sync call
/// can block on an unlock prompt nobody will answer (no display), and start-up must never
/// hang. Past the limit the call is cancelled (its `GCancellable`) and abandoned.
public struct LibsecretService: SecretServiceAccess {
    /// How long one call may take.
    public let timeLimit: Duration

    public init(timeLimit: Duration = .seconds(3)) { self.timeLimit = timeLimit }

    public func lookup(schema: String, attributes: [String: String]) -> Result<String?, SecretServiceFailure> {
        bounded { library, cancellable in
            Self.withSchema(library, schema, attributes) { schemaPointer, table in
                var error: SecretLibrary.Pointer?
                let found = library.lookup(schemaPointer, table, cancellable, &error)
                if let message = library.message(error) { return .failure(.serviceError(message)) }
                guard let found else { return .success(nil) }
                defer { library.passwordFree(found) }
                return .success(String(cString: found))
            }
        }
    }

    public func store(schema: String, attributes: [String: String], label: String, secret: String) -> Result<Void, SecretServiceFailure> {
        bounded { library, cancellable in
            Self.withSchema(library, schema, attributes) { schemaPointer, table in
                var error: SecretLibrary.Pointer?
                let stored = library.store(schemaPointer, table, nil, label, secret, cancellable, &error)
                if let message = library.message(error) { return .failure(.serviceError(message)) }
                return stored != 0 ? .success(()) : .failure(.serviceError("the item was not stored"))
            }
        }
    }

    public func defaultCollectionUnlocked() -> Result<Void, SecretServiceFailure> {
        bounded { library, cancellable in
            var error: SecretLibrary.Pointer?
            let service = library.serviceGet(0, cancellable, &error)  // SECRET_SERVICE_NONE
            if let message = library.message(error) { return .failure(.serviceError(message)) }
            guard let service else { return .failure(.serviceError("no service")) }
            defer { library.objectUnref(service) }
            let collection = library.collectionForAlias(service, "default", 0, cancellable, &error)
            if let message = library.message(error) { return .failure(.serviceError(message)) }
            guard let collection else { return .failure(.locked("the Secret Service has no default collection (keyring)")) }
            defer { library.objectUnref(collection) }
            if library.collectionGetLocked(collection) != 0 {
                return .failure(.locked("the Secret Service's default collection (keyring) is locked"))
            }
            return .success(())
        }
    }

    /// Runs `body` with a schema of string attributes and the attribute table, freed after.
    private static func withSchema<T>(
        _ library: SecretLibrary, _ schema: String, _ attributes: [String: String],
        _ body: (SecretLibrary.Pointer?, SecretLibrary.Pointer?) -> Result<T, SecretServiceFailure>
    ) -> Result<T, SecretServiceFailure> {
        let names = attributes.keys.sorted().map { strdup($0) }
        let values = attributes.keys.sorted().map { strdup(attributes[$0] ?? "") }
        defer { for pointer in names + values { free(pointer) } }
        // SECRET_SCHEMA_ATTRIBUTE_STRING is 0: a NULL value in the names-and-types table.
        let types = library.table(names.map { ($0, nil) })
        let schemaPointer = library.schemaNew(schema, 0, types)
        library.hashTableUnref(types)
        defer { library.schemaUnref(schemaPointer) }
        let table = library.table(Array(zip(names, values)))
        defer { library.hashTableUnref(table) }
        return body(schemaPointer, table)
    }

    private struct Handle: @unchecked Sendable { let pointer: SecretLibrary.Pointer? }

    private struct Call<T: Sendable>: Sendable {
        var result: Result<T, SecretServiceFailure>?
        var finished = false
    }

    /// `body` on a thread of its own; its result, or ``SecretServiceFailure/timedOut(_:)``.
    private func bounded<T: Sendable>(
        _ body: @escaping @Sendable (SecretLibrary, SecretLibrary.Pointer?) -> Result<T, SecretServiceFailure>
    ) -> Result<T, SecretServiceFailure> {
        let library: SecretLibrary
        switch SecretLibrary.shared() {
        case .success(let loaded): library = loaded
        case .failure(let failure): return .failure(failure)
        }
        let cancellable = Handle(pointer: library.cancellableNew())
        let call = PthreadMutex(Call<T>())
        do {
            try POSIX.startThread {
                let result = body(library, cancellable.pointer)
                call.withLockAndBroadcast {
                    $0.result = result
                    $0.finished = true
                }
                library.objectUnref(cancellable.pointer)  // after `finished`: no cancel can follow
            }
        } catch {
            library.objectUnref(cancellable.pointer)
            return .failure(.serviceError("cannot start a thread: \(error)"))
        }
        let milliseconds = timeLimit.components.seconds * 1000 + timeLimit.components.attoseconds / 1_000_000_000_000_000
        let deadline = POSIX.monotonicMilliseconds() + milliseconds
        if let result = call.wait(until: deadline, for: { $0.result }) { return result }
        return call.withLock { state in
            if let result = state.result { return result }
            library.cancellableCancel(cancellable.pointer)  // still running: it owns the cancellable
            return .failure(.timedOut(timeLimit))
        }
    }
}
