import Crypto
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A 32-byte cache key kept where the kernel leaves it out of a core dump: a slot of one page
/// per process, mapped on first use and marked `MADV_DONTDUMP` (two system calls, once). The
/// agent and the stdio mode already dump no core (``POSIX/forbidCoreDumps()``); this keeps the
/// key out of one where a dump happens anyway (`suid_dumpable` 2, a verb's process, a core
/// taken by root). Each use makes a `SymmetricKey` from the slot: swift-crypto keeps that copy
/// on the heap, where no `madvise` can reach it, for the one seal or open, and zeroes it when
/// freed; a `SymmetricKey` kept for the life of the cipher would sit in dumpable memory.
///
/// Every copy kept long lives here: the key-file and key-command layers' cipher, the kernel
/// keyring and Secret Service layers' key (`StoredKeyEncryption`), and the key their keepers put
/// back in the kernel keyring (`KernelKeyKeeper`, `SecretServiceCopyKeeper`); a heap copy
/// (``bytes()``, ``symmetricKey()``) lives for one operation.
///
/// The slot is zeroed and given back when the key goes. Without a slot (the page could not be
/// mapped, or 128 keys are alive) the key is kept on the heap, as before.
final class GuardedKey: Sendable {
    private let slot: Int?
    /// The key when there is no slot; empty otherwise.
    private let heapCopy: [UInt8]

    init(_ bytes: [UInt8]) {
        slot = Self.page.withLock { $0.store(bytes) }
        heapCopy = slot == nil ? bytes : []
    }

    deinit {
        if let slot { Self.page.withLock { $0.release(slot) } }
    }

    /// A fresh `SymmetricKey` of these bytes, for one operation.
    func symmetricKey() -> SymmetricKey {
        guard let slot else { return SymmetricKey(data: heapCopy) }
        return Self.page.withLock { $0.withBytes(slot) { SymmetricKey(data: $0) } }
    }

    /// The key's bytes, for one operation (a heap copy: not kept).
    func bytes() -> [UInt8] {
        guard let slot else { return heapCopy }
        return Self.page.withLock { $0.withBytes(slot) { Array($0) } }
    }

    /// Where the key is kept (`nil`: on the heap), for tests.
    var address: UInt? {
        guard let slot else { return nil }
        return Self.page.withLock { page in page.withBytes(slot) { $0.baseAddress.map { UInt(bitPattern: $0) } } }
    }

    private static let page = PthreadMutex(KeyPage())
}

/// One page of 128 key slots, mapped on first use, left out of core dumps.
private struct KeyPage {
    static let slotSize = 32
    static let pageSize = 4096
    private var base: UnsafeMutableRawPointer?
    private var mapFailed = false
    /// Bit i of word i / 64: slot i is taken.
    private var taken: (UInt64, UInt64) = (0, 0)

    mutating func store(_ bytes: [UInt8]) -> Int? {
        guard bytes.count == Self.slotSize, let base = mapped(), let slot = freeSlot() else { return nil }
        UnsafeMutableRawBufferPointer(start: base + slot * Self.slotSize, count: Self.slotSize).copyBytes(from: bytes)
        mark(slot, taken: true)
        return slot
    }

    mutating func release(_ slot: Int) {
        guard let base else { return }
        memset(base + slot * Self.slotSize, 0, Self.slotSize)
        mark(slot, taken: false)
    }

    func withBytes<Result>(_ slot: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        body(UnsafeRawBufferPointer(start: base.map { $0 + slot * Self.slotSize }, count: base == nil ? 0 : Self.slotSize))
    }

    private mutating func mapped() -> UnsafeMutableRawPointer? {
        if let base { return base }
        guard !mapFailed else { return nil }
        let address = mmap(nil, Self.pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else {
            mapFailed = true
            return nil
        }
        guard madvise(address, Self.pageSize, MADV_DONTDUMP) == 0 else {
            munmap(address, Self.pageSize)
            mapFailed = true
            return nil
        }
        base = address
        return address
    }

    private func freeSlot() -> Int? {
        if ~taken.0 != 0 { return (~taken.0).trailingZeroBitCount }
        if ~taken.1 != 0 { return 64 + (~taken.1).trailingZeroBitCount }
        return nil
    }

    private mutating func mark(_ slot: Int, taken isTaken: Bool) {
        let bit = UInt64(1) << UInt64(slot % 64)
        if slot < 64 {
            taken.0 = isTaken ? taken.0 | bit : taken.0 & ~bit
        } else {
            taken.1 = isTaken ? taken.1 | bit : taken.1 & ~bit
        }
    }
}
