import JSON

extension ConfigurationOverrides {
    /// The keys set here as `initialize` params (unset keys are left out), so a client can
    /// hand its own configuration sources to a server: `ConfigurationOverrides(params: json)`
    /// gives these overrides back.
    public var json: JSONValue {
        var members = JSONObject()  // a nil value sets nothing
        members["clientId"] = clientId.map(JSONValue.string)
        members["authority"] = authority.map(JSONValue.string)
        members["redirectUri"] = redirectUri.map(JSONValue.string)
        members["redirectPort"] = redirectPort.map { .int(Int64($0)) }
        members["knownAuthorities"] = knownAuthorities.map(JSONValue.init)
        members["scopes"] = scopes.map(JSONValue.init)
        members["graphEndpoint"] = graphEndpoint.map(JSONValue.string)
        members["cache"] = cache?.json
        members["cacheProtection"] = cacheProtection.map { .string($0.name) }
        members["secretServiceKeyCacheSeconds"] = secretServiceKeyCacheSeconds.map { .int(Int64($0)) }
        members["sharedDeviceMode"] = sharedDeviceMode.map(JSONValue.bool)
        members["clientCapabilities"] = clientCapabilities.map(JSONValue.init)
        members["browser"] = browser.map { .string($0.rawValue) }
        members["authorityType"] = authorityType.map(JSONValue.string)
        members["instanceDiscovery"] = instanceDiscovery.map(JSONValue.bool)
        members["httpTimeoutSeconds"] = httpTimeoutSeconds.map { .int(Int64($0)) }
        members["interactiveTimeoutSeconds"] = interactiveTimeoutSeconds.map { .int(Int64($0)) }
        members["broker"] = broker.map { .string($0.rawValue) }
        members["brokerSilentRescue"] = brokerSilentRescue.map(JSONValue.bool)
        members[ClientAssertionSetting.key] = clientAssertion?.json
        members["sshCertScope"] = sshCertScope.map(JSONValue.string)
        return .object(members)
    }
}
