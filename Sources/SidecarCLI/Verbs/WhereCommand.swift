import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `auth-sidecar where [NAME]`: the directory this installation keeps the editor plugins, the
/// shell recipes, the documentation or a shim directory in, so that a user of any package (the
/// .deb, the tarball, the wheel, npm) can load the plugin without a clone. Every package lays
/// them out the same way beside its binary: PREFIX/bin/auth-sidecar, PREFIX/share/auth-sidecar/…,
/// PREFIX/share/doc/auth-sidecar (the wheel through its data scheme, npm inside the package).
struct WhereCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "where",
        abstract: "Print where this installation keeps the editor plugins, shell recipes, docs and shims.",
        discussion: """
            With a name, its directory (exit status 1 when this installation has none); without, every \
            one this installation has, as NAME<tab>DIRECTORY lines. neovim: add it to 'runtimepath'; \
            emacs: add it to load-path; shell: the jq recipes; docs: README.md, docs/ and protocol/; \
            az, keyring: the shim directories to put first on PATH where wanted. Found beside the \
            binary (PREFIX/bin/auth-sidecar: PREFIX/share/auth-sidecar/NAME, PREFIX/share/doc/auth-sidecar); \
            a binary built in a clone names the clone's directories.
            """)

    @Argument(help: ArgumentHelp("neovim, emacs, shell, docs, az or keyring.", valueName: "name"))
    var name: InstalledPaths.Name?

    func run() throws {
        let output = StandardStreams.reserveStdoutForProtocol()
        let found = InstalledPaths(executable: InstalledPaths.executablePath())
        guard let name else {
            let lines = InstalledPaths.Name.allCases.compactMap { name in found.existing(name).map { "\(name.rawValue)\t\($0)\n" } }
            Console.write(lines.joined(), to: output)
            return
        }
        guard let directory = found.existing(name) else {
            Console.say(found.missing(name))
            throw ExitCode(VerbFailure.failureStatus)
        }
        Console.write(directory + "\n", to: output)
    }
}

/// Where an installation's shared files are, from its binary's own path (pure but for
/// ``executablePath()`` and the existence checks; unit-tested with made-up trees).
struct InstalledPaths {
    /// What `where` can name.
    enum Name: String, CaseIterable, ExpressibleByArgument {
        case neovim, emacs, shell, docs, az, keyring
    }

    /// The binary's resolved path (links followed: npm's and the shims' links name the package's).
    let executable: String?
    /// Whether a directory exists (a seam for the tests).
    var isDirectory: (String) -> Bool = InstalledPaths.directoryExists

    /// This process's binary, links resolved; nil when /proc is not mounted.
    static func executablePath() -> String? {
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// PREFIX of PREFIX/bin/auth-sidecar.
    var prefix: String? {
        executable.map { Self.parent(Self.parent($0)) }
    }

    /// Where an installed package keeps `name`.
    func installed(_ name: Name) -> String? {
        guard let prefix else { return nil }
        let share = (prefix == "/" ? "" : prefix) + "/share"
        switch name {
        case .neovim, .emacs, .shell: return "\(share)/auth-sidecar/\(name.rawValue)"
        case .docs: return "\(share)/doc/auth-sidecar"
        case .az: return "\(share)/auth-sidecar/az-shim/bin"
        case .keyring: return "\(share)/auth-sidecar/keyring-shim/bin"
        }
    }

    /// The clone a binary built there (CLONE/.build/…/auth-sidecar) belongs to, if any.
    var clone: String? {
        guard var directory = executable.map(Self.parent) else { return nil }
        for _ in 0..<4 {
            directory = Self.parent(directory)
            if directory.hasSuffix("/.build") {
                let root = Self.parent(directory)
                return isDirectory(root + "/clients/neovim") ? root : nil
            }
        }
        return nil
    }

    /// The clone's own directory for `name` (no shims there: scripts/install.sh makes them).
    func inClone(_ name: Name) -> String? {
        guard let clone else { return nil }
        switch name {
        case .neovim, .emacs, .shell: return "\(clone)/clients/\(name.rawValue)"
        case .docs: return clone
        case .az, .keyring: return nil
        }
    }

    /// The directory for `name` that exists: the installation's, else the clone's.
    func existing(_ name: Name) -> String? {
        [installed(name), inClone(name)].compactMap { $0 }.first(where: isDirectory)
    }

    /// Why there is none, for the user.
    func missing(_ name: Name) -> String {
        let looked = installed(name).map { " (looked in \($0))" } ?? ""
        let fix =
            clone != nil
            ? "a binary built in a clone has only the clone's clients and docs; scripts/install.sh installs the rest"
            : "reinstall the package, or run the auth-sidecar of the package that has it"
        return "this installation has no \(name.rawValue) directory\(looked): \(fix)"
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func directoryExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
