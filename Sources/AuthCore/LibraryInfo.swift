/// What this build is: the one version string (the server reports it, the token endpoint
/// sees it in `x-client-Ver`).
public enum LibraryInfo {
    public static let name = "auth-sidecar"
    public static let version = "0.1.0"
}
