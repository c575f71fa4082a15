#if canImport(Glibc)
    import Glibc
#endif

/// A shared library opened with `dlopen` on first use (libcurl, libsecret), so the binary
/// runs where it is not installed and says why when a feature needs it.
public struct DynamicLibrary: @unchecked Sendable {
    /// The `dlopen` handle; never closed (the library stays for the process's life).
    public let handle: UnsafeMutableRawPointer

    /// The first of `names` that opens (`RTLD_NOW | RTLD_LOCAL`); else each name's `dlerror`
    /// joined with "; ".
    public static func open(firstOf names: [String]) -> Result<DynamicLibrary, DynamicLibraryError> {
        var reasons: [String] = []
        for name in names {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) { return .success(DynamicLibrary(handle: handle)) }
            reasons.append(dlerror().map { String(cString: $0) } ?? "\(name): not found")
        }
        return .failure(DynamicLibraryError(reasons: reasons.joined(separator: "; ")))
    }

    /// The symbol `name` as a C function pointer of `type`; `nil` when the library lacks it.
    /// (`dlsym` on the handle also searches the library's own dependencies.)
    public func symbol<T>(_ name: String, as type: T.Type) -> T? {
        dlsym(handle, name).map { unsafeBitCast($0, to: type) }
    }

    /// The symbol's address (for a variadic function, called through a typed shim).
    public func address(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, name)
    }
}

/// Why no candidate library opened: each one's `dlerror`, joined.
public struct DynamicLibraryError: Error, Sendable {
    public let reasons: String
}

/// A library's entry points, loaded on first use and kept once they load. A failure is
/// returned but not kept: the next use tries again, so a load that failed for a passing
/// reason (out of descriptors, the package installed meanwhile) does not fail every later
/// call of the process.
///
/// ```swift
/// static let loaded = LoadedOnSuccess<CurlLibrary, HTTPError>()
/// let curl = try loaded.get { load(names: candidates) }.get()
/// ```
public final class LoadedOnSuccess<Value: Sendable, Failure: Error>: Sendable {
    private let loaded = PthreadMutex<Value?>(nil)

    public init() {}

    /// The kept value, else the result of `load` (kept when it succeeds). Loads run one at a time.
    public func get(_ load: () -> Result<Value, Failure>) -> Result<Value, Failure> {
        loaded.withLock { kept in
            if let kept { return .success(kept) }
            let fresh = load()
            if case .success(let value) = fresh { kept = value }
            return fresh
        }
    }
}
