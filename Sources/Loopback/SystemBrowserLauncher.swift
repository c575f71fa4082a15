import AuthSeams
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Opens URLs with `$BROWSER` (Python `webbrowser` conventions, see `BrowserCommand`),
/// else `xdg-open`.
///
/// Commands are tried in order. A command counts as a success when it is still running
/// after `exitGracePeriod` (a browser) or exits 0 within it (a launcher such as
/// `xdg-open`); it fails when it cannot be spawned or exits non-zero (or on a signal)
/// within it, and the next one is tried. When `$BROWSER` names commands, only those are
/// tried (the user chose them); `fallbackCommands` are used only when it names none.
/// The URL is never logged and never goes through a shell.
public struct SystemBrowserLauncher: BrowserLauncher {
    private let browser: String?
    private let fallbackCommands: [String]
    private let exitGracePeriod: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - browser: the `$BROWSER`-style list to use; nil reads `$BROWSER` at each `open`.
    ///   - fallbackCommands: commands used when the list names none.
    ///   - exitGracePeriod: how long a failing command may take to exit before it counts as started.
    ///   - logger: where to log (program names only).
    public init(
        browser: String? = nil, fallbackCommands: [String] = ["xdg-open"],
        exitGracePeriod: Duration = .seconds(1),
        logger: Logger = Logger(label: "auth-sidecar.browser")
    ) {
        self.browser = browser
        self.fallbackCommands = fallbackCommands
        self.exitGracePeriod = exitGracePeriod
        self.logger = logger
    }

    public func open(_ url: String) async throws {
        let lowered = url.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), !url.utf8.contains(0) else {
            throw BrowserError.invalidURL
        }
        var commands = BrowserCommand.parseList(browser ?? getenv("BROWSER").map { String(cString: $0) } ?? "")
        if commands.isEmpty {
            commands = fallbackCommands.flatMap { BrowserCommand.parseList($0) }
        }
        guard !commands.isEmpty else {
            throw BrowserError.unavailable("no browser command: $BROWSER names none and there is no fallback")
        }
        var reasons: [String] = []
        for command in commands {
            switch command {
            case .failure(let error):
                reasons.append(error.description)
            case .success(let command):
                if let reason = try await launch(command, url: url) {
                    reasons.append(reason)
                } else {
                    return
                }
            }
        }
        throw BrowserError.unavailable(reasons.joined(separator: "; "))
    }

    /// Runs one command; nil on success, else why it failed.
    private func launch(_ command: BrowserCommand, url: String) async throws -> String? {
        let arguments = command.arguments(for: url)
        let program = arguments.first ?? ""
        let pid: pid_t
        do {
            pid = try ProcessSpawner.spawn(arguments)
        } catch {
            logger.debug("browser: cannot start \(program): \(error.description)")
            return error.description
        }
        let termination: ProcessSpawner.Termination?
        do {
            termination = try await ProcessSpawner.waitBriefly(pid, grace: exitGracePeriod)
        } catch {
            ProcessSpawner.reapInBackground(pid)
            throw error
        }
        switch termination {
        case .none:
            ProcessSpawner.reapInBackground(pid)
            logger.info("browser: started \(program) (pid \(pid))")
            return nil
        case .exited(0), .unknown:
            logger.info("browser: \(program) opened the URL")
            return nil
        case .exited(let status):
            logger.warning("browser: \(program) exited with status \(status)")
            return "\(program) exited with status \(status)"
        case .signaled(let signal):
            logger.warning("browser: \(program) was killed by signal \(signal)")
            return "\(program) was killed by signal \(signal)"
        }
    }
}
