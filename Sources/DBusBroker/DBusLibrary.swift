import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libdbus-1's entry points, resolved with `dlopen`/`dlsym` on first use, as libcurl and
/// libsecret are: the lean binary links nothing more, a machine without libdbus still runs,
/// and a process that never asks the broker never loads it (ARCHITECTURE.md, "Start-up cost").
/// Only non-variadic calls are used (a message's arguments go through a `DBusMessageIter`),
/// so no header is needed: the prototypes are declared here.
struct DBusLibrary: @unchecked Sendable {
    typealias Pointer = UnsafeMutableRawPointer
    typealias Text = UnsafePointer<CChar>
    typealias ErrorInit = @convention(c) (Pointer?) -> Void
    typealias ErrorIsSet = @convention(c) (Pointer?) -> UInt32
    typealias OpenPrivate = @convention(c) (Text?, Pointer?) -> Pointer?
    typealias Register = @convention(c) (Pointer?, Pointer?) -> UInt32
    typealias SetExitOnDisconnect = @convention(c) (Pointer?, UInt32) -> Void
    typealias Unref = @convention(c) (Pointer?) -> Void
    typealias Ref = @convention(c) (Pointer?) -> Pointer?
    typealias NameHasOwner = @convention(c) (Pointer?, Text?, Pointer?) -> UInt32
    typealias NewMethodCall = @convention(c) (Text?, Text?, Text?, Text?) -> Pointer?
    typealias IterInitAppend = @convention(c) (Pointer?, Pointer?) -> Void
    typealias IterAppendBasic = @convention(c) (Pointer?, Int32, UnsafeRawPointer?) -> UInt32
    typealias SendWithReplyAndBlock = @convention(c) (Pointer?, Pointer?, Int32, Pointer?) -> Pointer?
    typealias IterInit = @convention(c) (Pointer?, Pointer?) -> UInt32
    typealias IterArgType = @convention(c) (Pointer?) -> Int32
    typealias IterGetBasic = @convention(c) (Pointer?, Pointer?) -> Void
    typealias ThreadsInit = @convention(c) () -> UInt32
    typealias SendWithReply = @convention(c) (Pointer?, Pointer?, UnsafeMutablePointer<Pointer?>?, Int32) -> UInt32
    typealias ReadWriteDispatch = @convention(c) (Pointer?, Int32) -> UInt32
    typealias PendingCompleted = @convention(c) (Pointer?) -> UInt32
    typealias PendingStealReply = @convention(c) (Pointer?) -> Pointer?
    typealias SetErrorFromMessage = @convention(c) (Pointer?, Pointer?) -> UInt32
    typealias SetAutoStart = @convention(c) (Pointer?, UInt32) -> Void

    let errorInit: ErrorInit
    let errorIsSet: ErrorIsSet
    let errorFree: ErrorInit
    let openPrivate: OpenPrivate
    let register: Register
    let setExitOnDisconnect: SetExitOnDisconnect
    let connectionClose: Unref
    let connectionRef: Ref
    let connectionUnref: Unref
    let nameHasOwner: NameHasOwner
    let newMethodCall: NewMethodCall
    let iterInitAppend: IterInitAppend
    let iterAppendBasic: IterAppendBasic
    let sendWithReplyAndBlock: SendWithReplyAndBlock
    let iterInit: IterInit
    let iterArgType: IterArgType
    let iterGetBasic: IterGetBasic
    let messageUnref: Unref
    let sendWithReply: SendWithReply
    let readWriteDispatch: ReadWriteDispatch
    let pendingCompleted: PendingCompleted
    let pendingStealReply: PendingStealReply
    let pendingCancel: Unref
    let pendingUnref: Unref
    let setErrorFromMessage: SetErrorFromMessage
    let setAutoStart: SetAutoStart

    /// `DBUS_TYPE_STRING`.
    static let stringType = Int32(UInt8(ascii: "s"))
    /// `DBUS_TIMEOUT_INFINITE`.
    static let noTimeout = Int32.max
    /// Room for a `DBusError` (4 words) and a `DBusMessageIter` (about 9 words), with margin.
    static let errorSize = 64
    static let iterSize = 128

    /// The library, kept once loaded; why not, when it cannot be (tried again at the next use).
    static func shared() -> Result<DBusLibrary, BrokerCallError> {
        loaded.get { load(names: candidates) }
    }

    private static let loaded = LoadedOnSuccess<DBusLibrary, BrokerCallError>()

    /// Debian's `libdbus-1-3`, then the development link.
    static let candidates = ["libdbus-1.so.3", "libdbus-1.so"]

    static func load(names: [String]) -> Result<DBusLibrary, BrokerCallError> {
        let library: DynamicLibrary
        switch DynamicLibrary.open(firstOf: names) {
        case .success(let opened): library = opened
        case .failure(let error): return .failure(.unavailable("cannot load libdbus-1 (install libdbus-1-3): \(error.reasons)"))
        }
        guard let threadsInit = library.symbol("dbus_threads_init_default", as: ThreadsInit.self),
            let errorInit = library.symbol("dbus_error_init", as: ErrorInit.self),
            let errorIsSet = library.symbol("dbus_error_is_set", as: ErrorIsSet.self),
            let errorFree = library.symbol("dbus_error_free", as: ErrorInit.self),
            let openPrivate = library.symbol("dbus_connection_open_private", as: OpenPrivate.self),
            let register = library.symbol("dbus_bus_register", as: Register.self),
            let setExit = library.symbol("dbus_connection_set_exit_on_disconnect", as: SetExitOnDisconnect.self),
            let close = library.symbol("dbus_connection_close", as: Unref.self),
            let ref = library.symbol("dbus_connection_ref", as: Ref.self),
            let unref = library.symbol("dbus_connection_unref", as: Unref.self),
            let nameHasOwner = library.symbol("dbus_bus_name_has_owner", as: NameHasOwner.self),
            let newMethodCall = library.symbol("dbus_message_new_method_call", as: NewMethodCall.self),
            let iterInitAppend = library.symbol("dbus_message_iter_init_append", as: IterInitAppend.self),
            let iterAppendBasic = library.symbol("dbus_message_iter_append_basic", as: IterAppendBasic.self),
            let send = library.symbol("dbus_connection_send_with_reply_and_block", as: SendWithReplyAndBlock.self),
            let iterInit = library.symbol("dbus_message_iter_init", as: IterInit.self),
            let iterArgType = library.symbol("dbus_message_iter_get_arg_type", as: IterArgType.self),
            let iterGetBasic = library.symbol("dbus_message_iter_get_basic", as: IterGetBasic.self),
            let messageUnref = library.symbol("dbus_message_unref", as: Unref.self),
            let sendWithReply = library.symbol("dbus_connection_send_with_reply", as: SendWithReply.self),
            let readWriteDispatch = library.symbol("dbus_connection_read_write_dispatch", as: ReadWriteDispatch.self),
            let pendingCompleted = library.symbol("dbus_pending_call_get_completed", as: PendingCompleted.self),
            let pendingStealReply = library.symbol("dbus_pending_call_steal_reply", as: PendingStealReply.self),
            let pendingCancel = library.symbol("dbus_pending_call_cancel", as: Unref.self),
            let pendingUnref = library.symbol("dbus_pending_call_unref", as: Unref.self),
            let setErrorFromMessage = library.symbol("dbus_set_error_from_message", as: SetErrorFromMessage.self),
            let setAutoStart = library.symbol("dbus_message_set_auto_start", as: SetAutoStart.self)
        else {
            return .failure(.unavailable("libdbus-1 lacks an expected symbol"))
        }
        // One connection is used from several threads (the agent's requests).
        guard threadsInit() != 0 else { return .failure(.unavailable("dbus_threads_init_default failed")) }
        return .success(
            DBusLibrary(
                errorInit: errorInit, errorIsSet: errorIsSet, errorFree: errorFree, openPrivate: openPrivate,
                register: register, setExitOnDisconnect: setExit, connectionClose: close, connectionRef: ref,
                connectionUnref: unref, nameHasOwner: nameHasOwner, newMethodCall: newMethodCall,
                iterInitAppend: iterInitAppend, iterAppendBasic: iterAppendBasic, sendWithReplyAndBlock: send,
                iterInit: iterInit, iterArgType: iterArgType, iterGetBasic: iterGetBasic, messageUnref: messageUnref,
                sendWithReply: sendWithReply, readWriteDispatch: readWriteDispatch, pendingCompleted: pendingCompleted,
                pendingStealReply: pendingStealReply, pendingCancel: pendingCancel, pendingUnref: pendingUnref,
                setErrorFromMessage: setErrorFromMessage, setAutoStart: setAutoStart))
    }

    /// Runs `body` with a fresh `DBusError`; returns its name and message when `body` set it (freed after).
    func withError<T>(_ body: (Pointer) -> T) -> (T, (name: String, message: String)?) {
        let error = Pointer.allocate(byteCount: Self.errorSize, alignment: 8)
        defer { error.deallocate() }
        errorInit(error)
        let value = body(error)
        guard errorIsSet(error) != 0 else { return (value, nil) }
        defer { errorFree(error) }
        // `DBusError` begins with `const char *name; const char *message;`.
        let name = error.load(as: Text?.self).map { String(cString: $0) } ?? "unknown"
        let message = error.load(fromByteOffset: MemoryLayout<Pointer>.size, as: Text?.self).map { String(cString: $0) } ?? ""
        return (value, (name, message))
    }
}
