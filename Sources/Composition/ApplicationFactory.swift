import AuthCore
import AuthSeams
import DBusBroker
import HTTP
import JSONRPC
import Logging
import Loopback
import Sidecar
import TokenCache

/// The composition root: picks and builds the concrete implementations behind the engine's
/// seams from the configuration (the file cache and its key store, libcurl, the system
/// browser, the loopback listener, the broker on the session bus). `Sidecar` builds engines
/// over the seams alone; each door's host gives it ``live``.
public enum ApplicationFactory {
    /// The engine's HTTP client: libcurl (TLS verified, the CA file of `SSL_CERT_FILE` or
    /// `CURL_CA_BUNDLE`), each request limited to `httpTimeoutSeconds` unless it says otherwise.
    /// The az emulator's Resource Manager calls go through one made here too.
    public static func httpTransport(timeoutSeconds: Int, logger: Logger) -> any HTTPTransport {
        let caFile = ProcessEnvironment.value("SSL_CERT_FILE") ?? ProcessEnvironment.value("CURL_CA_BUNDLE")
        return CurlTransport(
            caFile: caFile, userAgent: "\(ServerInfo.name)/\(ServerInfo.version)", defaultTimeout: .seconds(timeoutSeconds),
            logger: logger)
    }

    /// The product's wiring, what every door of the product gives `SidecarService`: the live
    /// dependencies of ``dependencies(_:logger:)``.
    public static var live: SidecarService.DependencyFactory {
        { configuration, logger throws(RPCError) in try dependencies(configuration, logger: logger) }
    }

    /// The live dependencies: the configured cache, libcurl, the system browser, the loopback
    /// listener, the broker on the session bus.
    static func dependencies(_ configuration: Configuration, logger: Logger) throws(RPCError) -> EngineDependencies {
        var report: CacheProtectionReport?
        let store: any TokenCacheStore
        var refreshLock: any RefreshLock = NoRefreshLock()
        var refreshErrors: any RefreshErrorLog = MemoryRefreshErrorLog()
        var popKeyFile: PopKeyFile?
        switch configuration.cache {
        case .memory:
            store = MemoryTokenCacheStore()
        case .file(let path, let keyFile, let keyCommand):
            let protection = configuration.cacheProtection
            let resolution: CacheKeyResolution
            do throws(CacheProtectionError) {
                let sources = CacheKeyStore.sources(
                    for: protection, cachePath: path, keyFile: keyFile, keyCommand: keyCommand,
                    secretServiceKeyCopySeconds: configuration.secretServiceKeyCacheSeconds)
                resolution = try CacheKeyStore.resolve(protection, sources: sources, cachePath: path)
            } catch {
                // A configured key file that cannot be used is a configuration error, as it always was.
                if error.skipped.first?.layer == .keyFile, keyFile != nil, let reason = error.skipped.first?.reason {
                    throw .invalidParams("cache.encryption.keyFile: \(reason)", member: "cache.encryption.keyFile")
                }
                throw RPCError(
                    code: AuthErrorMapping.code(for: .cacheUnavailable), message: error.message, name: "cacheUnavailable",
                    data: [
                        "layers": .array(
                            error.skipped.map {
                                ["layer": .string($0.layer.rawValue), "reason": .string($0.reason), "enable": .string($0.enable)]
                            })
                    ])
            }
            // A key a layer just made cannot open a cache sealed before by a layer that provably
            // lost its key (a reboot, an expiry): set aside. Any other such file is left alone.
            let file = FileTokenCacheStore(
                path: path, encryption: resolution.encryption,
                setAsideUnopenable: resolution.created, keylessLayers: resolution.keyless, logger: logger)
            // Start-up reads the cache once: a plaintext file is migrated now, a sealed one
            // whose key is gone is set aside now (errors are reported by the first request).
            if resolution.encryption != nil { _ = try? file.changeToken() }
            report = CacheProtectionReport(setting: protection, resolution: resolution, store: file)
            store = file
            refreshLock = FileRefreshLock(path: file.layout.refreshLock)
            refreshErrors = FileRefreshErrorLog(path: file.layout.lastRefreshError)
            // The PoP key beside the cache, sealed under its key; a plaintext cache keeps none.
            popKeyFile = resolution.encryption.map { PopKeyFile(layout: file.layout, encryption: $0) }
        }
        var dependencies = AuthDependencies(
            transport: httpTransport(timeoutSeconds: configuration.httpTimeoutSeconds, logger: logger),
            cache: TokenCache(store: store, refreshLock: refreshLock, refreshErrors: refreshErrors),
            browser: SystemBrowserLauncher(logger: logger),
            listener: LoopbackRedirectListener(logger: logger),
            logger: logger)
        // Made only when asked for: a start that does not use the broker never loads libdbus.
        if configuration.broker != .off { dependencies.broker = SessionBusBroker() }
        dependencies.newCorrelationId = { AuthJSON.correlationId() }
        dependencies.popKeys = PopKeyHolder(file: popKeyFile)
        return EngineDependencies(dependencies, cacheProtection: report)
    }
}
