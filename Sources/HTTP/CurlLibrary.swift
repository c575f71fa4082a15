import AuthSeams
import CCurl
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libcurl's entry points, resolved with `dlopen`/`dlsym` on first use.
///
/// Linking Debian's libcurl makes the loader relocate ~30 libraries at every start
/// (~7 ms); loading it on the first HTTP call keeps `auth-sidecar`'s start-up at a few ms.
/// The variadic `curl_easy_setopt`/`curl_easy_getinfo` are called through `CCurl`'s shim,
/// which takes the resolved pointer.
struct CurlLibrary: @unchecked Sendable {
    typealias EasyInit = @convention(c) () -> UnsafeMutableRawPointer?
    typealias EasyCleanup = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias EasyPerform = @convention(c) (UnsafeMutableRawPointer?) -> CURLcode
    typealias EasyStrerror = @convention(c) (CURLcode) -> UnsafePointer<CChar>?
    typealias GlobalInit = @convention(c) (Int) -> CURLcode
    typealias SlistAppend = @convention(c) (UnsafeMutablePointer<curl_slist>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<curl_slist>?
    typealias SlistFreeAll = @convention(c) (UnsafeMutablePointer<curl_slist>?) -> Void

    let easyInit: EasyInit
    let easyCleanup: EasyCleanup
    let easyPerform: EasyPerform
    let easyStrerror: EasyStrerror
    let slistAppend: SlistAppend
    let slistFreeAll: SlistFreeAll
    /// `curl_easy_setopt` and `curl_easy_getinfo`, passed to the shim's typed wrappers.
    let setopt: UnsafeMutableRawPointer
    let getinfo: UnsafeMutableRawPointer

    /// The library, loaded and globally initialised once per process; a load that failed is
    /// tried again at the next call (``LoadedOnSuccess``).
    static func shared() throws(HTTPError) -> CurlLibrary {
        try loaded.get { load(names: candidates) }.get()
    }

    private static let loaded = LoadedOnSuccess<CurlLibrary, HTTPError>()

    /// The libraries tried, in order: Debian's OpenSSL build (`libcurl4`), its GnuTLS build
    /// (`libcurl3-gnutls`, often the only one installed: git and apt use it), the dev link.
    static let candidates = ["libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"]

    /// Loads the first of `names` that opens, and initialises it (globally: once per library).
    static func load(names: [String] = candidates) -> Result<CurlLibrary, HTTPError> {
        let library: DynamicLibrary
        switch DynamicLibrary.open(firstOf: names) {
        case .success(let opened): library = opened
        case .failure(let error): return .failure(.libraryUnavailable("cannot load libcurl (install libcurl4): \(error.reasons)"))
        }
        guard let globalInit = library.symbol("curl_global_init", as: GlobalInit.self),
            let easyInit = library.symbol("curl_easy_init", as: EasyInit.self),
            let easyCleanup = library.symbol("curl_easy_cleanup", as: EasyCleanup.self),
            let easyPerform = library.symbol("curl_easy_perform", as: EasyPerform.self),
            let easyStrerror = library.symbol("curl_easy_strerror", as: EasyStrerror.self),
            let slistAppend = library.symbol("curl_slist_append", as: SlistAppend.self),
            let slistFreeAll = library.symbol("curl_slist_free_all", as: SlistFreeAll.self),
            let setopt = library.address("curl_easy_setopt"),
            let getinfo = library.address("curl_easy_getinfo")
        else {
            return .failure(.libraryUnavailable("libcurl lacks an expected symbol"))
        }
        guard globalInit(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK else {
            return .failure(.libraryUnavailable("curl_global_init failed"))
        }
        return .success(
            CurlLibrary(
                easyInit: easyInit, easyCleanup: easyCleanup, easyPerform: easyPerform,
                easyStrerror: easyStrerror, slistAppend: slistAppend, slistFreeAll: slistFreeAll,
                setopt: setopt, getinfo: getinfo))
    }

    func message(for code: CURLcode) -> String {
        easyStrerror(code).map { String(cString: $0) } ?? "curl error \(code.rawValue)"
    }
}
