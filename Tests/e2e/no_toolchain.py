"""Running a command as on a machine without the Swift toolchain: a private mount namespace
(`unshare -m`) with an empty directory mounted over the toolchain's, and a bare environment
(`env -i PATH=/usr/bin:/bin` plus what the caller adds). Used by Tests/e2e/test_lean_binary.py
and Tests/packages. Needs root (or unprivileged user namespaces, `unshare -r`)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

BARE_PATH = "/usr/bin:/bin"


def toolchain_dir() -> str:
    """The toolchain's top directory: /opt/swift, or the one holding `swift` on PATH."""
    swift = shutil.which("swift", path=os.environ.get("PATH", "") + ":/opt/swift/usr/bin")
    if not swift:
        return "/opt/swift"
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(swift))))


def toolchain_libraries() -> list[str]:
    """The names of the toolchain's shared libraries (libswiftCore.so, libFoundation.so...)."""
    names = set()
    for root, _, files in os.walk(os.path.join(toolchain_dir(), "usr", "lib")):
        names.update(f for f in files if ".so" in f)
    return sorted(names)


def unshare_prefix() -> list[str]:
    """`unshare -m` (root) or `unshare -rm` (a user namespace), whichever works here."""
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        if subprocess.run(prefix + ["true"], capture_output=True).returncode == 0:
            return prefix
    raise RuntimeError("cannot make a mount namespace (unshare -m / -rm): run as root")


def run(argv: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`argv` with the toolchain hidden and only PATH=/usr/bin:/bin plus `env` in its
    environment (a `PATH` in `env` replaces it). Other keywords go to subprocess.run."""
    empty = tempfile.mkdtemp(prefix="no-toolchain-")
    try:
        script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
        bare = {"PATH": BARE_PATH, **(env or {})}
        command = unshare_prefix() + ["sh", "-c", script, "sh", empty, toolchain_dir(),
                                      "env", "-i", *[f"{k}={v}" for k, v in bare.items()], *argv]
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 120)
        return subprocess.run(command, **kwargs)
    finally:
        os.rmdir(empty)
