#if canImport(Glibc)
    import Glibc
#endif

/// The process's file-descriptor limit (`RLIMIT_NOFILE`), which servers size their
/// connection caps and reserves from.
public enum DescriptorLimit {
    /// The soft limit now (what `open` and `accept` are held to).
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(noFileResource, &limit) == 0 else { return 1024 }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY (all ones) clamps to Int.max
    }

    /// Raises the soft limit to the hard one (the kernel's default soft limit, 1024, is far
    /// below what an agent with many clients needs; the hard one is the administrator's), at
    /// most to `ceiling`. Returns the soft limit in force.
    @discardableResult
    public static func raiseToHard(ceiling: Int = 1 << 20) -> Int {
        var limit = rlimit()
        guard getrlimit(noFileResource, &limit) == 0 else { return current }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted
            _ = setrlimit(noFileResource, &limit)
        }
        return current
    }

    #if canImport(Glibc)
        private static let noFileResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #endif
}
