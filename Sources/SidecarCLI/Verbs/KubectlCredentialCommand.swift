import Adapters
import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar kubectl-credential`: a kubectl exec credential plugin. Prints an
/// `ExecCredential` in the apiVersion `KUBERNETES_EXEC_INFO` names, with a token acquired
/// silently. When a sign-in is needed and kubectl says the plugin may interact, it runs the
/// device code sign-in (messages on stderr); otherwise it fails with exit status 2 and a
/// message naming `auth-sidecar login`. Stdout carries only the credential.
struct KubectlCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "A kubectl exec credential plugin: an ExecCredential with an Entra token (AKS by default).",
        discussion: """
            In a kubeconfig user: exec: {apiVersion: client.authentication.k8s.io/v1, command: auth-sidecar, \
            args: [kubectl-credential], interactiveMode: IfAvailable}. Exit status as the other verbs.
            """)

    @Option(help: ArgumentHelp("The scope (default: AKS's \(ExecCredential.aksScope)).", valueName: "scope"))
    var scope: String = ExecCredential.aksScope

    @OptionGroup var common: VerbOptions

    func run() throws {
        let info: ExecCredential.ExecInfo
        do { info = try ExecCredential.execInfo(ProcessEnvironment.value("KUBERNETES_EXEC_INFO")) } catch {
            Console.say("kubectl-credential: \(error.description)")
            throw ExitCode(VerbFailure.failureStatus)
        }
        try VerbSession.run(common) { session throws(VerbFailure) in
            let params: JSONValue = ["scopes": [.string(scope)]]
            let result: JSONValue
            switch try session.outcome("acquireTokenSilent", params) {
            case .success(let value): result = value
            case .failure(let error) where info.interactive && VerbFailure.isSignInNeeded(error):
                Console.say("a sign-in is needed for kubectl; starting a device code sign-in")
                result = try session.call("acquireToken", ["scopes": [.string(scope)], "flow": "deviceCode"])
            case .failure(let error): throw .from(error)
            }
            guard let token = result["accessToken"]?.stringValue, let expiresOn = result["expiresOn"]?.intValue else {
                throw VerbFailure(message: "kubectl-credential: the engine's answer has no accessToken or expiresOn")
            }
            session.print(ExecCredential.json(token: token, expiresOn: expiresOn, apiVersion: info.apiVersion).jsonText)
        }
    }
}
