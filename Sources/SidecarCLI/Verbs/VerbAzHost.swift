import AzEmulator
import JSON
import JSONRPC
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The az emulator's host (``AzHost``): each `az` command a verb's session (the agent's
/// engine, else one in this process, as every verb), and the verbs' rules.
struct VerbAzHost: AzHost {
    func open() throws(AzShim.Failure) -> any AzEngine {
        do { return VerbAzEngine(try VerbSession.open(VerbLaunchOptions())) } catch {
            throw AzShim.Failure(message: "auth-sidecar: \(error.message)")
        }
    }

    /// Whether the configuration (the default file, or `$AUTH_SIDECAR_CONFIG`) enables
    /// `azPassthrough`; an unreadable configuration does not.
    var passthroughEnabled: Bool {
        (try? ConfigurationSources.load(LaunchOptions()).overrides.azPassthrough) == true
    }
}

/// A verb's session as the az emulator's engine.
final class VerbAzEngine: AzEngine {
    let session: VerbSession

    init(_ session: VerbSession) { self.session = session }

    func configuration() throws(AzShim.Failure) -> JSONValue {
        do { return try session.configuration } catch { throw AzShim.Failure(message: "auth-sidecar: \(error.message)") }
    }

    var armEndpoint: String? { session.sources.overrides.armEndpoint }

    func outcome(_ method: String, _ params: JSONValue) throws(AzShim.Failure) -> Result<JSONValue, RPCError> {
        do { return try session.outcome(method, params) } catch { throw AzShim.Failure(message: "auth-sidecar: \(error.message)") }
    }

    func print(_ text: String) { session.print(text) }

    func close() { session.client.close() }

    func message(for error: RPCError) -> String { VerbFailure.from(error).message }

    func oneLine(_ text: String) -> String { VerbFailure.oneLine(text) }

    func authority(_ configured: String, tenant: String) -> String? { VerbRequests.authority(configured, tenant: tenant) }

    func tenantProblem(_ tenant: String, option: String) -> String? { VerbRequests.tenantProblem(tenant, option: option) }

    func username(_ account: JSONValue?) -> String { VerbOutput.username(account) }

    func replaceFile(_ path: String, with bytes: [UInt8], mode: mode_t) throws(AzShim.Failure) {
        do throws(VerbFailure) { try ProfileFileRewrite.replace(path, with: bytes, mode: mode) } catch {
            throw AzShim.Failure(message: "auth-sidecar: \(error.message)")
        }
    }
}
