import AuthSeams

/// WSL: opens a URL in the Windows browser with `wslview`, `explorer.exe` or
/// `cmd.exe /c start URL` (the caller picks the launcher found on `PATH`). No shell on this
/// side; `cmd.exe` parses its own command line, so the URL is escaped for it
/// (``cmdArgument(_:)``) and left unquoted, so `start` takes no window title from it.
public struct WindowsBrowserLauncher: BrowserLauncher {
    /// `wslview`, `explorer.exe` or `cmd.exe` (a name looked up in `PATH`, or a path).
    public let launcher: String
    private let exitGracePeriod: Duration

    public init(launcher: String, exitGracePeriod: Duration = .seconds(2)) {
        self.launcher = launcher
        self.exitGracePeriod = exitGracePeriod
    }

    public func open(_ url: String) async throws {
        let lowered = url.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { throw BrowserError.invalidURL }
        let arguments = Self.arguments(launcher: launcher, url: url)
        let pid = try ProcessSpawner.spawn(arguments)
        let termination = try await ProcessSpawner.waitBriefly(pid, grace: exitGracePeriod)
        switch termination {
        case .none:
            ProcessSpawner.reapInBackground(pid)
        case .exited(let status) where status != 0 && !Self.isExplorer(launcher):
            throw BrowserError.unavailable("\(launcher) exited with status \(status)")
        case .signaled(let signal):
            throw BrowserError.unavailable("\(launcher) was killed by signal \(signal)")
        default:
            // explorer.exe exits 1 even when it opened the URL.
            return
        }
    }

    /// The argument vector that opens `url` with `launcher`.
    static func arguments(launcher: String, url: String) -> [String] {
        let name = launcher.split(separator: "/").last.map(String.init) ?? launcher
        if name.lowercased() == "cmd.exe" { return [launcher, "/c", "start", cmdArgument(url)] }
        return [launcher, url]
    }

    private static func isExplorer(_ launcher: String) -> Bool {
        (launcher.split(separator: "/").last.map(String.init) ?? launcher).lowercased() == "explorer.exe"
    }

    /// `text` as one literal argument of `cmd.exe /c`: its metacharacters (`& | < > ( ) ^ "`)
    /// caret-escaped, and each `%` followed by a caret (which escapes the character after it)
    /// so no `%NAME%` expands: the caret is removed only after variable expansion. Spaces,
    /// which would split the argument, become `%20`.
    static func cmdArgument(_ text: String) -> String {
        var result = ""
        var escapedByCaret = false
        for character in text {
            let character: String = character == " " ? "%20" : String(character)
            for unit in character {
                if escapedByCaret {
                    result.append(unit)
                    escapedByCaret = false
                } else if unit == "%" {
                    result += "%^"
                    escapedByCaret = true
                } else if "&|<>()^\"".contains(unit) {
                    result += "^\(unit)"
                } else {
                    result.append(unit)
                }
            }
        }
        return result
    }
}
