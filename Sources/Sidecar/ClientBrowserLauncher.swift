import AuthSeams
import JSON
import JSONRPC

/// Opens URLs by asking the JSON-RPC client (`openUrl`), for `browser: "client"`.
struct ClientBrowserLauncher: BrowserLauncher {
    let context: RequestContext

    func open(_ url: String) async throws {
        do {
            _ = try await context.request("openUrl", params: ["url": .string(url), "requestId": context.id.json])
        } catch let error as RPCError {
            throw BrowserError.unavailable("the client could not open the URL: \(error.message)")
        }
    }
}
