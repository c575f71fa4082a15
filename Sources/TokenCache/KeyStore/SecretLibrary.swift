import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libsecret's entry points (and the few of GLib's its calls need), resolved with
/// `dlopen`/`dlsym` on first use, like libcurl: a machine without libsecret still runs, the
/// lean static build links nothing more, and a start that never asks the Secret Service (no
/// D-Bus session) never loads it. Only the non-variadic calls are used (`…v_sync`, taking
/// a `GHashTable` of attributes), so no header is needed: the prototypes are declared here.
struct SecretLibrary: @unchecked Sendable {
    typealias Pointer = UnsafeMutableRawPointer
    typealias ErrorOut = UnsafeMutablePointer<Pointer?>
    typealias HashTableNew = @convention(c) (Pointer?, Pointer?) -> Pointer?
    typealias HashTableInsert = @convention(c) (Pointer?, Pointer?, Pointer?) -> Int32
    typealias Unref = @convention(c) (Pointer?) -> Void
    typealias CancellableNew = @convention(c) () -> Pointer?
    typealias SchemaNew = @convention(c) (UnsafePointer<CChar>?, Int32, Pointer?) -> Pointer?
    typealias Lookup = @convention(c) (Pointer?, Pointer?, Pointer?, ErrorOut?) -> UnsafeMutablePointer<CChar>?
    typealias Store =
        @convention(c) (
            Pointer?, Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Pointer?, ErrorOut?
        ) -> Int32
    typealias PasswordFree = @convention(c) (UnsafeMutablePointer<CChar>?) -> Void
    typealias ServiceGet = @convention(c) (Int32, Pointer?, ErrorOut?) -> Pointer?
    typealias CollectionForAlias = @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?
    typealias GetLocked = @convention(c) (Pointer?) -> Int32

    let hashTableNew: HashTableNew
    let hashTableInsert: HashTableInsert
    let hashTableUnref: Unref
    let strHash: Pointer
    let strEqual: Pointer
    let errorFree: Unref
    let cancellableNew: CancellableNew
    let cancellableCancel: Unref
    let objectUnref: Unref
    let schemaNew: SchemaNew
    let schemaUnref: Unref
    let lookup: Lookup
    let store: Store
    let passwordFree: PasswordFree
    let serviceGet: ServiceGet
    let collectionForAlias: CollectionForAlias
    let collectionGetLocked: GetLocked

    /// The library, kept once loaded; why not, when it cannot be (tried again at the next use,
    /// as libcurl is: a load that found no descriptor free does not fail every later one).
    static func shared() -> Result<SecretLibrary, SecretServiceFailure> {
        loaded.get { load(names: candidates) }
    }

    private static let loaded = LoadedOnSuccess<SecretLibrary, SecretServiceFailure>()

    /// Debian's `libsecret-1-0`, then the development link.
    static let candidates = ["libsecret-1.so.0", "libsecret-1.so"]

    static func load(names: [String]) -> Result<SecretLibrary, SecretServiceFailure> {
        let library: DynamicLibrary
        switch DynamicLibrary.open(firstOf: names) {
        case .success(let opened): library = opened
        case .failure(let error): return .failure(.libraryMissing(error.reasons))
        }
        // Symbols are looked up in libsecret's own dependencies too (GLib, GIO).
        guard let hashTableNew = library.symbol("g_hash_table_new", as: HashTableNew.self),
            let hashTableInsert = library.symbol("g_hash_table_insert", as: HashTableInsert.self),
            let hashTableUnref = library.symbol("g_hash_table_unref", as: Unref.self),
            let strHash = library.address("g_str_hash"), let strEqual = library.address("g_str_equal"),
            let errorFree = library.symbol("g_error_free", as: Unref.self),
            let cancellableNew = library.symbol("g_cancellable_new", as: CancellableNew.self),
            let cancellableCancel = library.symbol("g_cancellable_cancel", as: Unref.self),
            let objectUnref = library.symbol("g_object_unref", as: Unref.self),
            let schemaNew = library.symbol("secret_schema_newv", as: SchemaNew.self),
            let schemaUnref = library.symbol("secret_schema_unref", as: Unref.self),
            let lookup = library.symbol("secret_password_lookupv_sync", as: Lookup.self),
            let store = library.symbol("secret_password_storev_sync", as: Store.self),
            let passwordFree = library.symbol("secret_password_free", as: PasswordFree.self),
            let serviceGet = library.symbol("secret_service_get_sync", as: ServiceGet.self),
            let collectionForAlias = library.symbol("secret_collection_for_alias_sync", as: CollectionForAlias.self),
            let collectionGetLocked = library.symbol("secret_collection_get_locked", as: GetLocked.self)
        else {
            return .failure(.libraryMissing("libsecret lacks an expected symbol"))
        }
        return .success(
            SecretLibrary(
                hashTableNew: hashTableNew, hashTableInsert: hashTableInsert, hashTableUnref: hashTableUnref,
                strHash: strHash, strEqual: strEqual, errorFree: errorFree, cancellableNew: cancellableNew,
                cancellableCancel: cancellableCancel, objectUnref: objectUnref, schemaNew: schemaNew,
                schemaUnref: schemaUnref, lookup: lookup, store: store, passwordFree: passwordFree,
                serviceGet: serviceGet, collectionForAlias: collectionForAlias, collectionGetLocked: collectionGetLocked))
    }

    /// A `GHashTable` of `strings` (each a C string the caller keeps alive), name to value.
    func table(_ pairs: [(UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?)]) -> Pointer? {
        let table = hashTableNew(strHash, strEqual)
        for (name, value) in pairs { _ = hashTableInsert(table, name, value) }
        return table
    }

    /// The message of a `GError` (its `message` member follows two 32-bit fields), freed.
    func message(_ error: Pointer?) -> String? {
        guard let error else { return nil }
        defer { errorFree(error) }
        return error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? "unknown error"
    }
}

/// Why a Secret Service call gave nothing.
public enum SecretServiceFailure: Error, Sendable, Equatable {
    /// libsecret cannot be loaded.
    case libraryMissing(String)
    /// The service answered with an error (not running, not reachable, refused).
    case serviceError(String)
    /// No answer within the time limit (locked and waiting for a prompt, or stuck).
    case timedOut(Duration)
    /// The default collection is missing or locked (a new item would need a prompt).
    case locked(String)
}
