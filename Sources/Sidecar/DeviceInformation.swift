import JSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `getDeviceInformation` reports: the device mode (shared or private) and facts
/// about the machine that matter to sign-in (can a browser be opened here?).
public struct DeviceInformation: Sendable, Equatable {
    public enum ModeSource: String, Sendable { case configuration, policyFile, `default` }

    public var shared: Bool
    public var modeSource: ModeSource
    public var extra: JSONObject
    /// What the Linux identity broker said (`nil`: `broker` is `off`, the bus is not asked).
    public var broker: Broker?

    /// The broker's part of the answer.
    public struct Broker: Sendable, Equatable {
        public var available: Bool
        /// `getLinuxBrokerVersion`'s `linuxBrokerVersion`.
        public var version: String?

        public init(available: Bool, version: String?) {
            self.available = available
            self.version = version
        }
    }

    /// The machine-wide policy file: `$AUTH_SIDECAR_POLICY_FILE`, else
    /// `/etc/auth-sidecar/policy.json`, holding e.g. `{"sharedDeviceMode": true}`.
    public static func policyFilePath() -> String {
        ProcessEnvironment.value("AUTH_SIDECAR_POLICY_FILE") ?? "/etc/auth-sidecar/policy.json"
    }

    /// Gathers the information now. The policy file wins when it declares a shared device.
    public static func current(sharedDeviceModeConfigured: Bool, browserMode: Configuration.BrowserMode) -> DeviceInformation {
        let policyShared =
            ProcessEnvironment.readTextFile(policyFilePath())
            .flatMap { try? JSONValue.parse($0) }?["sharedDeviceMode"]?.boolValue ?? false
        let source: ModeSource = policyShared ? .policyFile : sharedDeviceModeConfigured ? .configuration : .default
        return DeviceInformation(
            shared: policyShared || sharedDeviceModeConfigured, modeSource: source,
            extra: machineFacts(browserMode: browserMode))
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "deviceMode": shared ? "shared" : "private",
            "sharedDeviceModeSource": .string(modeSource.rawValue),
            "extraDeviceInformation": .object(extra),
            "brokerAvailable": .bool(broker?.available ?? false),
        ]
        if let version = broker?.version { object["brokerVersion"] = .string(version) }
        return .object(object)
    }

    private static func machineFacts(browserMode: Configuration.BrowserMode) -> JSONObject {
        var name = utsname()
        uname(&name)
        let browser = BrowserAvailability.current()
        return [
            "os": .string(field(&name.sysname)),
            "osRelease": JSONValue(osRelease()),
            "kernelRelease": .string(field(&name.release)),
            "architecture": .string(field(&name.machine)),
            "hostname": .string(field(&name.nodename)),
            "headless": .bool(browser.headless),
            "browserMode": .string(browserMode.rawValue),
            "browserCommand": JSONValue(browser.browserCommand),
            "canOpenBrowser": .bool(browserMode == .client || browser.canOpenSystemBrowser),
        ]
    }

    /// `PRETTY_NAME` from `/etc/os-release`.
    private static func osRelease() -> String? {
        guard let text = ProcessEnvironment.readTextFile("/etc/os-release") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return String(line.dropFirst("PRETTY_NAME=".count)).trimmingQuotes()
        }
        return nil
    }

    private static func field<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension String {
    func trimmingQuotes() -> String {
        var text = Substring(self)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        return String(text)
    }
}
