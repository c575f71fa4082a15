import JSON
import Logging
import POSIXSupport
import Synchronization
import Testing

@testable import JSONRPC

#if canImport(Glibc)
    import Glibc
#endif

/// `run(input:output:beforeFirstWait:)` over real pipes: the action (the termination-signal
/// thread, in the product) runs exactly once, before the reader first blocks, and otherwise
/// only after the first chunk of input has been answered.
@Suite struct ServerFirstWaitTests {
    private struct PongService: RPCService {
        func route(forRequest method: String) -> RPCRoute { .immediate { _ in .string("pong") } }
        func receiveNotification(_ method: String, params: JSONValue?) {}
        func serverWillStop() {}
    }

    /// What the action saw, written from the reader thread and read after `run` returned.
    private final class Record: @unchecked Sendable {
        var calls = 0
        var unreadReplyBytes: Int32 = -1
    }

    private static let ping = Array(#"{"jsonrpc":"2.0","method":"ping","id":1}"#.utf8) + [10]

    private func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // kept from children other tests spawn
        return (ends[0], ends[1])
    }

    private func server() -> JSONRPCServer {
        JSONRPCServer(service: PongService(), logger: Logger(label: "test"))
    }

    /// Everything `fd` holds until its writers are gone.
    private func drain(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got <= 0 { break }
            bytes += chunk[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aRequestAlreadyWaitingIsAnsweredBeforeTheAction() throws {
        let input = try makePipe()
        let output = try makePipe()
        #expect(POSIX.writeAll(input.write, Self.ping))
        close(input.write)  // the request, then end of input
        let record = Record()
        let status = server().run(input: input.read, output: output.write) {
            record.calls += 1
            _ = ioctl(output.read, UInt(FIONREAD), &record.unreadReplyBytes)
        }
        close(input.read)
        close(output.write)
        #expect(status == 0)
        #expect(record.calls == 1)
        #expect(record.unreadReplyBytes > 0, "the action ran before the reply was written")
        #expect(drain(output.read).contains(#""result":"pong""#))
        close(output.read)
    }

    /// Who ends the input of ``anEmptyInputRunsTheActionBeforeTheReaderBlocks()``: the action
    /// (1) or the watchdog (2), whichever comes first; the other leaves the descriptor alone.
    private final class InputEnder: Sendable {
        let owner = Atomic<Int>(0)
        func claim(_ who: Int) -> Bool { owner.compareExchange(expected: 0, desired: who, ordering: .sequentiallyConsistent).exchanged }
    }

    @Test func anEmptyInputRunsTheActionBeforeTheReaderBlocks() throws {
        let input = try makePipe()
        let output = try makePipe()
        // The action writes the request and ends the input: the server answers it only if the
        // action ran before the reader's first blocking read. A watchdog ends the input after
        // 10 s instead, so a wrong order fails the test rather than hanging it.
        let writer = input.write
        let ender = InputEnder()
        try POSIX.startThread {
            for _ in 0..<1000 where ender.owner.load(ordering: .sequentiallyConsistent) == 0 { usleep(10_000) }
            if ender.claim(2) { close(writer) }
        }
        let record = Record()
        let status = server().run(input: input.read, output: output.write) {
            record.calls += 1
            if ender.claim(1) {
                _ = POSIX.writeAll(writer, Self.ping)
                close(writer)
            }
        }
        close(input.read)
        close(output.write)
        #expect(status == 0)
        #expect(record.calls == 1)
        #expect(ender.owner.load(ordering: .sequentiallyConsistent) == 1, "the reader blocked before the action ran")
        #expect(drain(output.read).contains(#""result":"pong""#))
        close(output.read)
    }

    @Test func inputThatEndsAtOnceStillRunsTheActionOnce() throws {
        let input = try makePipe()
        let output = try makePipe()
        close(input.write)
        let record = Record()
        let status = server().run(input: input.read, output: output.write) { record.calls += 1 }
        close(input.read)
        close(output.write)
        close(output.read)
        #expect(status == 0)
        #expect(record.calls == 1)
    }
}
