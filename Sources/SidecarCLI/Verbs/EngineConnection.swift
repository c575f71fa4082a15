import Agent
import Composition
import JSONRPC
import Logging
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The descriptor a verb speaks JSON-RPC (NDJSON) on, and what is at its other end.
///
/// The verbs are clients of the same engine the stdio mode serves: (a) a running agent on
/// `UserPaths.agentSocket()`, whatever serves the stdio protocol there (JSON-RPC on the socket),
/// else (b) an engine in this process, the real `SidecarService` called directly
/// (``LocalEngineClient``: no socket pair, no server thread). The verb's code is the same either
/// way (``EngineClient``).
struct EngineConnection {
    /// Where the requests go.
    enum Engine: Equatable {
        case agent
        case inProcess
    }

    /// What the agent socket held, for `status`.
    enum AgentState: Equatable {
        case running
        case notRunning
        case refused(String)
        case notTried
    }

    /// The agent's socket; -1 for an engine in this process.
    let fd: Int32
    let engine: Engine
    let agentState: AgentState

    /// The agent when one of this user's accepts at `socketPath` (and `useAgent`), else a new
    /// in-process engine. A refused socket is reported on stderr once and not used.
    static func open(socketPath: String, useAgent: Bool, logger: Logger) throws(VerbFailure) -> EngineConnection {
        let probe: AgentConnection.Probe? = useAgent ? AgentConnection.probe(socketPath) : nil
        switch probe {
        case .connected(let fd)?:
            return EngineConnection(fd: fd, engine: .agent, agentState: .running)
        case .refused(let reason)?:
            Console.say(AgentConnection.ignoredSocketLine(socketPath, reason))
            return EngineConnection(fd: -1, engine: .inProcess, agentState: .refused(reason))
        case .absent?:
            return EngineConnection(fd: -1, engine: .inProcess, agentState: .notRunning)
        case nil:
            return EngineConnection(fd: -1, engine: .inProcess, agentState: .notTried)
        }
    }

    /// The engines of this process's in-process connections: connections configured alike (an
    /// ``EnginePool``'s sessions) share one engine, as an agent's do.
    static let inProcessApplications = ApplicationRegistry()

    /// The client the verb speaks through: JSON-RPC on the agent's socket, or this process's
    /// engine called directly.
    /// - Parameter cacheProtection: an in-process engine's `initialize` reports `cacheProtection`.
    func client(logger: Logger, cacheProtection: Bool = false) throws(VerbFailure) -> any EngineClient {
        switch engine {
        case .agent: return JSONRPCClient(fd: fd)
        case .inProcess:
            // The verb's own engine, in this process: the user's own request.
            var options = SidecarService.Options(policy: OpenSessionPolicy(), dependencies: ApplicationFactory.live)
            options.applications = Self.inProcessApplications
            options.reportsCacheProtection = cacheProtection
            do {
                return LocalEngineClient(service: try SidecarService(options: options, logger: logger))
            } catch {
                throw VerbFailure(message: error.message)
            }
        }
    }
}
