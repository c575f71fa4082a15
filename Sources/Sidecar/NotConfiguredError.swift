import JSONRPC

extension RPCError {
    /// -32002 for a method that needs configuration before any: the server's own sentence says
    /// what is missing and the three ways to give it, the file first as this process reads it
    /// (``UserPaths/defaultConfigFile(_:)``), so a shell pipe or an editor that only relays the
    /// message shows the fix. Made when refused, never on a served request's path.
    static var notConfigured: RPCError {
        var error = RPCError.serverNotInitialized
        error.message =
            "Server not initialized: no client id configured: write {\"clientId\": \"ID\"} to "
            + UserPaths.defaultConfigFileForMessages()
            + ", start with --client-id ID, or send initialize with {\"clientId\": \"ID\"} first"
        return error
    }
}
