import Synchronization
import Testing

@testable import SidecarCLI

/// The device code's lines: one rewritten line on a terminal, plain lines otherwise, colour
/// only on a terminal without NO_COLOR.
@Suite struct SignInProgressTests {
    final class Output: Sendable {
        let text = Mutex("")
        var value: String { text.withLock { $0 } }
    }

    @Test func aTerminalGetsOneUpdatingLineAndColour() {
        let output = Output()
        let progress = SignInProgress(
            style: .init(terminal: true, colour: true), now: { 1000 }, write: { text in output.text.withLock { $0 += text } })
        progress.deviceCode(userCode: "ABCD", verificationUri: "https://h/devicelogin", expiresOn: 1000 + 905)
        progress.finish()
        let text = output.value
        #expect(text.hasPrefix("auth-sidecar: to sign in, open \u{1B}[4mhttps://h/devicelogin\u{1B}[0m and enter the code \u{1B}[1mABCD\u{1B}[0m\n"))
        #expect(text.contains("\rauth-sidecar: waiting for the sign-in; the code expires in 15:05 (Ctrl-C to cancel)"))
        #expect(text.hasSuffix("\r"))
    }

    @Test func plainLinesWithoutATerminal() {
        let output = Output()
        let progress = SignInProgress(
            style: .init(terminal: false, colour: false), now: { 1000 }, write: { text in output.text.withLock { $0 += text } })
        progress.deviceCode(userCode: "ABCD", verificationUri: "https://h/devicelogin", expiresOn: 1000 + 905)
        progress.finish()
        #expect(
            output.value
                == "auth-sidecar: to sign in, open https://h/devicelogin and enter the code ABCD\n"
                + "auth-sidecar: waiting for the sign-in; the code expires in 15 min (Ctrl-C to cancel)\n")
        #expect(SignInProgress.countdown(secondsLeft: 65, terminal: true).contains("1:05"))
    }

    @Test func withoutATerminalTheLinesAreAMinuteApart() {
        let written = Mutex<[String]>([])
        let clock = Mutex<Int64>(1000)
        let progress = SignInProgress(
            style: .init(terminal: false, colour: false), now: { clock.withLock { $0 } },
            write: { text in
                let at = clock.withLock { $0 }
                written.withLock { $0.append("\(at):\(text.split(separator: ";").last ?? "")") }
            })
        progress.deviceCode(userCode: "ABCD", verificationUri: "https://h/devicelogin", expiresOn: 1000 + 900)
        for second in [1001, 1030, 1059, 1060, 1061, 1119, 1120] {
            clock.withLock { $0 = Int64(second) }
            progress.tick()
        }
        progress.finish()
        // Not "15 min" then "14 min" a second later (900 s left, then 899 s).
        #expect(
            written.withLock { $0 }.dropFirst() == [
                "1000: the code expires in 15 min (Ctrl-C to cancel)\n",
                "1060: the code expires in 14 min (Ctrl-C to cancel)\n",
                "1120: the code expires in 13 min (Ctrl-C to cancel)\n",
            ])
    }
}
