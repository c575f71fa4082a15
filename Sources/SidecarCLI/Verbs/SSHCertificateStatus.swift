import JSON
import Sidecar

/// `status`'s lines and JSON for the SSH certificates the agent keeps.
enum SSHCertificateStatus {
    static func lines(_ kept: [SSHKeyFiles.Kept], now: Int64) -> [(label: String, value: String)] {
        kept.enumerated().map { index, item in
            let state: String =
                if let until = item.validBefore {
                    "\(item.principals.joined(separator: ", ")), \(VerbOutput.lifetime(secondsLeft: VerbOutput.seconds(from: now, to: until)))"
                } else {
                    "no certificate yet"
                }
            return (index == 0 ? "ssh certs" : "", "\(item.certificate): \(state)")
        }
    }

    static func json(_ kept: [SSHKeyFiles.Kept]) -> JSONValue {
        .array(
            kept.map { item in
                [
                    "key": .string(item.key), "certificate": .string(item.certificate), "principals": JSONValue(item.principals),
                    "validBefore": item.validBefore.map(JSONValue.int) ?? .null,
                ]
            })
    }
}
