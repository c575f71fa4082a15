// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "auth-sidecar",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "auth-sidecar", targets: ["AuthSidecar"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        // C libraries, each behind a module map and a shim of typed wrappers.
        .systemLibrary(
            name: "CJansson", pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]),
        // No pkgConfig here: it would add -lcurl, and libcurl is loaded with dlopen on first
        // use (start-up cost, see ARCHITECTURE.md); its headers are on the default path.
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),

        // JSON values; the only module that touches jansson.
        .target(name: "JSON", dependencies: ["CJansson"]),
        // JSON-RPC 2.0: framing, messages, dispatch, cancellation, output.
        .target(name: "JSONRPC", dependencies: [
            "JSON", .product(name: "Logging", package: "swift-log"),
        ]),
        // HTTP behind the HTTPTransport protocol; libcurl loaded with dlopen on first use.
        .target(name: "HTTP", dependencies: ["CCurl", .product(name: "Logging", package: "swift-log")]),
        // MSAL's cross-SDK token cache: entities, keys, file store with lock and atomic writes.
        .target(name: "TokenCache", dependencies: [
            "JSON", .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
        ],
                exclude: ["README.md"]),
        // The loopback redirect listener and the browser launchers.
        .target(name: "Loopback", dependencies: [.product(name: "Logging", package: "swift-log")],
                exclude: ["README.md"]),
        // The auth domain: authorities, OAuth2 grants, flows, accounts, errors.
        // Knows nothing of JSON-RPC, libcurl or jansson.
        .target(name: "AuthCore", dependencies: [
            "HTTP", "TokenCache", "Loopback", "JSON",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Microsoft Graph calls with automatic token handling.
        .target(name: "Graph", dependencies: ["AuthCore", "HTTP", "JSON", .product(name: "Logging", package: "swift-log")]),
        // Test doubles for the auth seams (used by test targets only).
        .target(name: "AuthTestSupport", dependencies: ["AuthCore", "HTTP", "Loopback", "TokenCache"]),
        // The sidecar's configuration, method table and params checking.
        .target(name: "Sidecar", dependencies: [
            "JSON", "JSONRPC", "AuthCore", "Graph", "HTTP", "TokenCache", "Loopback",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The per-user agent: the stdio protocol on a Unix socket, one engine for all.
        .target(name: "Agent", dependencies: [
            "Sidecar", "JSONRPC", "JSON", .product(name: "Logging", package: "swift-log"),
        ]),
        // Tokens for other tools' protocols: az's JSON, git credentials, kubectl's
        // ExecCredential, the App Service managed-identity endpoint.
        .target(name: "Adapters", dependencies: [
            "JSON", "JSONRPC", "Loopback", .product(name: "Logging", package: "swift-log"),
        ]),
        // The command line, stdout hygiene, signals and wiring; the shell verbs.
        .target(name: "SidecarCLI", dependencies: [
            "Sidecar", "JSONRPC", "JSON", "Loopback", "Agent", "Adapters",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The executable: main.swift only.
        .executableTarget(name: "AuthSidecar", dependencies: ["SidecarCLI"], path: "Sources/auth-sidecar"),
        // The fuzz target over framing, JSON and dispatch (scripts/fuzz.sh builds it with
        // libFuzzer); a normal build makes it a replayer of input files.
        .systemLibrary(name: "CFuzzer"),
        .executableTarget(name: "FuzzDispatch", dependencies: [
            "CFuzzer", "Sidecar", "JSONRPC", "AuthCore", "AuthTestSupport", "HTTP", "TokenCache",
            .product(name: "Logging", package: "swift-log"),
        ]),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "AdaptersTests", dependencies: ["Adapters", "JSON"]),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "JSON"]),
        .testTarget(name: "SidecarTests", dependencies: ["Sidecar", "JSONRPC", "JSON", "AuthCore", "AuthTestSupport", "HTTP", "TokenCache"]),
        .testTarget(name: "SidecarCLITests", dependencies: ["SidecarCLI", "Sidecar", "JSONRPC", "JSON"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Loopback"]),
        .testTarget(name: "TokenCacheTests", dependencies: ["TokenCache", "JSON"], exclude: ["Fixtures"]),
        .testTarget(name: "LoopbackTests", dependencies: ["Loopback"]),
        .testTarget(name: "GraphTests", dependencies: ["Graph", "AuthCore", "AuthTestSupport", "HTTP", "TokenCache", "JSON"]),
        .testTarget(name: "AuthCoreTests", dependencies: [
            "AuthCore", "AuthTestSupport", "HTTP", "TokenCache", "Loopback", "JSON",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
