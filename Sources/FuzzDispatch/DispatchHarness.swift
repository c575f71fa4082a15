import JSON
import JSONRPC
import Logging
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one input through the real server: framing, JSON parsing, classification, the
/// sidecar's method table and handlers (with ``OfflineDependencies``), and the output writer.
///
/// The input is the whole of stdin for a fresh server; it is read from an unlinked temporary
/// file (a pipe would need a writer thread for inputs over its capacity), and the
/// replies go to `output`. A run ends at end of input once every request has been answered,
/// so an input that makes the server hang makes the run hang (libFuzzer's `-timeout` reports it).
final class DispatchHarness {
    private let input: Int32
    private let output: Int32
    private let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// Opens the temporary file for inputs; replies go to `output` (`nil`: `/dev/null`).
    /// `nil` if a file cannot be opened.
    init?(output replies: Int32? = nil) {
        var template = Array("/tmp/fuzz-dispatch-XXXXXX".utf8CString)
        input = template.withUnsafeMutableBufferPointer { buffer in
            guard let path = buffer.baseAddress else { return -1 }
            let fd = mkstemp(path)
            if fd >= 0 { unlink(path) }
            return fd
        }
        output = replies ?? open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard input >= 0, output >= 0 else { return nil }
    }

    /// Serves `bytes` as a whole input stream; returns the server's exit status.
    @discardableResult
    func run(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard load(bytes) else { fatalError("fuzz: cannot write the input to the temporary file") }
        let options = SidecarService.Options(
            policy: OpenSessionPolicy(), dependencies: { _, logger in EngineDependencies(OfflineDependencies.make(logger: logger)) })
        guard let service = try? SidecarService(options: options, logger: logger) else {
            fatalError("fuzz: the sidecar service did not start")
        }
        // Shape limits small enough for inputs of libFuzzer's -max_len (8 KiB) to pass them.
        let limits = JSONShapeLimits(maxObjectMembers: 16, maxRootArrayElements: 16, maxItems: 256)
        let server = JSONRPCServer(service: service, options: .init(shapeLimits: limits), logger: logger)
        return server.run(input: input, output: output)
    }

    /// Replaces the temporary file's content with `bytes` and rewinds it.
    private func load(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard ftruncate(input, 0) == 0 else { return false }
        var offset = 0
        while offset < bytes.count {
            let written = pwrite(input, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, off_t(offset))
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return lseek(input, 0, SEEK_SET) == 0
    }
}
