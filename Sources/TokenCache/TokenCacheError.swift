/// Why the token cache could not be read or written.
///
/// A struct over a code rather than an enum, so that codes can be added without breaking
/// callers; match on ``code``:
///
/// ```swift
/// do { try cache.read { $0.accountList() } } catch let error as TokenCacheError where error.code == .unreadable {
///     // report error.path and error.reason; the file was left as it is
/// }
/// ```
public struct TokenCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// The cache file exists but cannot be read or is not a cache document (corrupt JSON,
        /// not an object, a section that is not an object, no permission). The file is left
        /// untouched: nothing is written over it.
        public static let unreadable = Code(name: "unreadable")
        /// Another process held the cache lock longer than the bounded wait.
        public static let lockTimeout = Code(name: "lockTimeout")
        /// The cache (or its directory, or its lock file) could not be written.
        public static let writeFailed = Code(name: "writeFailed")
    }

    public let code: Code
    /// The file concerned (the cache file, or its lock file for ``Code/lockTimeout``).
    public let path: String
    /// A human-readable reason (an `errno` text, a JSON parse error); never a secret.
    public let reason: String

    public var description: String { "token cache \(code) (\(path)): \(reason)" }

    /// The cache file at `path` cannot be used; see ``Code/unreadable``.
    public static func unreadable(_ path: String, _ reason: String) -> TokenCacheError {
        TokenCacheError(code: .unreadable, path: path, reason: reason)
    }

    /// The lock at `path` could not be taken in time; see ``Code/lockTimeout``.
    public static func lockTimeout(_ path: String, _ reason: String) -> TokenCacheError {
        TokenCacheError(code: .lockTimeout, path: path, reason: reason)
    }

    /// Writing `path` failed; see ``Code/writeFailed``.
    public static func writeFailed(_ path: String, _ reason: String) -> TokenCacheError {
        TokenCacheError(code: .writeFailed, path: path, reason: reason)
    }
}
