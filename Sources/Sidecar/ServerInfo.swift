import AuthCore

/// What this build of the server is.
public enum ServerInfo {
    public static let name = LibraryInfo.name
    public static let version = LibraryInfo.version
    public static let protocolVersion = "1.0"
}
