import AuthSeams
import CCurl
import Synchronization
import Testing

@testable import HTTP

/// The HTTP(S)-only restriction: checked on this machine's libcurl, and against a scripted
/// `setopt` playing an older libcurl (before 7.85, which lacks `CURLOPT_PROTOCOLS_STR`).
@Suite struct ProtocolRestrictionTests {
    /// A scripted `setopt`: answers `answer(setting)`, recording every setting.
    final class ScriptedSetopt: Sendable {
        let answer: @Sendable (ProtocolRestriction.Setting) -> CURLcode
        private let recorded = Mutex<[ProtocolRestriction.Setting]>([])
        init(_ answer: @escaping @Sendable (ProtocolRestriction.Setting) -> CURLcode) { self.answer = answer }
        var settings: [ProtocolRestriction.Setting] { recorded.withLock { $0 } }

        func set(_ setting: ProtocolRestriction.Setting) -> CURLcode {
            recorded.withLock { $0.append(setting) }
            return answer(setting)
        }
    }

    static func isName(_ setting: ProtocolRestriction.Setting) -> Bool {
        if case .text = setting { return true }
        return false
    }

    @Test func thisLibcurlTakesTheProtocolNames() throws {
        let library = try CurlLibrary.shared()
        let handle = try #require(library.easyInit())
        defer { library.easyCleanup(handle) }
        #expect(try CurlOptions(library: library, handle: handle).restrictProtocols().get() == .names)
    }

    @Test func anOlderLibcurlGetsTheBitmasks() {
        for missing in [CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN] {
            let setopt = ScriptedSetopt { Self.isName($0) ? missing : CURLE_OK }
            #expect(ProtocolRestriction.apply(setopt.set) == .success(.bitmasks))
            #expect(setopt.settings == [ProtocolRestriction.nameSettings[0]] + ProtocolRestriction.bitmaskSettings)
        }
        // CURLOPT_PROTOCOLS (181) and CURLOPT_REDIR_PROTOCOLS (182), both HTTP | HTTPS.
        #expect(ProtocolRestriction.bitmaskSettings == [.number(CURLoption(rawValue: 181), 3), .number(CURLoption(rawValue: 182), 3)])
    }

    @Test func noRestrictionMeansNoRequest() {
        let setopt = ScriptedSetopt { _ in CURLE_UNKNOWN_OPTION }
        guard case .failure(.libraryUnavailable(let reason)) = ProtocolRestriction.apply(setopt.set) else {
            Issue.record("expected libraryUnavailable")
            return
        }
        #expect(reason.contains("cannot limit transfers to HTTP and HTTPS"))
        #expect(reason.contains("CURLOPT_PROTOCOLS_STR: curl error 48; CURLOPT_PROTOCOLS: curl error 48"))
    }

    @Test func anotherFailureOfTheNamesIsNotPapered() {
        let setopt = ScriptedSetopt { _ in CURLE_OUT_OF_MEMORY }
        guard case .failure(.libraryUnavailable) = ProtocolRestriction.apply(setopt.set) else {
            Issue.record("expected libraryUnavailable")
            return
        }
        #expect(setopt.settings == [ProtocolRestriction.nameSettings[0]])  // no fallback tried
    }

    /// The fallback is real: on this libcurl the bitmasks alone are accepted and refuse
    /// another protocol.
    @Test func theBitmasksAloneRefuseOtherProtocols() throws {
        let library = try CurlLibrary.shared()
        let handle = try #require(library.easyInit())
        defer { library.easyCleanup(handle) }
        for case .number(let option, let value) in ProtocolRestriction.bitmaskSettings {
            #expect(ccurl_setopt_long(library.setopt, handle, option, value) == CURLE_OK)
        }
        _ = ccurl_setopt_str(library.setopt, handle, CURLOPT_URL, "file:///etc/hostname")
        #expect(library.easyPerform(handle) == CURLE_UNSUPPORTED_PROTOCOL)
    }

    @Test func aTransferIsRefusedWhenNoRestrictionApplies() throws {
        // The transport's own path: a library whose setopt refuses everything sends nothing.
        let library = try CurlLibrary.shared()
        let refusing = CurlLibrary(
            easyInit: library.easyInit, easyCleanup: library.easyCleanup, easyPerform: library.easyPerform,
            easyStrerror: library.easyStrerror, slistAppend: library.slistAppend, slistFreeAll: library.slistFreeAll,
            setopt: unsafeBitCast(Self.refusingSetopt, to: UnsafeMutableRawPointer.self), getinfo: library.getinfo)
        let transfer = CurlTransfer(
            library: refusing, request: HTTPRequest(url: "http://127.0.0.1:9/"), caFile: nil, userAgent: "test")
        guard case .failure(.libraryUnavailable(let reason)) = transfer.perform() else {
            Issue.record("expected libraryUnavailable")
            return
        }
        #expect(reason.contains("no request is sent"))
    }

    /// A `curl_easy_setopt` that knows no option (the shim calls it through a variadic pointer).
    static let refusingSetopt: @convention(c) (UnsafeMutableRawPointer?, CURLoption, Int) -> CURLcode = { _, _, _ in
        CURLE_UNKNOWN_OPTION
    }
}

/// Which libcurl is opened.
@Suite struct CurlLibraryTests {
    @Test func theGnuTLSBuildIsTriedWhenLibcurl4IsMissing() async throws {
        let gnutls = "libcurl-gnutls.so.4"
        let candidates = CurlLibrary.candidates
        #expect(candidates.firstIndex(of: gnutls) == candidates.firstIndex(of: "libcurl.so.4").map { $0 + 1 })
        guard case .success = CurlLibrary.load(names: [gnutls]) else {
            // Only where that build is installed (Debian: libcurl3-gnutls).
            return
        }
        let library = try CurlLibrary.load(names: ["libcurl-missing.so.4", gnutls]).get()
        let mock = try MockIdentityPlatform()
        let transfer = CurlTransfer(
            library: library, request: HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration"),
            caFile: mock.caFile, userAgent: "test")
        let response = try transfer.perform().get()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("token_endpoint"))
    }

    @Test func noLibcurlIsAClearError() {
        guard case .failure(.libraryUnavailable(let reason)) = CurlLibrary.load(names: ["libcurl-missing.so.4", "libcurl-missing.so"]) else {
            Issue.record("expected libraryUnavailable")
            return
        }
        #expect(reason.contains("install libcurl4"))
        #expect(reason.contains("libcurl-missing.so.4") && reason.contains("libcurl-missing.so:"))
    }
}
