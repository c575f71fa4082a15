import AuthSeams
import CCurl

/// Sets a transfer's options on an easy handle.
struct CurlOptions {
    let library: CurlLibrary
    let handle: UnsafeMutableRawPointer

    /// - Throws: ``HTTPError/libraryUnavailable(_:)`` when the transfer cannot be limited to
    ///   HTTP(S) (``ProtocolRestriction``): the request must not be sent.
    func configure(
        request: HTTPRequest, caFile: String?, userAgent: String,
        headers: UnsafeMutablePointer<curl_slist>?, errorBuffer: UnsafeMutablePointer<CChar>,
        context: UnsafeMutableRawPointer
    ) throws(HTTPError) {
        _ = try restrictProtocols().get()
        set(CURLOPT_URL, request.url)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        set(CURLOPT_ACCEPT_ENCODING, "")
        set(CURLOPT_USERAGENT, userAgent)
        let timeout = Self.milliseconds(request.timeout ?? .seconds(30))
        set(CURLOPT_TIMEOUT_MS, timeout)
        set(CURLOPT_CONNECTTIMEOUT_MS, min(15_000, timeout))
        if let caFile { set(CURLOPT_CAINFO, caFile) }
        if request.maxResponseBytes > 0 {  // 0 would mean "no limit"; the write callback checks it anyway
            // A Content-Length over the limit ends the transfer before the body (CURLE_FILESIZE_EXCEEDED).
            _ = ccurl_setopt_off(library.setopt, handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxResponseBytes))
        }
        _ = ccurl_setopt_ptr(library.setopt, handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = ccurl_setopt_ptr(library.setopt, handle, CURLOPT_HTTPHEADER, headers)
        setMethodAndBody(request)
        setFunction(CURLOPT_WRITEFUNCTION, unsafeBitCast(CurlCallbacks.write, to: UnsafeMutableRawPointer.self))
        _ = ccurl_setopt_ptr(library.setopt, handle, CURLOPT_WRITEDATA, context)
        setFunction(CURLOPT_HEADERFUNCTION, unsafeBitCast(CurlCallbacks.header, to: UnsafeMutableRawPointer.self))
        _ = ccurl_setopt_ptr(library.setopt, handle, CURLOPT_HEADERDATA, context)
        set(CURLOPT_NOPROGRESS, 0)
        setFunction(CURLOPT_XFERINFOFUNCTION, unsafeBitCast(CurlCallbacks.progress, to: UnsafeMutableRawPointer.self))
        _ = ccurl_setopt_ptr(library.setopt, handle, CURLOPT_XFERINFODATA, context)
    }

    /// Limits the transfer to HTTP(S), checking that libcurl took the setting.
    func restrictProtocols() -> Result<ProtocolRestriction, HTTPError> {
        ProtocolRestriction.apply(
            { setting in
                switch setting {
                case .text(let option, let value): ccurl_setopt_str(library.setopt, handle, option, value)
                case .number(let option, let value): ccurl_setopt_long(library.setopt, handle, option, value)
                }
            }, describe: library.message(for:))
    }

    /// At least 1 ms (0 would mean "no limit" to libcurl), at most a day.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let total = min(max(seconds, 0), 86_400) * 1000 + max(attoseconds, 0) / 1_000_000_000_000_000
        return Int(max(total, 1))
    }

    private func setMethodAndBody(_ request: HTTPRequest) {
        switch request.method.uppercased() {
        case "GET": set(CURLOPT_HTTPGET, 1)
        case "HEAD": set(CURLOPT_NOBODY, 1)
        case "POST": set(CURLOPT_POST, 1)
        default: set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        guard let body = request.body else { return }
        if request.method.uppercased() != "POST" {
            set(CURLOPT_POST, 1)
            set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        _ = ccurl_setopt_off(library.setopt, handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
        body.withUnsafeBytes { raw in
            // COPYPOSTFIELDS copies now: the Swift buffer may die after this call.
            _ = ccurl_setopt_ptr(
                library.setopt, handle, CURLOPT_COPYPOSTFIELDS,
                UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)))
        }
    }

    private func set(_ option: CURLoption, _ value: Int) {
        _ = ccurl_setopt_long(library.setopt, handle, option, value)
    }

    private func set(_ option: CURLoption, _ value: String) {
        _ = ccurl_setopt_str(library.setopt, handle, option, value)
    }

    private func setFunction(_ option: CURLoption, _ function: UnsafeMutableRawPointer) {
        _ = ccurl_setopt_ptr(library.setopt, handle, option, function)
    }
}

/// libcurl result codes to ``HTTPError``.
enum CurlErrors {
    static func map(_ code: CURLcode, detail: String, cancelled: Bool) -> HTTPError {
        if cancelled || code == CURLE_ABORTED_BY_CALLBACK { return .cancelled }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE:
            return .tls(detail)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .insecureOrInvalidURL(detail)
        default:
            return .network(detail)
        }
    }
}
