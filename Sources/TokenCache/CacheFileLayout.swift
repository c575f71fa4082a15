/// The files that live beside a cache file, named in one place, and its directory, made (0700)
/// before anything is written beside the cache. Every caller naming a sibling asks this type:
/// the cache store (`.lockfile`, `undecryptable-*`), the kernel key keeper (`.lockfile`), the
/// refresh lock (`.refresh.lock`), the last failed refresh (`.last-refresh-error`), the PoP key
/// (`.pop-key`), the az shim's kept subscriptions (`azureProfile.ACCOUNT.json`).
public struct CacheFileLayout: Sendable, Hashable {
    /// The cache file.
    public let path: String

    public init(path: String) { self.path = path }

    /// `<cache>.lockfile`: msal-extensions' cross-process lock held by every write.
    public var lockFile: String { path + ".lockfile" }
    /// `<cache>.refresh.lock`: one refresh per token across processes (``FileRefreshLock``).
    public var refreshLock: String { path + ".refresh.lock" }
    /// `<cache>.pop-key`: the proof-of-possession signing key, sealed under the cache's key
    /// (``PopKeyFile``).
    public var popKey: String { path + ".pop-key" }
    /// `<cache>.last-refresh-error` (``FileRefreshErrorLog``).
    public var lastRefreshError: String { path + FileRefreshErrorLog.suffix }
    /// The start of a sealed cache's name once set aside: `<cache>.undecryptable-<unix time>`.
    public var undecryptablePrefix: String { path + ".undecryptable-" }
    /// A sealed cache set aside at `time` (seconds since 1970).
    public func undecryptable(at time: Int) -> String { undecryptablePrefix + String(time) }

    /// The directory holding the cache (`""` for a bare name, `"/"` for `/x`).
    public var directory: String { POSIXFile.directoryName(path) }

    /// Azure CLI's subscriptions kept for the account `homeAccountId` by the az shim,
    /// `azureProfile.ACCOUNT.json` in the cache's directory (characters of the id other than
    /// letters, digits, `-` and `.` written `_`).
    public func azProfile(account homeAccountId: String) -> String {
        let id = homeAccountId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
        let prefix = path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
        return prefix + "azureProfile." + String(id) + ".json"
    }

    /// Makes the cache's directory (and missing parents) with mode 0700 when it is not there:
    /// what anything written beside the cache does first, whether or not the cache file exists
    /// (the broker keeps its tokens itself: no cache file is written, the az profile is).
    public func makeDirectory() throws(TokenCacheError) {
        try POSIXFile.makeDirectory(forFile: path)
    }
}
