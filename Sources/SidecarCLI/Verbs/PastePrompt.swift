import JSON
import JSONRPC

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The verbs' answer to the engine's `pasteSignIn` request (`login --paste`): the sign-in URL
/// and what to do on stderr, then one line read from standard input, the address the
/// browser ended on (or the code), answered as `{"redirectedTo": …}`. The engine checks it.
struct PastePrompt {
    /// The most bytes a pasted line may have.
    static let limit = 16_384

    /// Writes one whole line for the user (stderr).
    var say: (String) -> Void = { Console.write($0 + "\n", to: STDERR_FILENO) }
    /// Reads the pasted line (nil: input ended first).
    var readLine: () -> String? = { Self.line(from: STDIN_FILENO) }

    /// Handles `pasteSignIn`'s params.
    func handle(_ params: JSONValue?) -> Result<JSONValue, RPCError> {
        guard let url = params?["url"]?.stringValue else { return .failure(.invalidParams("missing 'url'", member: "url")) }
        for line in Self.instructions(url: url) { say(line) }
        guard let line = readLine() else {
            return .failure(RPCError(code: -32000, message: "standard input ended before an address was pasted", name: "noPastedAddress"))
        }
        return .success(["redirectedTo": .string(line)])
    }

    /// What to tell the user: the URL alone on its line (to copy), then what to paste back.
    static func instructions(url: String) -> [String] {
        [
            "auth-sidecar: to sign in, open this URL in a browser on any machine:",
            url,
            "auth-sidecar: after signing in, the browser ends on an address starting with http://localhost that does not load;",
            "auth-sidecar: paste that whole address here (or just its code) and press Enter:",
        ]
    }

    /// One line of `fd` without its line end (read a byte at a time: nothing after it is
    /// taken); nil at end of input before any byte, or a line longer than ``limit``.
    static func line(from fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count <= limit {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == 10 { break }
            bytes.append(byte)
        }
        guard bytes.count <= limit else { return nil }
        if bytes.last == 13 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
