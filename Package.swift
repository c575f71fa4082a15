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
    ],
    targets: [
        // C libraries, each behind a module map and a shim of typed wrappers.
        .systemLibrary(
            name: "CJansson", pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),

        // JSON values; the only module that touches jansson.
        .target(name: "JSON", dependencies: ["CJansson"]),
        // JSON-RPC 2.0: framing, messages, dispatch, cancellation, output.
        .target(name: "JSONRPC", dependencies: [
            "JSON", .product(name: "Logging", package: "swift-log"),
        ]),
        // The sidecar's configuration, method table and params checking.
        .target(name: "Sidecar", dependencies: [
            "JSON", "JSONRPC", .product(name: "Logging", package: "swift-log"),
        ]),
        // The executable: command line, stdout hygiene, signals, wiring.
        .executableTarget(
            name: "AuthSidecar",
            dependencies: [
                "Sidecar", "JSONRPC", "JSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/auth-sidecar"),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "JSON"]),
        .testTarget(name: "SidecarTests", dependencies: ["Sidecar", "JSONRPC", "JSON"]),
    ],
    swiftLanguageModes: [.v6]
)
