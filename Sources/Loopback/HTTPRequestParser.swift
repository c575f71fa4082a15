import AuthSeams

/// Incremental parsing of one HTTP/1.x request from the bytes read so far: the one request
/// parser of every loopback server (``LoopbackHTTPServer``).
///
/// Deliberately small and strict: origin-form targets only, `Content-Length` bodies only
/// (browsers send form posts that way; `Transfer-Encoding` is answered 501), bounded sizes.
public enum HTTPRequestParser {
    /// Largest request line + headers accepted.
    public static let maxHeaderBytes = 16 * 1024
    /// Largest body accepted (a form_post response is a few KiB).
    public static let maxBodyBytes = 64 * 1024

    /// The outcome of parsing the bytes received so far.
    public enum Result: Equatable, Sendable {
        /// More bytes are needed.
        case incomplete
        /// A whole request.
        case complete(HTTPServerRequest)
        /// The request is malformed or too large: answer with this status and close.
        case invalid(HTTPStatus)
    }

    private static let separator: [UInt8] = Array("\r\n\r\n".utf8)

    /// Parses `buffer`, which holds everything received on the connection so far.
    /// - Parameter maxBody: the largest body accepted (413 above it).
    public static func parse(_ buffer: [UInt8], maxBody: Int = maxBodyBytes) -> Result {
        guard let headerEnd = firstIndex(of: separator, in: buffer) else {
            return buffer.count > maxHeaderBytes ? .invalid(.headersTooLarge) : .incomplete
        }
        guard headerEnd <= maxHeaderBytes,
            let head = String(validating: buffer[..<headerEnd], as: UTF8.self)
        else {
            return .invalid(headerEnd > maxHeaderBytes ? .headersTooLarge : .badRequest)
        }
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let requestLine = lines.popFirst() else { return .invalid(.badRequest) }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter) else {
            return .invalid(.badRequest)
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .invalid(parts[2].hasPrefix("HTTP/") ? .versionNotSupported : .badRequest)
        }
        let target = parts[1]
        guard target.first == "/" else { return .invalid(.badRequest) }
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        let query = pathEnd == target.endIndex ? "" : target[target.index(after: pathEnd)...]

        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return .invalid(.badRequest) }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { return .invalid(.badRequest) }
            let value = line[line.index(after: colon)...].trimmingSpaces()
            headers.append((name.lowercased(), String(value)))
        }
        // One Host only: the servers' Host policy must not read a different one than a proxy would.
        guard headers.filter({ $0.name == "host" }).count <= 1 else { return .invalid(.badRequest) }
        if headers.contains(where: { $0.name == "transfer-encoding" }) {
            return .invalid(.notImplemented)
        }
        let lengths = Set(headers.filter { $0.name == "content-length" }.map(\.value))
        var contentLength = 0
        if let only = lengths.first {
            guard lengths.count == 1, !only.isEmpty, only.count <= 9, only.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(only)
            else {
                return .invalid(.badRequest)
            }
            contentLength = value
        }
        guard contentLength <= maxBody else { return .invalid(.payloadTooLarge) }
        let bodyStart = headerEnd + separator.count
        guard buffer.count >= bodyStart + contentLength else { return .incomplete }
        return .complete(
            HTTPServerRequest(
                method: String(parts[0]), path: String(target[..<pathEnd]), query: String(query),
                version: String(parts[2]), headers: headers,
                body: Array(buffer[bodyStart..<(bodyStart + contentLength)])))
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard character.isASCII, let ascii = character.asciiValue else { return false }
        if character.isLetter || character.isNumber { return true }
        return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
