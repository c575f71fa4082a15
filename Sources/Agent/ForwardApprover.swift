import Loopback
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the laptop's user whether a forwarded session may sign in (`forwardApproval`): never
/// (`deny`, the default), or the configured command with the request's description as its
/// last argument (no shell; stdin /dev/null, output to the agent's stderr): exit status 0
/// approves, anything else (another status, a signal, no answer within ``timeout``) refuses.
struct ForwardApprover: Sendable {
    let setting: ForwardApproval
    var timeout: Duration = .seconds(120)

    /// `nil` when approved, else why not (for the refusal's message).
    func refusal(for description: String) async -> String? {
        guard case .command(let command) = setting else {
            return "forwardApproval is \"deny\" on the agent's machine (the default); set it to a command that asks you there "
                + "(exit status 0 approves), or sign in there with 'auth-sidecar login'"
        }
        let pid: pid_t
        do { pid = try ProcessSpawner.spawn(command + [description]) } catch {
            return "the forwardApproval command could not start: \(error)"
        }
        let termination: ProcessSpawner.Termination?
        do { termination = try await ProcessSpawner.waitBriefly(pid, grace: timeout) } catch {
            Self.end(pid)
            return "the request was cancelled while waiting for approval"
        }
        switch termination {
        case .exited(0)?: return nil
        case .exited(let status)?: return "the agent's user declined (the forwardApproval command exited with status \(status))"
        case .signaled(let signal)?: return "the forwardApproval command was ended by signal \(signal)"
        case .unknown?: return "the forwardApproval command's exit status could not be read"
        case nil:
            Self.end(pid)
            return "no answer from the forwardApproval command within \(timeout.components.seconds) s"
        }
    }

    private static func end(_ pid: pid_t) {
        kill(pid, SIGTERM)
        ProcessSpawner.reapInBackground(pid)
    }
}
