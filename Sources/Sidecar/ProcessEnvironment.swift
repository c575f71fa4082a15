import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Read access to the process environment and a few facts about the machine.
public enum ProcessEnvironment {
    /// One variable, or `nil` when unset.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Every variable.
    public static func all() -> [String: String] {
        var result: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        return result
    }

    /// The first executable named `command` on `PATH`, if any.
    public static func which(_ command: String, path: String? = value("PATH")) -> String? {
        if command.contains("/") { return access(command, X_OK) == 0 ? command : nil }
        for directory in (path ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(command)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The whole contents of a small text file, or `nil` if it cannot be read.
    public static func readTextFile(_ path: String, limit: Int = 1 << 20) -> String? {
        POSIX.readFile(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }
}
