import Adapters
import JSON

/// The `--query` forms tools pass, a small subset of JMESPath: a field path (`accessToken`,
/// `user.name`) or a multiselect list of paths (`[accessToken, expires_on]`). Anything else is
/// not a query this shim answers (`init` fails) rather than a wrong answer.
public struct AzQuery: Equatable, Sendable {
    /// One path per selected value; a single path selects the value itself, not a list.
    let paths: [[String]]
    let isList: Bool

    public init?(_ text: String) {
        let trimmed = text.trimmingSpaces
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
            let inner = trimmed.dropFirst().dropLast()
            let parts = inner.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
            let paths = parts.compactMap(Self.path)
            guard !parts.isEmpty, paths.count == parts.count else { return nil }
            self.paths = paths
            isList = true
        } else {
            guard let path = Self.path(trimmed) else { return nil }
            paths = [path]
            isList = false
        }
    }

    /// The selected value: a missing field is `null`, as in JMESPath.
    public func apply(to value: JSONValue) -> JSONValue {
        let selected = paths.map { path in path.reduce(value) { current, key in current[key] ?? .null } }
        return isList ? .array(selected) : selected[0]
    }

    /// `a.b.c` of JMESPath identifiers (`[A-Za-z_][A-Za-z0-9_]*`).
    private static func path(_ text: String) -> [String]? {
        let keys = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return keys.allSatisfy(isIdentifier) ? keys : nil
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || isLetter(first) else { return false }
        return key.unicodeScalars.allSatisfy { $0 == "_" || isLetter($0) || ($0.value >= 0x30 && $0.value <= 0x39) }
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value >= 0x41 && scalar.value <= 0x5A) || (scalar.value >= 0x61 && scalar.value <= 0x7A)
    }
}
