import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif
#if FUZZING
    import CFuzzer
#endif

/// The fuzz target over framing, JSON parsing and JSON-RPC dispatch (see `scripts/fuzz.sh`).
///
/// Built with `-sanitize=fuzzer,address -DFUZZING`, `main` hands control to libFuzzer
/// (`LLVMFuzzerRunDriver`), which calls ``fuzzOneInput(_:_:)`` for every input. Built
/// normally (as `swift build` does), it replays the files named on the command line, one
/// input each, writing the replies to stdout: the way to reproduce a crash file without the
/// sanitizers, or to see what an input does.
@main
enum FuzzDispatch {
    nonisolated(unsafe) static var harness: DispatchHarness?

    static func main() {
        #if FUZZING
            let replies: Int32? = nil
        #else
            let replies: Int32? = STDOUT_FILENO
        #endif
        guard let made = DispatchHarness(output: replies) else { fatalError("fuzz: cannot open the input file or /dev/null") }
        harness = made
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
            replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    /// Runs each file as one input; exits 2 if a file cannot be read.
    static func replay(_ paths: [String]) {
        for path in paths {
            guard let bytes = POSIX.readFile(path) else {
                logLine("fuzz: cannot read \(path)")
                exit(2)
            }
            bytes.withUnsafeBytes { _ = harness?.run($0) }
        }
        logLine("fuzz: replayed \(paths.count) inputs")
    }

    private static func logLine(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

/// libFuzzer's per-input entry point.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDispatch.harness?.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
