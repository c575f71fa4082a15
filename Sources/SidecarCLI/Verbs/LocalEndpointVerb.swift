import Adapters
import Logging

/// A token endpoint a verb serves on 127.0.0.1 until it is stopped.
protocol LocalTokenEndpoint: Sendable {
    /// What the endpoint's clients are given (the `export` lines name it).
    var endpoint: String { get }
    /// Serves until ``stop()``.
    func run()
    /// Asks ``run()`` to return (from any thread).
    func stop()
}

extension AzdAuthServer: LocalTokenEndpoint {}
extension ManagedIdentityServer: LocalTokenEndpoint {}

/// The life the endpoint verbs (`azd-auth-server`, `managed-identity`) share: read the
/// settings, start the server over one engine connection, print the `export` lines, close
/// stdout (so `eval "$(auth-sidecar VERB &)"` returns), serve until SIGTERM/SIGINT.
enum LocalEndpointVerb {
    /// Runs the verb called `name`.
    /// - Parameters:
    ///   - settings: what the endpoint needs from the configuration in force.
    ///   - start: binds the endpoint; returns it with the `export` lines for stdout.
    static func serve<Settings, Server: LocalTokenEndpoint>(
        _ name: String, _ common: VerbOptions,
        settings: (VerbSession) throws(VerbFailure) -> Settings,
        start: (Settings, EnginePool, Logger) throws(AdapterError) -> (server: Server, exports: String)
    ) throws {
        let slot = ServerSlot()
        TerminationSignals.onTerminate { slot.stop() }  // first: every thread started later blocks the signals
        try VerbSession.run(common) { session throws(VerbFailure) in
            let wanted = try settings(session)
            let engine = EnginePool(session)
            let started: (server: Server, exports: String)
            do throws(AdapterError) {
                started = try start(wanted, engine, session.logger)
            } catch {
                throw VerbFailure(message: "\(name): \(error.description)")
            }
            session.print(started.exports)
            session.closeOutput()
            Console.say("\(name): serving \(started.server.endpoint) until SIGTERM or SIGINT")
            if !slot.install(started.server.stop) { started.server.stop() }
            started.server.run()
            engine.shutDown()
        }
    }
}
