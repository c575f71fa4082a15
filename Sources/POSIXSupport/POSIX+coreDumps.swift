import CProcessControl

extension POSIX {
    /// Makes this process one the kernel never dumps and a debugger of the same user cannot
    /// attach to: `prctl(PR_SET_DUMPABLE, 0)` and `RLIMIT_CORE` 0 (two system calls, at the
    /// start of the agent and the stdio mode, which hold the cache key and decrypted tokens).
    /// A crash then writes no core file holding them, and `ptrace`, `/proc/PID/mem` and
    /// `process_vm_readv` need `CAP_SYS_PTRACE`. Reset by `execve` for the programs this one
    /// starts (browsers, key commands), which keep the core limit 0.
    /// - Throws: ``POSIXError`` when the kernel refuses (it should not).
    public static func forbidCoreDumps() throws(POSIXError) {
        guard auth_sidecar_forbid_core_dumps() == 0 else { throw POSIXError("prctl/setrlimit") }
    }

    /// Whether this process may be dumped (`prctl(PR_GET_DUMPABLE)`).
    public static var isDumpable: Bool { auth_sidecar_is_dumpable() == 1 }
}
