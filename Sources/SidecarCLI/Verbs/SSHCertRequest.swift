import Adapters
import JSON
import Sidecar

/// What `ssh-cert` asks for and prints, as a plain value (``SSHCertCommand`` and the fast path,
/// ``PlainCommandLine``, both make one), and what `ssh-config` shares with it: the key (given,
/// else the runtime key, made once), a certificate for it from the engine (the cached one while
/// it has more than a third of its life, at most 5 minutes, left: no request), and its file,
/// rewritten only when it changed.
struct SSHCertRequest: Equatable {
    /// What `ssh-cert` prints.
    enum Format: String, CaseIterable {
        case path, json
    }

    var key: String?
    var output: String?
    var format = Format.path

    /// What was written (or found current) and what it says.
    struct Outcome {
        var key: String
        var path: String
        var result: TokenResponse
        var certificate: JSONValue { result.sshCertificate ?? .null }
        var principal: String { certificate["principals"]?.arrayValue?.first?.stringValue ?? "" }
    }

    func run(_ session: VerbSession) throws(VerbFailure) -> Outcome {
        let keyPath: String
        let publicKey: String
        do throws(SSHKeyFiles.Failure) {
            if let key { keyPath = key } else { keyPath = try SSHKeyFiles.runtimeKey() }
            publicKey = try SSHKeyFiles.publicKeyLine(ofKey: keyPath)
        } catch {
            throw VerbFailure(message: error.description)
        }
        var request = AcquireTokenSilentRequest()
        request.sshCertificate = SSHCertificateParams(publicKey: publicKey)
        let result = try session.call(request, pipelined: true)
        guard let line = result.sshCertificate?["line"]?.stringValue else {
            throw VerbFailure(message: "the engine's answer carries no SSH certificate")
        }
        let path = output ?? SSHKeyFiles.certificatePath(forKey: keyPath)
        do {
            try SSHKeyFiles.writeCertificate(line, to: path)
        } catch {
            throw VerbFailure(message: error.description)
        }
        return Outcome(key: keyPath, path: path, result: result)
    }

    /// `ssh-cert`: the certificate for the key, and what it says, printed.
    func runAndPrint(_ session: VerbSession) throws(VerbFailure) {
        let outcome = try run(session)
        switch format {
        case .path:
            session.print(outcome.path)
            let until = outcome.certificate["validBefore"]?.intValue.map(TimeText.rfc3339) ?? "?"
            Console.say("auth-sidecar: \(outcome.path): principal \(outcome.principal), valid until \(until)")
        case .json:
            var object: JSONObject = ["path": .string(outcome.path), "key": .string(outcome.key)]
            for name in ["keyId", "principals", "validAfter", "validBefore"] { object[name] = outcome.certificate[name] ?? .null }
            object["fromCache"] = .bool(outcome.result.fromCache)
            session.print(JSONValue.object(object).jsonText)
        }
    }
}
