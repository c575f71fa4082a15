import AuthCore
import AuthSeams
import JSON
import JSONRPC

/// Asks the JSON-RPC client for the paste-back sign-in's address: the server → client request
/// `pasteSignIn {"requestId", "url"}`, answered `{"redirectedTo": "<the address>"}` (as
/// `openUrl` is asked, whatever the session's `browser` mode: only the client can ask its user).
struct ClientPastePrompt: PasteBackPrompt {
    let context: RequestContext

    func redirectedAddress(signInURL url: String) async throws -> String {
        let answer: JSONValue
        do {
            answer = try await context.request("pasteSignIn", params: ["url": .string(url), "requestId": context.id.json])
        } catch let error as RPCError {
            if error.code == RPCError.methodNotFound("").code {
                throw AuthError(.browserUnavailable, "the client does not answer pasteSignIn, so it cannot take a pasted address")
            }
            throw AuthError(.userCanceled, "the client gave no pasted address: \(error.message)")
        }
        guard let address = answer["redirectedTo"]?.stringValue else {
            throw AuthError(.pastedAddressRefused, "the client's answer to pasteSignIn has no 'redirectedTo' string")
        }
        return address
    }
}
