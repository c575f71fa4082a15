import JSON
import JSONRPC
import Testing

@testable import Sidecar

/// What an error relayed to a forwarded session keeps (issue 47, finding 3): the laptop's file
/// paths go, URLs, scopes and Graph paths stay.
@Suite struct ForwardDisclosureTests {
    static let standIn = ForwardDisclosure.pathStandIn

    @Test(arguments: [
        ("token cache unreadable (/home/alice/.cache/x.json): a directory", "token cache unreadable (\(standIn)): a directory"),
        ("cannot read /etc/auth/assertion.jwt: denied", "cannot read \(standIn): denied"),
        ("key file '~/.config/key' is open", "key file '\(standIn)' is open"),
        ("the file=/run/user/1000/a.sock.", "the file=\(standIn)."),
    ])
    func pathsGo(text: String, scrubbed: String) {
        #expect(ForwardDisclosure.withoutPaths(text) == scrubbed)
    }

    @Test(arguments: [
        "see https://login.microsoftonline.com/common/oauth2/v2.0/token for details",
        "scope 499b84ac-1321-427f-aa17-267ca6975798/.default is not in forwardScopes",
        "'path' must be a path under the Graph endpoint, starting with /",
        "Graph answered /users with 403",
        "a/b/c is relative",
    ])
    func otherTextStays(text: String) {
        #expect(ForwardDisclosure.withoutPaths(text) == text)
    }

    @Test func messageAndDataAreScrubbedButNotTheName() {
        let error = RPCError(
            code: -51005, message: "cannot open /home/a/c.json", name: "cacheUnavailable",
            data: ["layers": [["path": "/home/a/key", "reason": "missing"]]])
        let released = ForwardDisclosure.error(error)
        #expect(released.message == "cannot open \(Self.standIn)")
        #expect(released.data["layers"] == [["path": .string(Self.standIn), "reason": "missing"]])
        #expect(released.data["name"] == "cacheUnavailable" && released.code == -51005)
    }

    @Test func deviceInformationKeepsTheModeOnly() {
        let laptop: JSONValue = [
            "deviceMode": "private", "sharedDeviceModeSource": "default", "brokerAvailable": true, "brokerVersion": "2.0",
            "extraDeviceInformation": ["hostname": "laptop", "osRelease": "Debian", "browserCommand": "/usr/bin/firefox"],
        ]
        #expect(
            ForwardDisclosure.deviceInformation(laptop) == [
                "deviceMode": "private", "sharedDeviceModeSource": "default", "brokerAvailable": false,
                "extraDeviceInformation": ["forwarded": true],
            ])
    }
}
