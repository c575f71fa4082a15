/// The names this binary answers to besides `auth-sidecar` and `az`, each a small program of
/// its own: started as NAME (a link to the binary, by the last component of argv[0]) or as
/// `auth-sidecar SUBCOMMAND ...`. One entry per name; scripts/package.sh makes the links.
enum MultiCallNames {
    /// A name and the program it runs (its arguments in, its exit status out).
    struct Entry: Sendable {
        let program: String
        let subcommand: String
        let run: @Sendable ([String]) -> Int32
    }

    static let entries: [Entry] = [
        Entry(program: "keyring", subcommand: "keyring", run: KeyringShim.run),
        Entry(program: "docker-credential-auth-sidecar", subcommand: "docker-credential", run: DockerCredentialHelper.run),
    ]

    /// The entry this process was started as, with its arguments; nil when none.
    static func match(programName: String?, _ arguments: [String]) -> (entry: Entry, arguments: [String])? {
        let last = programName.map { name in String(name.split(separator: "/", omittingEmptySubsequences: false).last ?? "") }
        if let entry = entries.first(where: { $0.program == last }) { return (entry, arguments) }
        if let first = arguments.first, let entry = entries.first(where: { $0.subcommand == first }) {
            return (entry, Array(arguments.dropFirst()))
        }
        return nil
    }
}
