/// Bounds on the shape of untrusted JSON text, checked on the raw bytes before anything is
/// parsed, so that a message within the size limit cannot make the parser allocate many
/// times its size (a 4 MB object of 300,000 keys once cost 100 MB of memory).
///
/// What counts: the members of each object (its keys); the elements of the root array (a
/// JSON-RPC batch); the items of the whole text (every key, scalar, object and array),
/// which bounds the parsed tree, and so memory, whatever the shape.
///
/// ```swift
/// if let violation = JSONShapeLimits.message.violation(in: bytes) { refuse(violation) }
/// ```
public struct JSONShapeLimits: Sendable, Equatable {
    /// The most members one object may have.
    public var maxObjectMembers: Int
    /// The most elements the root array may have.
    public var maxRootArrayElements: Int
    /// The most items (keys, scalars, objects, arrays) in the whole text.
    public var maxItems: Int

    public init(maxObjectMembers: Int, maxRootArrayElements: Int, maxItems: Int) {
        self.maxObjectMembers = maxObjectMembers
        self.maxRootArrayElements = maxRootArrayElements
        self.maxItems = maxItems
    }

    /// The limits of a protocol message (protocol/README.md "Transport and framing").
    public static let message = JSONShapeLimits(maxObjectMembers: 1_000, maxRootArrayElements: 1_000, maxItems: 100_000)

    /// Which limit the text passes, or nil. Text that is not valid JSON is the parser's to
    /// refuse: the scan only counts, and stops at the first limit passed.
    ///
    /// - Complexity: O(n) in the size of the text, no allocation beyond the nesting stack.
    public func violation(in bytes: UnsafeRawBufferPointer) -> JSONShapeViolation? {
        var scanner = ShapeScanner(limits: self)
        for byte in bytes {
            if let violation = scanner.consume(byte) { return violation }
        }
        return nil
    }

    /// See ``violation(in:)-(UnsafeRawBufferPointer)``.
    public func violation(in bytes: ArraySlice<UInt8>) -> JSONShapeViolation? {
        bytes.withUnsafeBytes { violation(in: $0) }
    }
}

/// The limit a JSON text passed.
public enum JSONShapeViolation: Error, Equatable, Sendable {
    case objectMembers(limit: Int)
    case rootArrayElements(limit: Int)
    case items(limit: Int)

    /// The limit passed.
    public var limit: Int {
        switch self {
        case .objectMembers(let limit), .rootArrayElements(let limit), .items(let limit): limit
        }
    }
}

/// The byte-at-a-time counter behind ``JSONShapeLimits/violation(in:)-(UnsafeRawBufferPointer)``.
private struct ShapeScanner {
    let limits: JSONShapeLimits
    /// The open containers, innermost last, each one `Int`: its count so far times two, plus
    /// one for an object. (An array of `(isObject, count)` tuples had the runtime make a tuple
    /// type and an array class for it in every process, at its first request.)
    private var open: [Int] = []
    private static func isObject(_ container: Int) -> Bool { container & 1 == 1 }
    private static func count(_ container: Int) -> Int { container >> 1 }
    private static let one = 2
    /// Containers opened beyond `maxTrackedDepth` (not tracked: the parser refuses such depth).
    private var untracked = 0
    private static let maxTrackedDepth = 2 * JSONValue.defaultMaxDepth
    private var items = 0
    private var inString = false
    private var escaped = false
    /// Inside a number or a literal (`true`, `null`...).
    private var inScalar = false

    init(limits: JSONShapeLimits) {
        self.limits = limits
        open.reserveCapacity(32)
    }

    mutating func consume(_ byte: UInt8) -> JSONShapeViolation? {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return nil
        }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","):
            inScalar = false
            return nil
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            inScalar = false
            if untracked > 0 { untracked -= 1 } else { _ = open.popLast() }
            return nil
        case UInt8(ascii: ":"):
            inScalar = false
            guard untracked == 0, let last = open.indices.last, Self.isObject(open[last]) else { return nil }
            open[last] += Self.one
            return Self.count(open[last]) > limits.maxObjectMembers ? .objectMembers(limit: limits.maxObjectMembers) : nil
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            inScalar = false
            let violation = itemStarts()
            if open.count < Self.maxTrackedDepth {
                open.append(byte == UInt8(ascii: "{") ? 1 : 0)
            } else {
                untracked += 1
            }
            return violation
        case UInt8(ascii: "\""):
            inScalar = false
            inString = true
            return itemStarts()
        default:
            guard !inScalar else { return nil }
            inScalar = true
            return itemStarts()
        }
    }

    /// An item (key, scalar, object or array) starts in the innermost open container: in the
    /// root array (where there are no keys) it is an element.
    private mutating func itemStarts() -> JSONShapeViolation? {
        items += 1
        if items > limits.maxItems { return .items(limit: limits.maxItems) }
        if untracked == 0, open.count == 1, let root = open.first, !Self.isObject(root) {
            open[0] += Self.one
            if Self.count(open[0]) > limits.maxRootArrayElements { return .rootArrayElements(limit: limits.maxRootArrayElements) }
        }
        return nil
    }
}
