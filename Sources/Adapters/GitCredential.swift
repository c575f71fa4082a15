/// git's credential helper protocol (gitcredentials(7), git-credential(1)): `key=value` lines
/// ending with a blank line or end of input.
public enum GitCredential {
    /// The most input a helper reads (git sends a few short lines).
    public static let inputLimit = 64 * 1024

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLarge
        case malformed(line: Int)
        case unknownAction(String)

        public var description: String {
            switch self {
            case .tooLarge: "the credential description is larger than \(GitCredential.inputLimit) bytes"
            case .malformed(let line): "line \(line) of the credential description is not key=value"
            case .unknownAction(let action): "unknown action '\(action)' (git-credential get, store or erase)"
            }
        }
    }

    public enum Action: String, Sendable { case get, store, erase }

    /// The action named on the command line.
    public static func action(_ text: String) throws(Failure) -> Action {
        guard let action = Action(rawValue: text) else { throw .unknownAction(text) }
        return action
    }

    /// The attributes git sent (a repeated key keeps its last value; `key[]` lists are kept
    /// as their last value too, the helper needs none of them).
    public static func parse(_ input: [UInt8]) throws(Failure) -> [String: String] {
        guard input.count <= inputLimit else { throw .tooLarge }
        var attributes: [String: String] = [:]
        for (index, bytes) in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let line = String(decoding: bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes, as: UTF8.self)
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "="), equals != line.startIndex, !line.utf8.contains(0) else {
                throw .malformed(line: index + 1)
            }
            attributes[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return attributes
    }

    /// The answer to `get`: username, the token as password, and its expiry; `nil` when a
    /// value would break the protocol (a line break or NUL would let it set other attributes).
    public static func answer(username: String, token: String, expiresOn: Int64) -> String? {
        let breaksLine = { (value: String) in value.isEmpty || value.utf8.contains { $0 == 10 || $0 == 13 || $0 == 0 } }
        guard !breaksLine(username), !breaksLine(token) else { return nil }
        return "username=\(username)\npassword=\(token)\npassword_expiry_utc=\(expiresOn)\n"
    }
}

/// Which hosts get tokens, and for which scope: `host` patterns (`*.` matches one or more
/// labels) mapped to scopes. The default maps Azure DevOps.
public struct GitCredentialHosts: Sendable, Equatable {
    /// Azure DevOps' resource.
    public static let azureDevOpsScope = "499b84ac-1321-427f-aa17-267ca6975798/.default"
    public static let `default` = GitCredentialHosts(["dev.azure.com": azureDevOpsScope, "*.visualstudio.com": azureDevOpsScope])

    public let scopes: [String: String]

    public init(_ scopes: [String: String]) { self.scopes = scopes }

    /// The scope for an https request to `host` (port ignored), or `nil`: not ours, git asks
    /// its next helper.
    public func scope(protocol scheme: String?, host: String?) -> String? {
        guard scheme == "https", let host else { return nil }
        let name = (host.split(separator: ":").first.map(String.init) ?? host).lowercased()
        if let exact = scopes[name] { return exact }
        return scopes.first { pattern, _ in
            pattern.hasPrefix("*.") && name.hasSuffix(pattern.dropFirst(1).lowercased()) && name.count > pattern.count - 1
        }?.value
    }
}
