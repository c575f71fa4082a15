import AuthSeams
import JSON

/// The question the laptop's user is asked before a forwarded sign-in (`forwardApproval`'s
/// last argument): what the sign-in is for first (scopes, authority, flow, login hint, the
/// other parameters the remote set), then who asks. Every part the remote controls is quoted,
/// free of control characters, markup-escaped (a dialog such as zenity renders Pango markup)
/// and bounded, so the peer cannot write the question.
public enum ForwardApprovalQuestion {
    /// The most characters a part keeps.
    static let partLimit = 200

    /// The question for a forwarded `acquireToken` with `params` (already admitted), asked
    /// by the process `pid` whose command line is `command`, as the laptop sees them.
    public static func text(params: JSONValue?, scopes: [String], authority: String, command: String, pid: Int32) -> String {
        let flow = params?["flow"]?.stringValue == "deviceCode" ? "device code" : "browser"
        var lines = [
            "auth-sidecar: a forwarded session asks to sign in on this machine.",
            "Scopes: \(quoted(scopes.joined(separator: " ")))",
            "Authority: \(quoted(authority))",
            "Flow: \(flow)",
        ]
        for (key, label) in [("loginHint", "Login hint"), ("domainHint", "Domain hint"), ("promptType", "Prompt"), ("claims", "Claims")] {
            if let value = params?[key]?.stringValue { lines.append("\(label): \(quoted(value))") }
        }
        if let account = params?["account"], !account.isNull { lines.append("Account: \(quoted(account.serializedText))") }
        lines.append("Asked by: \(quoted(command)) (pid \(pid))")
        lines.append("Allow?")
        return lines.joined(separator: "\n")
    }

    /// `text` in double quotes: control characters (C0, DEL, C1, line and paragraph separators,
    /// bidirectional overrides) as `?`, markup characters as entities (``Markup``), at most
    /// ``partLimit`` characters.
    public static func quoted(_ text: String) -> String {
        var plain = ""
        for scalar in text.unicodeScalars.prefix(partLimit) {
            let value = scalar.value
            let control =
                value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            plain.unicodeScalars.append(control ? "?" : scalar)
        }
        return "\"" + Markup.escaped(plain) + (text.unicodeScalars.count > partLimit ? "…" : "") + "\""
    }
}

extension JSONValue {
    /// Compact JSON text.
    fileprivate var serializedText: String { String(decoding: serialized(), as: UTF8.self) }
}
