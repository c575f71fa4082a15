import JSON

/// The whole token cache: MSAL's cross-SDK document, with every top-level member kept.
///
/// Sections this module does not know (another SDK's, or a future MSAL's) and entries it
/// cannot parse are written back as they were read. The sidecar's own state lives under the
/// top-level key `AuthSidecar`, which MSAL for Python ignores and preserves.
///
/// A ``TokenCacheStore`` persists documents; ``TokenCache`` reads and changes them.
public struct CacheDocument: Sendable {
    /// The document once changed (or parsed by jansson at load), changed in place (copied
    /// first when shared: value semantics).
    private var tree: JSONTree?
    /// The document as loaded, until changed: validated and located, entries parsed when read.
    private var scan: JSONObjectIndex?
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

    /// The entry members a scan reads ahead for the indexes: the home account ID and every
    /// section's lookup field.
    private static let scannedFields =
        ["home_account_id"]
        + Set(
            [
                CachedAccessToken.lookupField, CachedRefreshToken.lookupField, CachedIdToken.lookupField,
                CachedAccount.lookupField, AppMetadata.lookupField,
            ].compactMap { $0 }
        ).sorted()

    /// An empty cache.
    public init() {
        self.init(tree: JSONTree())
    }

    private init(tree: JSONTree) {
        Self.addMissingSections(to: tree)
        self.tree = tree
        accessTokens = CacheSection(indexing: tree)
        refreshTokens = CacheSection(indexing: tree)
        idTokens = CacheSection(indexing: tree)
        accounts = CacheSection(indexing: tree)
        appMetadata = CacheSection(indexing: tree)
        sidecarObject = tree.value(forKey: CacheKeys.Section.sidecar)?.objectValue ?? JSONObject()
    }

    /// A document as scanned: the tree is built (and the missing sections added) when it is
    /// first changed.
    private init(scan: JSONObjectIndex) {
        self.scan = scan
        accessTokens = CacheSection(indexing: scan, fields: Self.scannedFields)
        refreshTokens = CacheSection(indexing: scan, fields: Self.scannedFields)
        idTokens = CacheSection(indexing: scan, fields: Self.scannedFields)
        accounts = CacheSection(indexing: scan, fields: Self.scannedFields)
        appMetadata = CacheSection(indexing: scan, fields: Self.scannedFields)
        sidecarObject = scan.value(forKey: CacheKeys.Section.sidecar)?.objectValue ?? JSONObject()
    }

    private static func addMissingSections(to tree: JSONTree) {
        for name in sectionOrder where tree.isObject(forKey: name) == nil {
            tree.setValue(.object(JSONObject()), forKey: name)  // MSAL writes every section
        }
    }

    /// Parses a serialized cache. Empty (or all-whitespace) input is an empty cache, as for
    /// MSAL for Python's `deserialize("")`.
    ///
    /// - Throws: a description of the problem when the text is not JSON, not an object, or
    ///   a known section is not an object.
    /// - Complexity: from ``scanningSize`` on, one pass of ``JSONObjectIndex``'s scanner over
    ///   the bytes, which reads ahead the two members per entry the indexes need; entries are
    ///   parsed (by jansson) when read, the whole document when first changed. A smaller
    ///   document, or one the scanner does not accept, is parsed by jansson at once (which
    ///   gives the verdict).
    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        try self.init(parsing: bytes, scanning: bytes.count >= Self.scanningSize)
    }

    /// From this size on a document is scanned, below it parsed whole at once: a small
    /// cache's whole parse costs less than the scan plus parsing again each entry read (a
    /// 1-account cache, 5 KB: 0.8M instructions parsed whole, 1.2M scanned and read).
    static let scanningSize = 32 * 1024

    /// Parses a serialized cache, with `scanning` false as jansson's whole parse at once
    /// (tests compare the two).
    init(parsing bytes: [UInt8], scanning: Bool) throws(DocumentError) {
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            self.init()
            return
        }
        let sections = Set(Self.sectionOrder)
        if scanning, let scan = JSONObjectIndex(scanning: bytes, sections: sections, fields: Self.scannedFields),
            !(Self.sectionOrder + [CacheKeys.Section.sidecar]).contains(where: { scan.isObject(forKey: $0) == false })
        {
            self.init(scan: scan)
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
        if let tree { return tree.serialized() }
        return Self.tree(of: scan).serialized()
    }

    /// Every parsed entry of `section` with its key, in file order (O(n): for listings).
    func all<Entity>(_ section: CacheSection<Entity>) -> [(key: String, entity: Entity)] {
        read { section.all(in: $0) }
    }

    /// The entries of `section` for one home account.
    func entries<Entity>(_ section: CacheSection<Entity>, homeAccountId: String) -> [(key: String, entity: Entity)] {
        read { section.entries(homeAccountId: homeAccountId, in: $0) }
    }

    /// The entries of `section` whose lookup field (accounts: `username`) is `value`.
    func entries<Entity>(_ section: CacheSection<Entity>, lookupValue value: String) -> [(key: String, entity: Entity)] {
        read { section.entries(lookupValue: value, in: $0) }
    }

    /// The entry of `section` under `key`.
    func entity<Entity>(_ section: CacheSection<Entity>, forKey key: String) -> Entity? {
        read { section.entity(forKey: key, in: $0) }
    }

    /// Reads from the tree once there is one, else from the scan.
    private func read<Result>(_ body: (any CacheEntries) -> Result) -> Result {
        if let tree { return body(tree) }
        if let scan { return body(scan) }
        return body(JSONTree())
    }

    /// The tree of a scanned document (or an empty one), with MSAL's sections.
    private static func tree(of scan: JSONObjectIndex?) -> JSONTree {
        let tree = scan?.tree() ?? JSONTree()
        addMissingSections(to: tree)
        return tree
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
        guard var current = tree else {
            let built = Self.tree(of: scan)
            (tree, scan) = (built, nil)
            return built
        }
        tree = nil  // so that `current` holds the only reference when no other document does
        if !isKnownUniquelyReferenced(&current) { current = current.copy() }
        tree = current
        return current
    }

    /// Why a document could not be parsed.
    public struct DocumentError: Error, Sendable, Equatable {
        public let reason: String
    }
}
