import Logging
import Loopback

/// The one local token endpoint type: a token protocol's handler on a ``LoopbackHTTPServer``
/// on 127.0.0.1, with the program-facing limits (32 connections, the oldest waiting one
/// evicted, 5 s from accept to the whole request) and the programs-only policy (Host
/// `127.0.0.1:PORT`/`localhost:PORT`, no request from a web page). It serves one of:
/// - ``Kind/managedIdentity(clientId:tokens:)``: the App Service managed-identity endpoint
///   (``ManagedIdentityProtocol``, api-versions 2019-08-01 and 2017-09-01), for any Azure SDK's
///   `ManagedIdentityCredential` (`auth-sidecar managed-identity`, `auth-sidecar exec`);
/// - ``Kind/azd(tokens:)``: azd's external-authentication endpoint (``AzdAuthProtocol``)
///   (`auth-sidecar azd-auth-server`).
///
/// Each start makes a new random secret; ``environment`` is what a client is given (the
/// `export` lines, or a child's environment). The token source is called on the connection's
/// own thread (never on the Swift concurrency pool), possibly from several connections at
/// once: it may block, and must be safe to call concurrently.
public final class LocalTokenServer: Sendable {
    /// The protocol served, with its token source.
    public enum Kind: Sendable {
        /// App Service managed identity: a token for a scope (the request's resource's
        /// `/.default`), or an error reply (e.g. sign-in needed); `clientId` goes in replies.
        /// `renewal` non-nil: a fresh token, not the cached one (the client named it revoked).
        case managedIdentity(clientId: String, tokens: @Sendable (_ scope: String, _ renewal: Renewal?) -> Result<Token, ReplyError>)
        /// azd's external authentication: the reply for a checked request.
        case azd(tokens: @Sendable (AzdAuthProtocol.TokenRequest) -> AzdAuthProtocol.Reply)
    }

    /// A managed-identity renewal (`token_sha256_to_refresh` named the token it would serve):
    /// the client's capabilities (`xms_cc`).
    public struct Renewal: Sendable, Equatable {
        public let capabilities: [String]
    }

    /// What a managed-identity token source answers with.
    public struct Token: Sendable, Equatable {
        public let token: String
        public let expiresOn: Int64
        public let tokenType: String

        public init(token: String, expiresOn: Int64, tokenType: String) {
            self.token = token
            self.expiresOn = expiresOn
            self.tokenType = tokenType
        }
    }

    private let server: LoopbackHTTPServer
    /// The secret a client sends (`X-IDENTITY-HEADER` or `secret`, or azd's bearer key).
    public let secret: String
    private let isManagedIdentity: Bool

    /// Binds 127.0.0.1:`port` (0: any free port) for `kind`, with a new secret (or `secret`).
    public init(
        _ kind: Kind, port requested: UInt16 = 0, secret: String? = nil, limits: ServerLimits = LoopbackHTTPServer.defaultLimits,
        logger: Logger
    ) throws(AdapterError) {
        let handler: any LoopbackHTTPHandler
        switch kind {
        case .managedIdentity(let clientId, let tokens):
            self.secret = secret ?? ManagedIdentityProtocol.newSecret()
            handler = ManagedIdentityHandler(secret: self.secret, clientId: clientId, tokens: tokens, logger: logger)
            isManagedIdentity = true
        case .azd(let tokens):
            self.secret = secret ?? AzdAuthProtocol.newKey()
            handler = AzdAuthHandler(key: self.secret, tokens: tokens, logger: logger)
            isManagedIdentity = false
        }
        do {
            server = try LoopbackHTTPServer(port: requested, policy: .programsOnly, limits: limits, handler: handler, logger: logger)
        } catch {
            throw AdapterError(error.description)
        }
    }

    /// The port bound on 127.0.0.1.
    public var port: UInt16 { server.port }

    /// The URL clients are given: `IDENTITY_ENDPOINT` (`…/msi/token`), or `AZD_AUTH_ENDPOINT`
    /// (azd appends `/token?api-version=...`).
    public var endpoint: String { "http://127.0.0.1:\(port)" + (isManagedIdentity ? ManagedIdentityProtocol.path : "") }

    /// The variables a client is given, in order: `IDENTITY_ENDPOINT` and `IDENTITY_HEADER`,
    /// or `AZD_AUTH_ENDPOINT` and `AZD_AUTH_KEY`.
    public var environment: [(name: String, value: String)] {
        isManagedIdentity
            ? [("IDENTITY_ENDPOINT", endpoint), ("IDENTITY_HEADER", secret)] : [("AZD_AUTH_ENDPOINT", endpoint), ("AZD_AUTH_KEY", secret)]
    }

    /// For the managed-identity endpoint, what older SDKs read instead (the 2017-09-01
    /// protocol): `MSI_ENDPOINT` and `MSI_SECRET`, the same endpoint and secret, as App Service
    /// sets them; nothing for azd's.
    public var legacyEnvironment: [(name: String, value: String)] {
        isManagedIdentity ? [("MSI_ENDPOINT", endpoint), ("MSI_SECRET", secret)] : []
    }

    /// ``environment`` as `export NAME=VALUE` lines (no newline after the last).
    public var exports: String { environment.map { "export \($0.name)=\($0.value)" }.joined(separator: "\n") }

    /// Connections open now.
    public var connectionCount: Int { server.connectionCount }

    /// Serves until ``stop()``.
    public func run() { server.run() }

    /// Asks ``run()`` to return (from any thread).
    public func stop() { server.stop() }
}
