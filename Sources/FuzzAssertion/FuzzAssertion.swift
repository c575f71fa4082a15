import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif
#if FUZZING
    import CFuzzer
#endif

/// The fuzz target over the client assertion sources (see `scripts/fuzz.sh --target
/// assertion`): each input is what one source gives (``AssertionHarness``), read the way the
/// engine reads it, then every time the engine and `status` compute from its `exp`.
///
/// Built with `-sanitize=fuzzer,address -DFUZZING`, `main` hands control to libFuzzer;
/// built normally, it replays the files named on the command line (one input each), printing
/// what each gave: the way to reproduce a crash file without the sanitizers.
@main
enum FuzzAssertion {
    nonisolated(unsafe) static var harness: AssertionHarness?

    static func main() {
        guard let made = AssertionHarness() else { fatalError("fuzz: cannot make the input file") }
        harness = made
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
            for path in CommandLine.arguments.dropFirst() {
                guard let bytes = POSIX.readFile(path) else {
                    logLine("fuzz: cannot read \(path)")
                    exit(2)
                }
                logLine("\(path): " + (bytes.withUnsafeBytes { made.run($0) }))
            }
            logLine("fuzz: replayed \(CommandLine.arguments.count - 1) inputs")
        #endif
    }

    static func logLine(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

/// libFuzzer's per-input entry point.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = FuzzAssertion.harness?.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
