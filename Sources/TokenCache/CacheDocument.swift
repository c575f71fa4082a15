import JSON

/// The whole token cache: MSAL's cross-SDK document, with every top-level member kept.
///
/// Sections this module does not know (another SDK's, or a future MSAL's) and entries it
/// cannot parse are written back as they were read. The sidecar's own state lives under the
/// top-level key `AuthSidecar`, which MSAL for Python ignores and preserves.
///
/// A ``TokenCacheStore`` persists documents; ``TokenCache`` reads and changes them.
public struct CacheDocument: Sendable {
    var accessTokens: CacheSection<CachedAccessToken>
    var refreshTokens: CacheSection<CachedRefreshToken>
    var idTokens: CacheSection<CachedIdToken>
    var accounts: CacheSection<CachedAccount>
    var appMetadata: CacheSection<AppMetadata>
    /// Every top-level member in file order; the five sections above are written over theirs.
    private var top: JSONObject
    /// Advances on every change made through this module; a store persists a document
    /// whose revision changed.
    public private(set) var revision = 0

    private static let sectionOrder = [
        CacheKeys.Section.accessToken, CacheKeys.Section.account, CacheKeys.Section.idToken,
        CacheKeys.Section.refreshToken, CacheKeys.Section.appMetadata,
    ]

    /// An empty cache.
    public init() {
        self.init(top: JSONObject())
    }

    private init(top: JSONObject) {
        self.top = top
        func section(_ name: String) -> JSONObject { top[name]?.objectValue ?? JSONObject() }
        accessTokens = CacheSection(section(CacheKeys.Section.accessToken))
        refreshTokens = CacheSection(section(CacheKeys.Section.refreshToken))
        idTokens = CacheSection(section(CacheKeys.Section.idToken))
        accounts = CacheSection(section(CacheKeys.Section.account))
        appMetadata = CacheSection(section(CacheKeys.Section.appMetadata))
    }

    /// Parses a serialized cache. Empty (or all-whitespace) input is an empty cache, as for
    /// MSAL for Python's `deserialize("")`.
    ///
    /// - Throws: a description of the problem when the text is not JSON, not an object, or
    ///   a known section is not an object.
    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            self.init()
            return
        }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw DocumentError(reason: "not JSON: \(error)") }
        guard let top = value.objectValue else {
            throw DocumentError(reason: "the top level is a JSON \(value.typeName), not an object")
        }
        for name in Self.sectionOrder + [CacheKeys.Section.sidecar] {
            if let section = top[name], section.objectValue == nil {
                throw DocumentError(reason: "section \(name) is a JSON \(section.typeName), not an object")
            }
        }
        self.init(top: top)
    }

    /// The document as compact JSON text (UTF-8), known sections first.
    public func serialized() -> [UInt8] {
        var out = JSONObject()
        out[CacheKeys.Section.accessToken] = .object(accessTokens.raw)
        out[CacheKeys.Section.account] = .object(accounts.raw)
        out[CacheKeys.Section.idToken] = .object(idTokens.raw)
        out[CacheKeys.Section.refreshToken] = .object(refreshTokens.raw)
        out[CacheKeys.Section.appMetadata] = .object(appMetadata.raw)
        for (key, value) in top where out[key] == nil { out[key] = value }
        return JSONValue.object(out).serialized()
    }

    /// Marks the document changed (call after any mutation of a section or of the state).
    mutating func touch() { revision &+= 1 }

    /// The sidecar's state object (`AuthSidecar`).
    var sidecarState: JSONObject {
        get { top[CacheKeys.Section.sidecar]?.objectValue ?? JSONObject() }
        set { top[CacheKeys.Section.sidecar] = .object(newValue) }
    }

    /// Why a document could not be parsed.
    public struct DocumentError: Error, Sendable, Equatable {
        public let reason: String
    }
}
