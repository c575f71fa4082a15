import POSIXSupport
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The cache key kept in a page left out of core dumps (`MADV_DONTDUMP`: `dd` in the mapping's
/// `VmFlags` in /proc/self/smaps), zeroed when the key goes; ciphers made from it still work.
@Suite struct GuardedKeyTests {
    /// The `VmFlags` of the mapping holding `address`, from /proc/self/smaps.
    private func flags(of address: UInt) throws -> [Substring] {
        let text = String(decoding: try #require(POSIX.readFile("/proc/self/smaps")), as: UTF8.self)
        var inside = false
        for line in text.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "), dash < space,
                let start = UInt(line[..<dash], radix: 16), let end = UInt(line[line.index(after: dash)..<space], radix: 16)
            {
                inside = (start..<end).contains(address)
            } else if inside, line.hasPrefix("VmFlags:") {
                return line.dropFirst("VmFlags:".count).split(separator: " ")
            }
        }
        return []
    }

    @Test func theKeyIsInAPageLeftOutOfCoreDumpsAndZeroedWhenItGoes() throws {
        let bytes = (0..<32).map { UInt8($0 + 1) }
        var key: GuardedKey? = GuardedKey(bytes)
        let address = try #require(key?.address)
        #expect(try flags(of: address).contains("dd"), "MADV_DONTDUMP")
        let slot = try #require(UnsafeRawPointer(bitPattern: address))
        #expect(Array(UnsafeRawBufferPointer(start: slot, count: 32)) == bytes)
        key = nil
        // Zeroed when the key goes (or already given to a key of another test running meanwhile).
        #expect(Array(UnsafeRawBufferPointer(start: slot, count: 32)) != bytes, "the key is not left in the page")
    }

    @Test func aCipherOverAGuardedKeySealsAndOpens() throws {
        let cipher = try #require(AESGCMCacheEncryption(key: Array(repeating: 9, count: 32)))
        let sealed = try cipher.seal(Array("{\"secret\": 1}".utf8))
        #expect(try cipher.open(sealed) == Array("{\"secret\": 1}".utf8))
        #expect(try #require(AESGCMCacheEncryption(key: Array(repeating: 9, count: 32))).open(sealed) == Array("{\"secret\": 1}".utf8))
    }
}
