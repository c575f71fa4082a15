import CJansson

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The seed of jansson's hash tables (which keep objects' members), from the kernel.
public enum JSONHashSeed {
    /// Seeds jansson's hash function with random bits from one `getrandom` call (0.2 µs).
    /// Unseeded, jansson seeds itself when the first object is made, by opening, reading and
    /// closing `/dev/urandom` (2.3 µs of a fresh process). Call once, before anything makes a
    /// JSON object; after that (or on a second call) it changes nothing.
    public static func plant() {
        var seed = 0
        withUnsafeMutableBytes(of: &seed) { bytes in
            if let base = bytes.baseAddress { arc4random_buf(base, bytes.count) }
        }
        json_object_seed(seed)  // 0 (one chance in 2^64): jansson seeds itself, as unseeded
    }
}
