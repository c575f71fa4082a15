// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "auth-sidecar",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "auth-sidecar", targets: ["AuthSidecar"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        // C libraries, each behind a module map and a shim of typed wrappers.
        // No pkgConfig: it would put the system's library directory (libjansson.so) on the link
        // line ahead of the one where scripts/build.sh puts libjansson.a to link it statically;
        // the headers and the library are on the default paths, the module map links "jansson".
        .systemLibrary(
            name: "CJansson",
            providers: [.apt(["libjansson-dev"])]),
        // No pkgConfig here: it would add -lcurl, and libcurl is loaded with dlopen on first
        // use (start-up cost, see ARCHITECTURE.md); its headers are on the default path.
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // The kernel keyring's system calls (add_key, keyctl) as functions; no library.
        .systemLibrary(name: "CKeyctl"),
        // prctl (variadic in glibc) as a function: no core dump, no same-uid ptrace.
        .systemLibrary(name: "CProcessControl"),

        // The POSIX calls several modules need, once: errno text, the monotonic clock, a
        // detached thread, writing and reading a descriptor whole. Glibc only; no sockets.
        .target(name: "POSIXSupport", dependencies: ["CProcessControl"]),
        // The commit this binary was built from, as scripts/build.sh stamped it (`--version`).
        .target(name: "CBuildStamp"),
        // JSON values; the only module that touches jansson.
        .target(name: "JSON", dependencies: ["CJansson"]),
        // JSON-RPC 2.0: framing, messages, dispatch, cancellation, output.
        .target(
            name: "JSONRPC",
            dependencies: [
                "JSON", "POSIXSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        // The seams the auth domain talks through, apart from their implementations (as
        // swift-nio's NIOCore is apart from NIOPosix): HTTPTransport and its values, the
        // browser launcher, the redirect listener, the clock. No C, no sockets.
        .target(name: "AuthSeams"),
        // HTTPTransport over libcurl, loaded with dlopen on first use. Only the wiring imports it.
        .target(name: "HTTP", dependencies: ["AuthSeams", "CCurl", "POSIXSupport", .product(name: "Logging", package: "swift-log")]),
        // MSAL's cross-SDK token cache: entities, keys, file store with lock and atomic writes.
        .target(
            name: "TokenCache",
            dependencies: [
                "JSON", "POSIXSupport", "CKeyctl", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["README.md"]),
        // The loopback redirect listener and the browser launcher over POSIX sockets and
        // posix_spawn. Only the wiring imports it.
        .target(
            name: "Loopback", dependencies: ["AuthSeams", "POSIXSupport", .product(name: "Logging", package: "swift-log")],
            exclude: ["README.md"]),
        // The Linux identity broker on the session D-Bus, libdbus-1 loaded with dlopen on first
        // use. Only the wiring imports it.
        .target(name: "DBusBroker", dependencies: ["AuthSeams", "POSIXSupport"]),
        // The auth domain: authorities, OAuth2 grants, flows, accounts, errors.
        // Knows nothing of JSON-RPC, libcurl, sockets or jansson: it talks through AuthSeams.
        .target(
            name: "AuthCore",
            dependencies: [
                "AuthSeams", "TokenCache", "JSON", "POSIXSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Microsoft Graph calls with automatic token handling.
        .target(name: "Graph", dependencies: ["AuthCore", "AuthSeams", "JSON", .product(name: "Logging", package: "swift-log")]),
        // Test doubles for the auth seams (used by test targets only).
        .target(name: "AuthTestSupport", dependencies: ["AuthCore", "AuthSeams", "TokenCache", "POSIXSupport"]),
        // The in-process JSON-RPC harness (the real server and method table over a socketpair,
        // with AuthTestSupport's fakes) and the fake JSON-RPC peer (used by test targets only).
        .target(
            name: "SidecarTestSupport",
            dependencies: [
                "Sidecar", "JSONRPC", "JSON", "AuthCore", "AuthTestSupport", "TokenCache", "POSIXSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The sidecar's configuration, method table and params checking; it builds engines over
        // the seams (AuthSeams, AuthCore) from what a door's composition root gives it.
        .target(
            name: "Sidecar",
            dependencies: [
                "JSON", "JSONRPC", "AuthCore", "AuthSeams", "Graph", "TokenCache",
                "POSIXSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The composition root: picks and builds the concrete implementations (the file cache
        // and its key store, libcurl, the browser, the loopback listener, the D-Bus broker).
        .target(
            name: "Composition",
            dependencies: [
                "Sidecar", "JSONRPC", "AuthCore", "AuthSeams", "HTTP", "DBusBroker", "TokenCache", "Loopback",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The per-user agent: the stdio protocol on a Unix socket, one engine for all.
        .target(
            name: "Agent",
            dependencies: [
                "Sidecar", "Composition", "JSONRPC", "JSON", "Loopback", "POSIXSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        // Tokens for other tools' protocols: az's JSON, git credentials, kubectl's
        // ExecCredential, the App Service managed-identity endpoint.
        .target(
            name: "Adapters",
            dependencies: [
                "JSON", "JSONRPC", "AuthSeams", "Loopback", "POSIXSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),  // the managed-identity endpoint's token_sha256_to_refresh
            ]),
        // The az emulator: `az` (argv[0]) or `auth-sidecar az`, Azure CLI's commands answered
        // from the engine its host (SidecarCLI) opens; Resource Manager through the engine's HTTP client.
        .target(
            name: "AzEmulator",
            dependencies: [
                "Adapters", "Sidecar", "Composition", "JSON", "JSONRPC", "AuthSeams", "POSIXSupport", "TokenCache",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The command line, stdout hygiene, signals and wiring; the shell verbs.
        .target(
            name: "SidecarCLI",
            dependencies: [
                "Sidecar", "Composition", "JSONRPC", "JSON", "AuthSeams", "Loopback", "POSIXSupport", "Agent", "Adapters", "AzEmulator",
                "CBuildStamp", "TokenCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The executable: main.swift only.
        .executableTarget(name: "AuthSidecar", dependencies: ["SidecarCLI"], path: "Sources/auth-sidecar"),
        // The fuzz target over framing, JSON and dispatch (scripts/fuzz.sh builds it with
        // libFuzzer); a normal build makes it a replayer of input files.
        .systemLibrary(name: "CFuzzer"),
        .executableTarget(
            name: "FuzzDispatch",
            dependencies: [
                "CFuzzer", "Sidecar", "JSONRPC", "JSON", "AuthCore", "AuthSeams", "AuthTestSupport", "TokenCache", "POSIXSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The fuzz target over the client assertion sources (scripts/fuzz.sh --target assertion).
        .executableTarget(name: "FuzzAssertion", dependencies: ["CFuzzer", "AuthCore", "AuthSeams", "POSIXSupport"]),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "AdaptersTests", dependencies: ["Adapters", "JSON"]),
        .testTarget(name: "AzEmulatorTests", dependencies: ["AzEmulator", "Adapters", "JSON"]),
        .testTarget(
            name: "JSONRPCTests",
            dependencies: ["JSONRPC", "JSON", "POSIXSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "SidecarTests",
            dependencies: [
                "Sidecar", "JSONRPC", "JSON", "AuthCore", "AuthSeams", "AuthTestSupport", "SidecarTestSupport", "TokenCache", "POSIXSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "AgentTests",
            dependencies: [
                "Agent", "Sidecar", "AuthCore", "AuthSeams", "AuthTestSupport", "SidecarTestSupport", "JSON", "JSONRPC", "Loopback",
                "POSIXSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SidecarCLITests",
            dependencies: [
                "SidecarCLI", "Sidecar", "Composition", "JSONRPC", "JSON", "POSIXSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "HTTPTests", dependencies: ["HTTP", "AuthSeams", "CCurl", "POSIXSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TokenCacheTests", dependencies: ["TokenCache", "JSON", "POSIXSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "LoopbackTests",
            dependencies: ["Loopback", "AuthSeams", "POSIXSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "GraphTests",
            dependencies: [
                "Graph", "AuthCore", "AuthSeams", "AuthTestSupport", "TokenCache", "JSON", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "AuthCoreTests",
            dependencies: [
                "AuthCore", "AuthSeams", "AuthTestSupport", "TokenCache", "JSON", "POSIXSupport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
