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
}
