/// The `Host` block `ssh-config` prints for `~/.ssh/config`, and what may go into it: ssh_config
/// is one keyword and its arguments per line, so a newline in a value starts a new keyword (a
/// `ProxyCommand` that runs at the next `ssh`), whitespace splits a value into arguments, and a
/// `"` ends a quoted path. A host or user with whitespace or a control character, or a path
/// with `"`, a newline or another control character, is refused naming it.
enum SSHConfigBlock {
    /// Why `value` cannot be the block's `Host` or `User` (`what` names it); `nil`: it can.
    static func wordProblem(_ value: String, what: String) -> String? {
        if value.isEmpty { return "\(what) is empty" }
        if let bad = value.unicodeScalars.first(where: { $0.properties.isWhitespace || isControl($0) }) {
            return "\(what) may not contain whitespace or control characters (found \(describe(bad))): "
                + "ssh_config would read it as another keyword or argument"
        }
        if value.contains("\"") { return "\(what) may not contain a double quote" }
        return nil
    }

    /// Why `value` cannot be a quoted path of the block (`what` names it); `nil`: it can.
    static func pathProblem(_ value: String, what: String) -> String? {
        if let bad = value.unicodeScalars.first(where: { $0 == "\"" || isControl($0) }) {
            return "\(what) may not contain a double quote, a newline or another control character (found \(describe(bad))): "
                + "it is written quoted in ssh_config"
        }
        return nil
    }

    /// The block; a value that would break out of it is refused (``VerbFailure``).
    static func text(host: String, user: String, certificate: String, key: String) throws(VerbFailure) -> String {
        let problems = [
            wordProblem(host, what: "the host"), wordProblem(user, what: "the user"),
            pathProblem(certificate, what: "the certificate path"), pathProblem(key, what: "the key path"),
        ]
        if let problem = problems.compactMap({ $0 }).first { throw VerbFailure(message: problem) }
        return """
            Host \(host)
                User \(user)
                CertificateFile "\(certificate)"
                IdentityFile "\(key)"
            """
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
