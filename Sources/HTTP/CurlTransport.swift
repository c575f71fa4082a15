import AuthSeams
import CCurl
import Dispatch
import Logging
import Synchronization

/// ``HTTPTransport`` over libcurl.
///
/// TLS is always verified; the CA bundle is the system's unless `caFile` (or
/// `SSL_CERT_FILE`/`CURL_CA_BUNDLE`) names another. Proxies come from the standard
/// variables (`https_proxy`, `no_proxy`, ...), which libcurl reads itself. Only HTTPS URLs,
/// or HTTP to a loopback host, are sent, and libcurl must confirm it limits the transfer to
/// HTTP(S) (``ProtocolRestriction``). An answer over the request's `maxResponseBytes` (its
/// Content-Length, or the bytes as they stream in, decoded) ends the transfer at once:
/// ``HTTPError/responseTooLarge(limit:)``. Each transfer runs on a Dispatch thread, so the
/// cooperative pool never blocks; cancelling the calling task aborts the transfer.
public struct CurlTransport: HTTPTransport {
    public var caFile: String?
    public var userAgent: String
    /// The time limit of a request that names none (``HTTPRequest/timeout`` `nil`).
    public var defaultTimeout: Duration
    private let logger: Logger

    public init(
        caFile: String? = nil, userAgent: String = "auth-sidecar", defaultTimeout: Duration = .seconds(30),
        logger: Logger
    ) {
        self.caFile = caFile
        self.userAgent = userAgent
        self.defaultTimeout = defaultTimeout
        self.logger = logger
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let url = URLParts(request.url), url.isSecureOrLoopback else {
            throw .insecureOrInvalidURL("refusing \(URLParts(request.url)?.origin ?? "an invalid URL"): HTTPS is required except for loopback hosts")
        }
        let library = try CurlLibrary.shared()
        var request = request
        request.timeout = request.timeout ?? defaultTimeout
        let transfer = CurlTransfer(library: library, request: request, caFile: caFile, userAgent: userAgent)
        logger.debug("http", metadata: ["method": "\(request.method)", "url": "\(url.origin)\(url.path.prefix { $0 != "?" })"])
        let result: Result<HTTPResponse, HTTPError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: transfer.perform()) }
            }
        } onCancel: {
            transfer.cancel()
        }
        return try result.get()
    }
}

/// One libcurl easy transfer: its handle, its callbacks' state, and the outcome.
final class CurlTransfer: @unchecked Sendable {
    private let library: CurlLibrary
    private let request: HTTPRequest
    private let caFile: String?
    private let userAgent: String
    private let cancelled = Atomic<Bool>(false)
    fileprivate var body: [UInt8] = []
    fileprivate var headers: [(name: String, value: String)] = []
    private var headerBytes = 0
    /// The answer passed ``HTTPRequest/maxResponseBytes``: a callback stopped the transfer.
    private(set) var tooLarge = false

    init(library: CurlLibrary, request: HTTPRequest, caFile: String?, userAgent: String) {
        self.library = library
        self.request = request
        self.caFile = caFile
        self.userAgent = userAgent
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }
    fileprivate var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Runs the transfer to completion on the calling thread.
    func perform() -> Result<HTTPResponse, HTTPError> {
        guard let handle = library.easyInit() else { return .failure(.network("curl_easy_init failed")) }
        defer { library.easyCleanup(handle) }
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headerList = library.slistAppend(headerList, "\(name): \(value)") }
        headerList = library.slistAppend(headerList, "Expect:")  // no 100-continue round trip
        defer { library.slistFreeAll(headerList) }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }

        let options = CurlOptions(library: library, handle: handle)
        do {
            try options.configure(
                request: request, caFile: caFile, userAgent: userAgent, headers: headerList,
                errorBuffer: errorBuffer, context: Unmanaged.passUnretained(self).toOpaque())
        } catch {
            return .failure(error)
        }
        let code = library.easyPerform(handle)
        if code != CURLE_OK, !isCancelled, tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(.responseTooLarge(limit: request.maxResponseBytes))
        }
        guard code == CURLE_OK else {
            let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : library.message(for: code)
            return .failure(CurlErrors.map(code, detail: detail, cancelled: isCancelled))
        }
        var status = 0
        _ = ccurl_getinfo_long(library.getinfo, handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    /// Keeps a piece of the body; `false` (stop the transfer) when it would pass the limit.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let limit = request.maxResponseBytes
        guard bytes.count <= limit - body.count else {
            tooLarge = true
            return false
        }
        if body.capacity < body.count + bytes.count {  // grow by doubling, never past the limit
            body.reserveCapacity(min(limit, max(body.count * 2, body.count + bytes.count)))
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Counts a header line against the limit; `false` (stop the transfer) past it.
    func receiveHeaderBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= request.maxResponseBytes else {
            tooLarge = true
            return false
        }
        receiveHeader(String(decoding: bytes, as: UTF8.self))
        return true
    }

    fileprivate func receiveHeader(_ line: String) {
        let trimmed = line.trimmingCharacters(in: " \r\n")
        if trimmed.hasPrefix("HTTP/") {
            headers = []
            return
        }  // a new response (after 100, or a proxy)
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = String(trimmed[..<colon])
        let value = String(trimmed[trimmed.index(after: colon)...]).trimmingCharacters(in: " \t")
        headers.append((name, value))
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        let start = firstIndex { !characters.contains($0) } ?? endIndex
        let end = lastIndex { !characters.contains($0) }.map { index(after: $0) } ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}

/// The callbacks libcurl calls during a transfer (C function pointers; state via `userdata`).
enum CurlCallbacks {
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
        guard let data, let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let total = size * count
        // Any count but `total` makes libcurl abort the transfer (CURLE_WRITE_ERROR).
        return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
    }

    static let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
        guard let data, let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let total = size * count
        return transfer.receiveHeaderBytes(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
    }

    /// Returning non-zero aborts the transfer: how cancellation reaches libcurl.
    static let progress: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = { context, _, _, _, _ in
        guard let context else { return 0 }
        return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().isCancelled ? 1 : 0
    }
}
