import Adapters
import Logging

/// The life the endpoint verbs (`azd-auth-server`, `managed-identity`) share: read the
/// settings, start the server over one engine connection, print the `export` lines, close
/// stdout (so `eval "$(auth-sidecar VERB &)"` returns), serve until SIGTERM/SIGINT.
enum LocalEndpointVerb {
    /// Runs the verb called `name`.
    /// - Parameters:
    ///   - settings: what the endpoint needs from the configuration in force.
    ///   - start: binds the endpoint (its `export` lines go to stdout).
    static func serve<Settings>(
        _ name: String, _ common: VerbOptions,
        settings: (VerbSession) throws(VerbFailure) -> Settings,
        start: (Settings, EnginePool, Logger) throws(AdapterError) -> LocalTokenServer
    ) throws {
        let slot = ServerSlot()
        TerminationSignals.onTerminate { slot.stop() }  // first: every thread started later blocks the signals
        try VerbSession.run(common) { session throws(VerbFailure) in
            let wanted = try settings(session)
            let engine = EnginePool(session)
            let server: LocalTokenServer
            do throws(AdapterError) {
                server = try start(wanted, engine, session.logger)
            } catch {
                throw VerbFailure(message: "\(name): \(error.description)")
            }
            session.print(server.exports)
            session.closeOutput()
            Console.say("\(name): serving \(server.endpoint) until SIGTERM or SIGINT")
            if !slot.install(server.stop) { server.stop() }
            server.run()
            engine.shutDown()
        }
    }
}
