import POSIXSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The one rule for a file read from a path (`POSIX.openOwnFile`), with real files: a FIFO is
/// refused at once (never waited on), a link is not followed unless asked, a file or a
/// directory others can write is refused with the fix, an absent file is `nil`.
@Suite struct OwnFileTests {
    private func write(_ path: String, _ text: String, mode: mode_t = 0o600) {
        writeBytes(path, Array(text.utf8))
        chmod(path, mode)
    }

    @Test func aFIFOIsRefusedAtOnceNamingIt() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let clock = ContinuousClock()
        let started = clock.now
        for checkingDirectory in [false, true] {
            let refusal = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(path, checkingDirectory: checkingDirectory) }
            #expect(refusal?.path == path && refusal?.reason.contains("not a regular file (a FIFO)") == true, "\(String(describing: refusal))")
        }
        #expect(clock.now - started < .seconds(1))
    }

    @Test func aLinkIsFollowedOnlyWhenAskedAndItsTargetStillChecked() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let target = temp.path + "/target.json"
        write(target, "{}")
        let link = temp.path + "/link.json"
        #expect(symlink(target, link) == 0)
        let refusal = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(link) }
        #expect(refusal?.reason.contains("symbolic link") == true)
        #expect(try POSIX.readOwnFile(link, followingLink: true) == Array("{}".utf8))
        chmod(target, 0o666)
        #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(link, followingLink: true) }
    }

    @Test func aFileOrDirectoryOthersCanWriteIsRefusedWithTheFix() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let directory = temp.path + "/shared"
        #expect(mkdir(directory, 0o700) == 0)
        let path = directory + "/file.json"
        write(path, "{}", mode: 0o620)
        let file = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(path) }
        #expect(file?.path == path && file?.reason.contains("chmod 600 \(path)") == true)
        chmod(path, 0o644)  // others may read it: not this rule's business
        #expect(try POSIX.readOwnFile(path, checkingDirectory: true) == Array("{}".utf8))
        chmod(directory, 0o777)
        #expect(try POSIX.readOwnFile(path) == Array("{}".utf8), "the directory only when asked")
        let loose = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(path, checkingDirectory: true) }
        #expect(loose?.path == directory && loose?.reason.contains("chmod 700 \(directory)") == true, "\(String(describing: loose))")
        let linked = temp.path + "/linked"
        #expect(symlink(directory, linked) == 0)
        chmod(directory, 0o700)
        let link = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(linked + "/file.json", checkingDirectory: true) }
        #expect(link?.path == linked && link?.reason.contains("symbolic link") == true, "\(String(describing: link))")
    }

    @Test func anAbsentFileOrDirectoryIsNilAndALargeFileRefused() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        #expect(try POSIX.readOwnFile(temp.path + "/none") == nil)
        #expect(try POSIX.readOwnFile(temp.path + "/no-dir/none", checkingDirectory: true) == nil)
        write(temp.path + "/big", String(repeating: "x", count: 100))
        #expect(try POSIX.readOwnFile(temp.path + "/big", limit: 100)?.count == 100)
        let big = #expect(throws: FileRefusal.self) { try POSIX.readOwnFile(temp.path + "/big", limit: 99) }
        #expect(big?.reason.contains("larger than 99 bytes") == true)
    }
}
