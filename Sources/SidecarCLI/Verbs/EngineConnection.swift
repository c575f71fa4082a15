import Agent
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
/// The verbs are JSON-RPC clients of the same engine the stdio mode serves: (a) a running
/// agent on `UserPaths.agentSocket()`, whatever serves the stdio protocol there, else (b) an
/// engine in this process, the real `JSONRPCServer` + `SidecarService` on a thread at the
/// other end of a `socketpair`. The verb's code is the same either way.
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
            return EngineConnection(fd: try startInProcess(logger: logger), engine: .inProcess, agentState: .refused(reason))
        case .absent?:
            return EngineConnection(fd: try startInProcess(logger: logger), engine: .inProcess, agentState: .notRunning)
        case nil:
            return EngineConnection(fd: try startInProcess(logger: logger), engine: .inProcess, agentState: .notTried)
        }
    }

    /// The engines of this process's in-process connections: connections configured alike (an
    /// ``EnginePool``'s sessions) share one engine, as an agent's do.
    static let inProcessApplications = ApplicationRegistry()

    /// Starts the engine on a thread at one end of a socket pair; returns the other end.
    static func startInProcess(logger: Logger) throws(VerbFailure) -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw VerbFailure(message: "cannot create a socket pair (errno \(errno))")
        }
        let service: SidecarService
        var options = SidecarService.Options()
        options.applications = inProcessApplications
        do {
            service = try SidecarService(options: options, logger: logger)
        } catch {
            throw VerbFailure(message: error.message)
        }
        let server = JSONRPCServer(service: service, logger: logger)
        let serverFD = fds[1]
        do {
            try POSIX.startThread { _ = server.run(input: serverFD, output: serverFD) }
        } catch {
            throw VerbFailure(message: "cannot start a thread for the engine: \(error)")
        }
        return fds[0]
    }
}
