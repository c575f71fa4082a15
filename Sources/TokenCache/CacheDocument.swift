import JSON

/// The whole token cache: MSAL's cross-SDK document, with every top-level member kept.
///
/// Sections this module does not know (another SDK's, or a future MSAL's) and entries it
/// cannot parse are written back as they were read. The sidecar's own state lives under the
/// top-level key `AuthSidecar`, which MSAL for Python ignores and preserves.
///
/// A ``TokenCacheStore`` persists documents; ``TokenCache`` reads and changes them.
public struct CacheDocument: Sendable {
    /// The document as read, changed in place (copied first when shared: value semantics).
    private var tree: JSONTree
    var accessTokens: CacheSection<CachedAccessToken>
    var refreshTokens: CacheSection<CachedRefreshToken>
    var idTokens: CacheSection<CachedIdToken>
    var accounts: CacheSection<CachedAccount>
    var appMetadata: CacheSection<AppMetadata>
    /// The `AuthSidecar` member, converted once (it is read on every request).
    private var sidecarObject: JSONObject
    /// Advances on every change made through this module; a store persists a document
    /// whose revision changed.
    public private(set) var revision = 0
    /// Which version of the stored cache this is: the store sets a new, never reused value
    /// each time it loads or writes the document, so equal stamps mean the same contents.
    public internal(set) var stamp: UInt64 = 0

    private static let sectionOrder = [
        CacheKeys.Section.accessToken, CacheKeys.Section.account, CacheKeys.Section.idToken,
        CacheKeys.Section.refreshToken, CacheKeys.Section.appMetadata,
    ]

    /// An empty cache.
    public init() {
        self.init(tree: JSONTree())
    }

    private init(tree: JSONTree) {
        for name in Self.sectionOrder where tree.isObject(forKey: name) == nil {
            tree.setValue(.object(JSONObject()), forKey: name)  // MSAL writes every section
        }
        self.tree = tree
        accessTokens = CacheSection(indexing: tree)
        refreshTokens = CacheSection(indexing: tree)
        idTokens = CacheSection(indexing: tree)
        accounts = CacheSection(indexing: tree)
        appMetadata = CacheSection(indexing: tree)
        sidecarObject = tree.value(forKey: CacheKeys.Section.sidecar)?.objectValue ?? JSONObject()
    }

    /// Parses a serialized cache. Empty (or all-whitespace) input is an empty cache, as for
    /// MSAL for Python's `deserialize("")`.
    ///
    /// - Throws: a description of the problem when the text is not JSON, not an object, or
    ///   a known section is not an object.
    /// - Complexity: jansson's parse, plus two member reads per entry for the indexes.
    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            self.init()
            return
        }
        let tree: JSONTree
        do { tree = try JSONTree(parsingObject: bytes) } catch {
            // The parser's own text quotes the bytes near the fault: never echo the file.
            throw DocumentError(
                reason: error.message.hasPrefix("the top level")
                    ? error.message
                    : "not JSON (the parse failed at byte \(error.position))")
        }
        for name in Self.sectionOrder + [CacheKeys.Section.sidecar] where tree.isObject(forKey: name) == false {
            let type = tree.value(forKey: name)?.typeName ?? "value"
            throw DocumentError(reason: "section \(name) is a JSON \(type), not an object")
        }
        self.init(tree: tree)
    }

    /// The document as compact JSON text (UTF-8), members in file order.
    public func serialized() -> [UInt8] {
        tree.serialized()
    }

    /// Every parsed entry of `section` with its key, in file order (O(n): for listings).
    func all<Entity>(_ section: CacheSection<Entity>) -> [(key: String, entity: Entity)] {
        section.all(in: tree)
    }

    /// The entries of `section` for one home account.
    func entries<Entity>(_ section: CacheSection<Entity>, homeAccountId: String) -> [(key: String, entity: Entity)] {
        section.entries(homeAccountId: homeAccountId, in: tree)
    }

    /// The entries of `section` whose lookup field (accounts: `username`) is `value`.
    func entries<Entity>(_ section: CacheSection<Entity>, lookupValue value: String) -> [(key: String, entity: Entity)] {
        section.entries(lookupValue: value, in: tree)
    }

    /// The entry of `section` under `key`.
    func entity<Entity>(_ section: CacheSection<Entity>, forKey key: String) -> Entity? {
        section.entity(forKey: key, in: tree)
    }

    /// Changes one section: `change` gets the section's index and the tree to change, which
    /// is first copied if another document shares it. The caller marks the document changed.
    @discardableResult
    mutating func change<Entity, Result>(
        _ section: WritableKeyPath<CacheDocument, CacheSection<Entity>>,
        _ change: (inout CacheSection<Entity>, JSONTree) -> Result
    ) -> Result {
        let tree = uniqueTree()
        return change(&self[keyPath: section], tree)
    }

    /// Marks the document changed (call after any mutation of a section or of the state).
    mutating func touch() { revision &+= 1 }

    /// The sidecar's state object (`AuthSidecar`).
    var sidecarState: JSONObject {
        get { sidecarObject }
        set {
            sidecarObject = newValue
            uniqueTree().setValue(.object(newValue), forKey: CacheKeys.Section.sidecar)
        }
    }

    private mutating func uniqueTree() -> JSONTree {
        if !isKnownUniquelyReferenced(&tree) { tree = tree.copy() }
        return tree
    }

    /// Why a document could not be parsed.
    public struct DocumentError: Error, Sendable, Equatable {
        public let reason: String
    }
}
