import Foundation

/// The project's mock identity platform (mock), started as a real process on
/// loopback for the duration of a test.
final class MockIdentityPlatform: @unchecked Sendable {
    let url: String
    let caFile: String
    private let process: Process
    private let stdin: Pipe

    init() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("mock-idp-\(UUID().uuidString)")
        process = Process()
        process.executableURL = root.appendingPathComponent("mock/run-mock-idp")
        process.arguments = ["--port", "0", "--state-dir", stateDir.path, "--exit-on-stdin-eof"]
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw MockError.noReadyLine }
            line.append(chunk)
        }
        guard let ready = try JSONSerialization.jsonObject(with: line) as? [String: Any],
            let url = ready["url"] as? String, let caFile = ready["caFile"] as? String
        else { throw MockError.noReadyLine }
        self.url = url
        self.caFile = caFile
    }

    /// POSTs a control to `/_admin/<name>` (with curl's command-line tool kept out: plain Foundation).
    func admin(_ name: String, _ body: [String: Any] = [:]) throws {
        let task = Process()
        task.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        task.arguments = [
            "python3", "-c",
            """
            import ssl,sys,urllib.request
            ctx=ssl.create_default_context(cafile=sys.argv[1])
            r=urllib.request.Request(sys.argv[2],data=sys.argv[3].encode(),headers={"Content-Type":"application/json"})
            urllib.request.urlopen(r,context=ctx).read()
            """, caFile, "\(url)/_admin/\(name)", json,
        ]
        try task.run()
        task.waitUntilExit()
        guard task.terminationStatus == 0 else { throw MockError.adminFailed(name) }
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    enum MockError: Error {
        case noReadyLine
        case adminFailed(String)
    }
}
