import ArgumentParser

/// `auth-sidecar ssh-cert`: an OpenSSH user certificate from the identity service for an RSA
/// key, written beside it (`KEY-cert.pub`), as `az ssh cert` writes one.
struct SSHCertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-cert",
        abstract: "Write an OpenSSH certificate for an RSA key, signed by the identity service.",
        discussion: """
            Asks for an ssh-cert token (scope: sshCertScope, else the PAS scope of the authority's cloud) for \
            KEY.pub and writes the certificate to KEY-cert.pub (0644, atomically), where ssh and ssh-add find it. \
            Without --key, a key pair of its own under $XDG_RUNTIME_DIR/auth-sidecar/ssh/ (RSA 3072, made once). \
            A cached certificate with more than a third of its life (at most 5 minutes) left is used with no \
            request. Prints the certificate's path (--output-format json: path, key, principals, validity).
            """)

    @Option(help: ArgumentHelp("The private key (RSA; its public half is KEY.pub).", valueName: "key"))
    var key: String?

    @Option(help: ArgumentHelp("Where to write the certificate (default: KEY-cert.pub).", valueName: "file"))
    var output: String?

    @Option(name: .customLong("output-format"), help: "path (the certificate's path) or json (path, key, principals, validity).")
    var format: SSHCertRequest.Format = .path

    @OptionGroup var common: VerbOptions

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            try SSHCertRequest(key: key, output: output, format: format).runAndPrint(session)
        }
    }
}

extension SSHCertRequest.Format: ExpressibleByArgument {}

/// `auth-sidecar ssh-config HOST`: the `Host` block `az ssh config` would write for the
/// certificate `ssh-cert` keeps.
struct SSHConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-config",
        abstract: "Print an ssh_config Host block that signs in with the identity service's certificate.",
        discussion:
            "Writes or renews the certificate as ssh-cert does, then prints Host, User (the certificate's principal), CertificateFile and IdentityFile."
    )

    @Argument(help: "The host (as ssh is given it).")
    var host: String

    @Option(help: ArgumentHelp("The user to sign in as (default: the certificate's principal).", valueName: "user"))
    var user: String?

    @Option(help: ArgumentHelp("The private key (RSA; default: the runtime key).", valueName: "key"))
    var key: String?

    @OptionGroup var common: VerbOptions

    /// What would break out of the block is refused before anything is asked (``SSHConfigBlock``).
    func validate() throws {
        let problems = [
            SSHConfigBlock.wordProblem(host, what: "the host"), user.flatMap { SSHConfigBlock.wordProblem($0, what: "--user") },
            key.flatMap { SSHConfigBlock.pathProblem($0, what: "--key") },
        ]
        if let problem = problems.compactMap({ $0 }).first { throw ValidationError(problem) }
    }

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            let outcome = try SSHCertRequest(key: key, output: nil).run(session)
            session.print(
                try SSHConfigBlock.text(host: host, user: user ?? outcome.principal, certificate: outcome.path, key: outcome.key))
        }
    }
}
