/// The options every verb takes, as a plain value: the configuration sources and logging
/// (``LaunchOptions``), and whether to use a running agent.
struct VerbLaunchOptions: Equatable {
    var launch = LaunchOptions()
    /// `--no-agent`: run the engine in this process.
    var noAgent = false
    /// `login --redirect-port`: the loopback redirect's port (the `redirectPort` key).
    var redirectPort: Int?
    /// An in-process engine's `initialize` reports `cacheProtection` (`status` prints it; the
    /// other verbs never read it, and it costs a read of the cache file and of its directory).
    var cacheProtection = false
}
