import Adapters
import ArgumentParser
import JSON
import Logging
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar exec [options] -- PROGRAM ARGS...`: runs one program with credentials that
/// live as long as it does (aws-vault's `exec`): the managed-identity endpoint
/// (`IDENTITY_ENDPOINT`/`IDENTITY_HEADER`, and `MSI_ENDPOINT`/`MSI_SECRET` for older SDKs),
/// azd's endpoint (`AZD_AUTH_ENDPOINT`/`AZD_AUTH_KEY`),
/// each on a loopback port of its own with a fresh secret, and the `az` shim first on `PATH`
/// (a link to this binary in a private directory), in the child's environment only. Signals
/// sent to this process are forwarded to the child, not those the terminal sent to the
/// foreground group (the child got them too); when it exits the endpoints stop, the directory goes, and the
/// exit status is the child's (128 + N for a signal N). `--scope` limits what the endpoints
/// give (and leaves `az` off `PATH`: it could ask for any scope); `--token-env NAME=SCOPE` hands
/// the child one token in an environment variable.
struct ExecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a program with the managed-identity and azd endpoints and the az shim, for it only.",
        discussion: """
            The child gets IDENTITY_ENDPOINT/IDENTITY_HEADER (App Service managed identity, api-version 2019-08-01), \
            MSI_ENDPOINT/MSI_SECRET (the same endpoint for older SDKs, api-version 2017-09-01), \
            AZD_AUTH_ENDPOINT/AZD_AUTH_KEY and an az shim first on PATH, each with a new secret, served by this \
            process until the child exits. Signals (INT, TERM, HUP, QUIT, USR1, USR2, WINCH) sent to this process \
            are forwarded; those the terminal sends to its foreground group (Ctrl-C, Ctrl-\\, a resize, a hang-up) \
            reach the child directly and are not sent again. The exit status is the child's.
            """)

    @Option(help: ArgumentHelp("The only scope the endpoints give (repeatable; leaves az off PATH).", valueName: "scope"))
    var scope: [String] = []

    @Option(
        name: .customLong("token-env"),
        help: ArgumentHelp("Put a token for SCOPE in the environment variable NAME (repeatable).", valueName: "NAME=SCOPE"))
    var tokenEnv: [String] = []

    @Flag(name: .customLong("no-az"), help: "Do not put the az shim on PATH.")
    var noAz = false

    @OptionGroup var common: VerbOptions

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The program and its arguments, after --.", valueName: "program"))
    var command: [String] = []

    /// The signals passed on to the child.
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH]

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("name the program to run after --") }
        for entry in tokenEnv {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex, entry.index(after: equals) != entry.endIndex,
                entry[..<equals].allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) })
            else { throw ValidationError("--token-env takes NAME=SCOPE, got '\(entry)'") }
        }
    }

    func run() throws {
        Self.blockForwardedSignals()  // first: every thread started later inherits the mask
        var childStatus: Int32 = 0
        try VerbSession.run(common) { session throws(VerbFailure) in
            childStatus = try ExecRun(options: self, session: session).run()
        }
        if childStatus != 0 { throw ExitCode(childStatus) }
    }

    private static func blockForwardedSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in forwarded { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Whether `requested` (a scope an endpoint was asked for) is allowed by `--scope`.
    static func allows(_ allowed: [String], _ requested: [String]) -> Bool {
        allowed.isEmpty || requested.allSatisfy { scope in allowed.contains { $0.lowercased() == scope.lowercased() } }
    }
}

/// One `exec`: the endpoints, the child, the signals, the clean-up.
private struct ExecRun {
    let options: ExecCommand
    let session: VerbSession

    func run() throws(VerbFailure) -> Int32 {
        let clientId = try session.configuration["clientId"]?.stringValue ?? ""
        let authority = try session.configuration["authority"]?.stringValue ?? ""
        let engine = EnginePool(session)
        defer { engine.shutDown() }
        var environment = Self.currentEnvironment()
        for entry in options.tokenEnv {
            let (name, scope) = (String(entry.prefix { $0 != "=" }), String(entry.drop { $0 != "=" }.dropFirst()))
            switch engine.token(AcquireTokenSilentRequest(scopes: [scope])) {
            case .success(let token): Self.set(&environment, name, token.token)
            case .failure(let failure):
                throw failure.kind == .signInNeeded ? VerbFailure.signInNeeded(failure.message) : VerbFailure(message: failure.message)
            }
        }
        let allowed = options.scope
        let logger = session.logger
        let identity: LocalTokenServer
        let azd: LocalTokenServer
        do throws(AdapterError) {
            identity = try LocalTokenServer(
                .managedIdentity(
                    clientId: clientId,
                    tokens: { scope, renewal in
                        guard ExecCommand.allows(allowed, [scope]) else {
                            return .failure(ReplyError(.error(403, "auth-sidecar exec does not give \(scope) (--scope)")))
                        }
                        return engine.token(for: scope, renewal: renewal)
                    }), logger: logger)
            azd = try LocalTokenServer(
                .azd(tokens: { request in
                    guard ExecCommand.allows(allowed, request.scopes) else {
                        return .failure(
                            signInNeeded: false, "auth-sidecar exec does not give \(request.scopes.joined(separator: " ")) (--scope)")
                    }
                    return AzdAuthServerCommand.answer(request, authority: authority, engine: engine)
                }), logger: logger)
        } catch {
            throw VerbFailure(message: "exec: \(error.description)")
        }
        let servers = [identity, azd]
        for server in servers {
            for (name, value) in server.environment + server.legacyEnvironment { Self.set(&environment, name, value) }
            do { try POSIX.startThread { server.run() } } catch { throw VerbFailure(message: "exec: cannot start a thread") }
        }
        defer { for server in servers { server.stop() } }
        var azDirectory: String?
        if !options.noAz, allowed.isEmpty {
            azDirectory = try Self.azShimDirectory()
            if let azDirectory {
                let path = environment.last { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/usr/bin:/bin"
                Self.set(&environment, "PATH", azDirectory + ":" + path)
            }
        }
        defer { if let azDirectory { Self.removeShimDirectory(azDirectory) } }
        let pid: pid_t
        switch POSIX.spawnForeground(options.command, environment: environment, stdout: session.outputDescriptor) {
        case .failure(let failure): throw VerbFailure(status: 127, message: "exec: cannot run \(options.command[0]): \(failure)")
        case .success(let started): pid = started
        }
        Self.forwardSignals(to: pid)
        return Self.waitForExit(of: pid)
    }

    /// This process's environment as `NAME=value` entries.
    static func currentEnvironment() -> [String] {
        var entries: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            entries.append(String(cString: entry))
            pointer += 1
        }
        return entries
    }

    static func set(_ environment: inout [String], _ name: String, _ value: String) {
        environment.removeAll { $0.hasPrefix(name + "=") }
        environment.append(name + "=" + value)
    }

    /// A new 0700 directory holding `az`, a link to this binary.
    static func azShimDirectory() throws(VerbFailure) -> String {
        let base = ProcessEnvironment.value("XDG_RUNTIME_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/auth-sidecar-exec.XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw VerbFailure(message: "exec: cannot make a directory in \(base): \(POSIX.lastErrorString)")
        }
        let directory = String(cString: made)
        guard let binary = realpath("/proc/self/exe", nil) else {
            throw VerbFailure(message: "exec: cannot find this binary: \(POSIX.lastErrorString)")
        }
        defer { free(binary) }
        guard symlink(binary, directory + "/az") == 0 else {
            let reason = POSIX.lastErrorString
            removeShimDirectory(directory)
            throw VerbFailure(message: "exec: cannot link az in \(directory): \(reason)")
        }
        return directory
    }

    static func removeShimDirectory(_ directory: String) {
        unlink(directory + "/az")
        rmdir(directory)
    }

    /// A thread that passes each forwarded signal on to `pid` (the signals are blocked in
    /// every thread of this process; this one takes them with `sigwaitinfo`), except one the
    /// terminal sent to the child too
    /// (``SignalOrigin/reachedChild(signal:code:childGroup:ownGroup:sessionLeader:)``).
    static func forwardSignals(to pid: pid_t) {
        _ = try? POSIX.startThread {
            var set = sigset_t()
            sigemptyset(&set)
            for signal in ExecCommand.forwarded { sigaddset(&set, signal) }
            while true {
                var info = siginfo_t()
                let signal = sigwaitinfo(&set, &info)
                guard signal > 0 else { continue }
                let leader = getsid(0) == getpid()
                if SignalOrigin.reachedChild(
                    signal: signal, code: info.si_code, childGroup: getpgid(pid), ownGroup: getpgrp(), sessionLeader: leader)
                {
                    continue
                }
                kill(pid, signal)
            }
        }
    }

    /// The child's exit status, 128 + N when signal N ended it.
    static func waitForExit(of pid: pid_t) -> Int32 {
        POSIX.waitForTermination(of: pid)?.shellStatus ?? 1
    }
}

/// Whether a signal this process got has already reached its child.
enum SignalOrigin {
    /// The kernel's `si_code` for a signal it sent itself (`SI_KERNEL`): the terminal's
    /// Ctrl-C, Ctrl-\, resize or hang-up. One a process sent (`kill`: `SI_USER`, 0;
    /// `sigqueue`, `tgkill`: negative) has `si_code` <= 0.
    static let kernelCode: Int32 = 0x80

    /// True when the terminal sent `signal` (`code` is `SI_KERNEL`) to the foreground process
    /// group and the child is in this process's group (`childGroup` == `ownGroup`): the child
    /// got it as well, and forwarding it would deliver it twice. Not for a hang-up when this
    /// process leads the session (`sessionLeader`): the kernel sends that one SIGHUP to the
    /// session leader alone. A signal sent to this process alone is forwarded.
    static func reachedChild(signal: Int32, code: Int32, childGroup: pid_t, ownGroup: pid_t, sessionLeader: Bool) -> Bool {
        guard code == kernelCode, childGroup >= 0, childGroup == ownGroup else { return false }
        return !(signal == SIGHUP && sessionLeader)
    }
}
