import JSON

/// Reading and writing the members of one cache entry (a JSON object).
///
/// Times are written as strings of Unix seconds, as every MSAL writes them; on reading, an
/// integer is accepted too. Members a type does not know are kept in `additionalFields` and
/// written back after the known ones, so other SDKs' data survives a round trip.
struct CacheFields {
    private(set) var object: JSONObject

    init(_ object: JSONObject = JSONObject()) { self.object = object }

    func string(_ key: String) -> String? { object[key]?.stringValue }

    /// A time, clamped into ``plausibleTimes`` (the file may hold anything, `Int64.min` too:
    /// no arithmetic on what it gives may overflow).
    func time(_ key: String) -> Int64? {
        let value: Int64? =
            switch object[key] {
            case .string(let text)?: Int64(text.trimmingSpaces)
            case .int(let value)?: value
            case .double(let value)? where value.isFinite && abs(value) < 9e18: Int64(value)
            default: nil
            }
        return value.map { min(max($0, Self.plausibleTimes.lowerBound), Self.plausibleTimes.upperBound) }
    }

    /// The times believed: the epoch to the end of year 9999.
    static let plausibleTimes: ClosedRange<Int64> = 0...253_402_300_799

    /// The members other than `known`, in their original order.
    func remaining(excluding known: Set<String>) -> JSONObject {
        JSONObject(object.filter { !known.contains($0.key) }.map { ($0.key, $0.value) })
    }

    mutating func set(_ key: String, _ value: String?) {
        if let value { object[key] = .string(value) }
    }

    /// `value`, or JSON `null` when it is empty (MSAL for Python's `home_account_id` of an app token).
    mutating func set(_ key: String, nullIfEmpty value: String) {
        object[key] = value.isEmpty ? .null : .string(value)
    }

    mutating func setTime(_ key: String, _ value: Int64?) {
        if let value { object[key] = .string(String(value)) }
    }

    /// Appends `extra` members that are not already set.
    mutating func append(_ extra: JSONObject) {
        for (key, value) in extra where object[key] == nil { object[key] = value }
    }
}

extension String {
    var trimmingSpaces: Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }),
            let last = scalars.lastIndex(where: { $0 != " " })
        else { return "" }
        return self[first...last]
    }
}
