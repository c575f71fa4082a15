import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a sign-in shows on stderr while it waits: the device code, its URL and a countdown
/// (one line rewritten in place on a terminal; otherwise a plain line at once, then one each
/// minute). Colours only
/// on a terminal, and never with `NO_COLOR`. (A browser sign-in's line is ``URLOpener``'s.)
final class SignInProgress: Sendable {
    /// How stderr is written to.
    struct Style: Equatable {
        /// stderr is a terminal: the countdown rewrites its line with `\r`.
        var terminal: Bool
        /// Bold code and underlined URL (a terminal without `NO_COLOR`).
        var colour: Bool

        static func current() -> Style {
            let terminal = isatty(STDERR_FILENO) == 1
            let noColour = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
            return Style(terminal: terminal, colour: terminal && !noColour)
        }
    }

    private struct State {
        var expiresOn: Int64?
        /// Length of the line the countdown last wrote (a terminal), 0 when none is open.
        var openLine = 0
        /// The seconds left when a line was last written (not a terminal).
        var reportedSecondsLeft: Int64?
        /// The seconds left last shown (a terminal).
        var shownSeconds: Int64?
        var ticking = false
        var generation = 0
    }

    let style: Style
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> Int64
    private let state = PthreadMutex(State())

    init(
        style: Style = .current(), now: @escaping @Sendable () -> Int64 = { Int64(time(nil)) },
        write: @escaping @Sendable (String) -> Void = { POSIX.writeAll(STDERR_FILENO, Array($0.utf8)) }
    ) {
        self.style = style
        self.now = now
        self.write = write
    }

    /// The `deviceCode` notification: the URL and the code, then the countdown until ``finish()``.
    func deviceCode(userCode: String, verificationUri: String, expiresOn: Int64?) {
        let code = style.colour ? "\u{1B}[1m\(userCode)\u{1B}[0m" : userCode
        let url = style.colour ? "\u{1B}[4m\(verificationUri)\u{1B}[0m" : verificationUri
        write("auth-sidecar: to sign in, open \(url) and enter the code \(code)\n")
        let start = state.withLock { state -> Int? in
            state.expiresOn = expiresOn
            state.reportedSecondsLeft = nil
            state.shownSeconds = nil
            guard expiresOn != nil, !state.ticking else { return nil }
            state.ticking = true
            state.generation += 1
            return state.generation
        }
        tick()
        if let generation = start { startTicker(generation) }
    }

    /// The sign-in ended: the countdown stops and its line is cleared.
    func finish() {
        state.withLock { state in
            state.ticking = false
            state.expiresOn = nil
            if state.openLine > 0 { write("\r" + String(repeating: " ", count: state.openLine) + "\r") }
            state.openLine = 0
        }
    }

    /// The countdown's text for `secondsLeft`.
    static func countdown(secondsLeft: Int64, terminal: Bool) -> String {
        let left = max(0, secondsLeft)
        if terminal {
            let seconds = left % 60 < 10 ? "0\(left % 60)" : "\(left % 60)"
            return "auth-sidecar: waiting for the sign-in; the code expires in \(left / 60):\(seconds) (Ctrl-C to cancel)"
        }
        let minutes = left / 60
        return "auth-sidecar: waiting for the sign-in; the code expires in \(minutes) min (Ctrl-C to cancel)"
    }

    /// Writes the countdown: each second on a terminal, else a line a minute after the last one
    /// (not when the minutes left change: 900 s left then 899 s would write "15 min" and
    /// "14 min" a second apart). Under the lock, so ``finish()`` never races a line being written.
    func tick() {
        state.withLock { state in
            guard let expiresOn = state.expiresOn else { return }
            let left = max(0, VerbOutput.seconds(from: now(), to: expiresOn))
            if style.terminal {
                guard left != state.shownSeconds else { return }
                state.shownSeconds = left
                let line = Self.countdown(secondsLeft: left, terminal: true)
                let padding = String(repeating: " ", count: max(0, state.openLine - line.count))
                state.openLine = line.count
                write("\r" + line + padding)
                return
            }
            if let reported = state.reportedSecondsLeft, left > reported - 60 { return }
            state.reportedSecondsLeft = left
            write(Self.countdown(secondsLeft: left, terminal: false) + "\n")
        }
    }

    private func startTicker(_ generation: Int) {
        do {
            try POSIX.startThread { [self] in
                while state.withLock({ $0.ticking && $0.generation == generation }) {
                    usleep(250_000)
                    tick()
                }
            }
        } catch {
            // Without a thread there is no countdown; the code and URL are shown.
        }
    }
}
