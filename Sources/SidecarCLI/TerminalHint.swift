#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line on stderr when the stdio mode's input is a terminal: someone ran the binary by
/// hand and would otherwise see it wait silently. Piped input (every client) gets nothing.
enum TerminalHint {
    static let line = "auth-sidecar: reading JSON-RPC from stdin; see `auth-sidecar --help` or `man auth-sidecar`\n"

    /// Writes ``line`` to stderr when stdin is a terminal (one `isatty` call otherwise).
    static func showIfStdinIsATerminal() {
        guard isatty(STDIN_FILENO) == 1 else { return }
        _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
    }
}
