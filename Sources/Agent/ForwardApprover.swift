import Loopback
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the laptop's user whether a forwarded session may sign in (`forwardApproval`): never
/// (`deny`, the default), or the configured command with the request's description as its
/// last argument (no shell; stdin /dev/null, output to the agent's stderr): exit status 0
/// approves, anything else (another status, a signal, no answer within ``timeout``) refuses.
/// One question at a time per agent: a remote asking again while the user is being asked is
/// refused at once, so it cannot pile up prompts on the laptop.
struct ForwardApprover: Sendable {
    let setting: ForwardApproval
    /// Whether a question is being asked now (shared by the agent's forwarded sessions).
    let gate: ApprovalGate
    var timeout: Duration = .seconds(120)

    /// `nil` when approved, else why not (for the refusal's message).
    func refusal(for description: String) async -> String? {
        guard case .command(let command) = setting else {
            return "forwardApproval is \"deny\" on the agent's machine (the default); set it to a command that asks you there "
                + "(exit status 0 approves), or sign in there with 'auth-sidecar login'"
        }
        guard gate.enter() else { return "another forwarded sign-in is waiting for approval; retry once it is answered" }
        defer { gate.leave() }
        return await ask(command, description)
    }

    private func ask(_ command: [String], _ description: String) async -> String? {
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

/// Whether the `forwardApproval` command is asking now: one agent, one question at a time.
final class ApprovalGate: Sendable {
    private let busy = PthreadMutex(false)

    /// Takes the gate; `false` when a question is already being asked.
    func enter() -> Bool {
        busy.withLock { busy in
            guard !busy else { return false }
            busy = true
            return true
        }
    }

    func leave() { busy.withLock { $0 = false } }
}
