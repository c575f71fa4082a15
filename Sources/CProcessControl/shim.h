// prctl as a plain function: glibc declares it variadic, which Swift cannot call.
#ifndef AUTH_SIDECAR_CPROCESSCONTROL_SHIM_H
#define AUTH_SIDECAR_CPROCESSCONTROL_SHIM_H

#include <sys/prctl.h>
#include <sys/resource.h>

/// No core dump and no same-uid debugger: `prctl(PR_SET_DUMPABLE, 0)` (the kernel writes no
/// core and lets only CAP_SYS_PTRACE attach or read /proc/PID/mem) and `RLIMIT_CORE` 0, soft
/// and hard (also where `suid_dumpable` would dump a non-dumpable process). 0, or -1 with
/// errno set by the call that failed.
static inline int auth_sidecar_forbid_core_dumps(void) {
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
    struct rlimit none = {0, 0};
    return setrlimit(RLIMIT_CORE, &none);
}

/// `prctl(PR_GET_DUMPABLE)`: 1 when dumpable, 0 when not.
static inline int auth_sidecar_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

#endif
