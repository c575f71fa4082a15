import AuthSeams
import CCurl

/// Limits a transfer, and any redirect of it, to HTTP and HTTPS (``CurlTransport`` admits
/// plain HTTP to loopback hosts only, before libcurl sees the URL).
///
/// libcurl 7.85 and later take protocol names (`CURLOPT_PROTOCOLS_STR`); older ones know
/// only the bitmasks (`CURLOPT_PROTOCOLS`, deprecated since but still honoured). Each
/// setting's result is checked: when the names are unknown the bitmasks are set, and when
/// neither applies the request is not sent (``HTTPError/libraryUnavailable(_:)``).
enum ProtocolRestriction: Equatable {
    /// `CURLOPT_PROTOCOLS_STR` and `CURLOPT_REDIR_PROTOCOLS_STR` (libcurl 7.85+).
    case names
    /// `CURLOPT_PROTOCOLS` and `CURLOPT_REDIR_PROTOCOLS` (older libcurl).
    case bitmasks

    /// One option to set on the easy handle; ``apply(_:describe:)`` takes the setter as a
    /// seam, so tests can play an older libcurl.
    enum Setting: Equatable {
        case text(CURLoption, String)
        case number(CURLoption, Int)
    }

    static let nameSettings: [Setting] = [
        .text(CURLOPT_PROTOCOLS_STR, "http,https"), .text(CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
    ]

    /// By number: the names `CURLOPT_PROTOCOLS`/`CURLOPT_REDIR_PROTOCOLS` are deprecated in
    /// the headers (CURLOPTTYPE_LONG + 181 and + 182).
    static let bitmaskSettings: [Setting] = [
        .number(CURLoption(rawValue: UInt32(CURLOPTTYPE_LONG + 181)), Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)),
        .number(CURLoption(rawValue: UInt32(CURLOPTTYPE_LONG + 182)), Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)),
    ]

    /// Sets the restriction with `set`; the way that applied, or why none did.
    static func apply(
        _ set: (Setting) -> CURLcode, describe: (CURLcode) -> String = { "curl error \($0.rawValue)" }
    ) -> Result<ProtocolRestriction, HTTPError> {
        let byName = firstFailure(of: nameSettings, set)
        guard let byName else { return .success(.names) }
        guard byName == CURLE_UNKNOWN_OPTION || byName == CURLE_NOT_BUILT_IN else {
            return .failure(refusal("CURLOPT_PROTOCOLS_STR: \(describe(byName))"))
        }
        guard let byBitmask = firstFailure(of: bitmaskSettings, set) else { return .success(.bitmasks) }
        return .failure(refusal("CURLOPT_PROTOCOLS_STR: \(describe(byName)); CURLOPT_PROTOCOLS: \(describe(byBitmask))"))
    }

    private static func firstFailure(of settings: [Setting], _ set: (Setting) -> CURLcode) -> CURLcode? {
        for setting in settings {
            let code = set(setting)
            if code != CURLE_OK { return code }
        }
        return nil
    }

    private static func refusal(_ detail: String) -> HTTPError {
        .libraryUnavailable("this libcurl cannot limit transfers to HTTP and HTTPS (\(detail)); no request is sent")
    }
}
