import AuthSeams
import Dispatch
import JSON
import JSONRPC
import Loopback
import Sidecar
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The verbs' answer to the engine's `openUrl` request (they initialize with
/// `browser: "client"`): open the browser the sign-in way names (the system browser, or WSL's
/// Windows browser), else print the URL on stderr (with the `ssh -L` line that forwards the
/// loopback redirect) and let the sign-in keep waiting for it. Either way the request
/// succeeds, so the engine waits for the redirect.
struct URLOpener {
    /// `.systemBrowser`, `.windowsBrowser`, or anything else: print the URL.
    var method: SignInWay.Method
    /// The host `ssh -L` is run against (`user@address` over SSH).
    var sshHost = "THIS-HOST"
    /// Opens the URL the way `method` names; false when no command could be started.
    var launch: (SignInWay.Method, String) -> Bool
    /// Writes one whole line for the user (stderr).
    var say: (String) -> Void

    /// The opener for `way` (the default: the browser a forced `--browser` would use).
    static func system(_ way: SignInWay? = nil, environment: SignInEnvironment = .current()) -> URLOpener {
        let method = (way ?? SignInWay.choose(environment, forced: .browser)).method
        return URLOpener(method: method, sshHost: environment.sshHost, launch: launchBrowser) {
            Console.write($0 + "\n", to: STDERR_FILENO)
        }
    }

    /// Handles `openUrl`'s params.
    func handle(_ params: JSONValue?) -> Result<JSONValue, RPCError> {
        guard let url = params?["url"]?.stringValue else { return .failure(.invalidParams("missing 'url'", member: "url")) }
        switch method {
        case .systemBrowser, .windowsBrowser:
            if launch(method, url) {
                if Self.redirectPort(in: url) != nil { say("auth-sidecar: waiting for the browser (Ctrl-C to cancel)") }
                return .success([:])
            }
        case .printedURL, .deviceCode, .paste: break
        }
        for line in Self.instructions(url: url, host: sshHost) { say(line) }
        return .success([:])
    }

    /// What to tell a user who must open `url` by hand (the URL alone on its line, to copy).
    static func instructions(url: String, host: String = "THIS-HOST") -> [String] {
        guard let port = redirectPort(in: url) else { return ["auth-sidecar: no browser could be opened; open this URL:", url] }
        return [
            "auth-sidecar: to sign in, open this URL in a browser:",
            url,
            "auth-sidecar: from another machine, first forward the sign-in redirect: ssh -L \(port):127.0.0.1:\(port) \(host)",
            "auth-sidecar: waiting for the sign-in (Ctrl-C to cancel)...",
        ]
    }

    /// The port of a loopback `redirect_uri` in an authorize URL's query, if any.
    static func redirectPort(in url: String) -> Int? {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("redirect_uri=") {
            let value = percentDecoded(pair.dropFirst("redirect_uri=".count))
            for prefix in ["http://localhost:", "http://127.0.0.1:", "http://[::1]:"] where value.hasPrefix(prefix) {
                return Int(value.dropFirst(prefix.count).prefix { $0.isNumber })
            }
        }
        return nil
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `$BROWSER`/xdg-open (or WSL's Windows launcher) through the engine's launchers, waited for here.
    private static func launchBrowser(_ method: SignInWay.Method, _ url: String) -> Bool {
        let launcher: any BrowserLauncher =
            switch method {
            case .windowsBrowser(let program): WindowsBrowserLauncher(launcher: program)
            default: SystemBrowserLauncher()
            }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await launcher.open(url)
                outcome.opened.withLock { $0 = true }
            } catch BrowserError.unavailable(let reason) {
                Console.say("the browser could not be opened: \(reason)")
            } catch {
                Console.say("the browser could not be opened")
            }
            done.signal()
        }
        done.wait()
        return outcome.opened.withLock { $0 }
    }

    private final class Outcome: Sendable {
        let opened = Mutex(false)
    }
}
