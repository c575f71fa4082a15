"""Each package installed as its README says, into a scratch directory, on the toolchain-less
"machine" (Tests/e2e/no_toolchain.py) with a fresh HOME: where its commands are (the PATH a
user then has) and the prefix its shared files are under (`auth-sidecar where` answers
PREFIX/share/auth-sidecar/NAME and PREFIX/share/doc/auth-sidecar)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass

import pytest

from as_user import no_toolchain

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class Installed:
    kind: str
    path: str      # PATH with the package's commands first
    prefix: str    # PREFIX of PREFIX/bin/auth-sidecar (the binary's own directory's parent)
    home: str

    def run(self, script: str, *args: str, timeout: int = 120, **env: str) -> subprocess.CompletedProcess:
        """`script` in bash as the user: this PATH and HOME, nothing else of ours."""
        return no_toolchain.run(["bash", "-c", script, "bash", *args],
                                env={"HOME": self.home, "LANG": "C.UTF-8", "PATH": self.path, **env},
                                timeout=timeout)


def install(kind: str, dist: dict[str, str], work) -> Installed:
    """Installs `kind` (wheel, npm, tarball, deb) under `work` (a pathlib.Path); the .deb
    system-wide (remove it with `remove_deb`)."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    bare = Installed(kind, no_toolchain.BARE_PATH, "", str(home))
    if kind == "wheel":  # a venv, activated: its bin first on PATH
        venv = work / "venv"
        done = bare.run('python3 -m venv "$1" && "$1/bin/pip" install -q --no-index "$2"', str(venv), dist["wheel"],
                        timeout=180)
        found = Installed(kind, f"{venv}/bin:{no_toolchain.BARE_PATH}", str(venv), str(home))
    elif kind == "npm":  # npm install -g with a prefix of the user's: PREFIX/bin on PATH
        if not shutil.which("npm"):
            if os.environ.get("CI"):
                pytest.fail("npm is not installed (scripts/setup.sh installs it)")
            pytest.skip("npm is not installed")
        prefix = work / "npm-global"
        done = bare.run('npm install -g --prefix "$1" --offline --no-audit --no-fund --no-update-notifier "$2"',
                        str(prefix), dist["npm"], timeout=180)
        found = Installed(kind, f"{prefix}/bin:{no_toolchain.BARE_PATH}",
                          str(prefix / "lib" / "node_modules" / "auth-sidecar"), str(home))
    elif kind == "tarball":  # unpacked, its install.sh --prefix
        with tarfile.open(dist["tarball"]) as tarball:
            tarball.extractall(work / "unpacked", filter="tar")
        (top,) = os.listdir(work / "unpacked")
        prefix = work / "prefix"
        done = bare.run('"$1/install.sh" --prefix "$2"', str(work / "unpacked" / top), str(prefix))
        found = Installed(kind, f"{prefix}/bin:{no_toolchain.BARE_PATH}", str(prefix), str(home))
    elif kind == "deb":
        readable = tempfile.mkdtemp(prefix="auth-sidecar-deb-")  # apt's sandbox user (_apt) reads it
        os.chmod(readable, 0o755)
        deb = shutil.copy(dist["deb"], readable)
        done = Installed(kind, SYSTEM_PATH, "", str(home)).run(
            'DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1"', str(deb), timeout=300)
        shutil.rmtree(readable)
        found = Installed(kind, SYSTEM_PATH, "/usr", str(home))
    else:
        raise ValueError(kind)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return found


def remove_deb() -> None:
    removed = no_toolchain.run(["bash", "-c", "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q auth-sidecar"],
                               env={"PATH": SYSTEM_PATH}, timeout=300)
    assert removed.returncode == 0, removed.stdout + removed.stderr
