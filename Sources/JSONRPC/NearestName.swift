/// The known name a mistyped one most likely meant, for "did you mean …?" in error messages.
///
/// A name that differs only in case wins; otherwise the closest by edit distance (insertions,
/// deletions, substitutions, ignoring case), at most two edits and less than half the name's
/// length, so a short unrelated name suggests nothing. Ties go to the name first in sorted
/// order, so the message never depends on a set's iteration order.
enum NearestName {
    /// - Returns: the name in `known` that `name` most likely meant, or `nil` when none is close.
    static func suggestion(for name: String, among known: Set<String>) -> String? {
        let lowered = Array(name.lowercased().utf8)
        var best: (distance: Int, name: String)?
        for candidate in known.sorted() {
            let distance = editDistance(lowered, Array(candidate.lowercased().utf8), limit: 2)
            guard let distance, distance * 2 < max(lowered.count, 1) || distance == 0 else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (distance, candidate) }
        }
        return best?.name
    }

    /// Levenshtein distance, or `nil` when it is over `limit` (rows stop early).
    static func editDistance(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        var previous = Array(0...b.count)
        for (i, byteA) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, byteB) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j] + (byteA == byteB ? 0 : 1), previous[j + 1] + 1, current[j] + 1)
            }
            guard current.min() ?? 0 <= limit else { return nil }
            previous = current
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
