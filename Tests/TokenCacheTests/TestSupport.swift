import JSON
import POSIXSupport

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// Shared fixtures and helpers for the TokenCache tests.
enum Fixture {
    static let env = "login.microsoftonline.com"
    static let aliases = ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com"]
    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    static let client = "11111111-1111-1111-1111-111111111111"
    static let now: Int64 = 1_700_000_000

    /// The directory of this file's fixtures.
    static var directory: String {
        let file = #filePath
        return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures"
    }

    static func home(_ uid: String) -> String { "\(uid).\(tenant)" }

    static func record(
        uid: String = "aaaaaaaa-0000-0000-0000-000000000001", username: String = "alice@contoso.com",
        client: String = client, scopes: [String] = ["User.Read", "Mail.Read"], secret: String = "alice",
        realm: String = tenant, familyId: String? = nil, now: Int64 = now
    ) -> TokenResponseRecord {
        TokenResponseRecord(
            clientId: client, environment: env, realm: realm, homeAccountId: home(uid),
            localAccountId: uid, username: username, accountSource: "authorization_code",
            scopes: scopes, accessToken: "at-\(secret)", cachedAt: now, expiresOn: now + 3600,
            extendedExpiresOn: now + 7200, refreshOn: now + 1800, refreshToken: "rt-\(secret)",
            idToken: "idt-\(secret)", familyId: familyId)
    }
}

/// A fresh directory under /tmp, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/tokencache-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }
        }
        path = made.map { String(cString: $0) } ?? "/tmp/tokencache-test-fallback-\(getpid())"
    }

    func remove() { _ = runShell("rm -rf '\(path)'") }

    func entries(of directory: String? = nil) -> [String] {
        guard let dir = opendir(directory ?? path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// The permission bits of `path`, or nil.
func mode(of path: String) -> mode_t? {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
}

func readBytes(_ path: String) -> [UInt8]? {
    (try? POSIXFile.readFile(path))??.bytes
}

func writeBytes(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { return }
    _ = POSIX.writeAll(fd, bytes)
    close(fd)
}

/// Runs `command` with /bin/sh; returns the exit status and the combined output.
@discardableResult
func runShell(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen("\(command) 2>&1", "r") else { return (-1, "") }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, pipe) }
        if count == 0 { break }
        output.append(contentsOf: buffer[0..<count])
    }
    let status = pclose(pipe)
    return ((status >> 8) & 0xff, String(decoding: output, as: UTF8.self))
}

/// Whether `python3` with `msal` is available.
func pythonHasMSAL() -> Bool {
    runShell("python3 -c 'import msal'").status == 0
}

var isCI: Bool { getenv("CI").map { String(cString: $0) }.map { !$0.isEmpty && $0 != "0" } ?? false }
