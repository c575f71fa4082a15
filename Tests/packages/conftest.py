"""Fixtures for the packages suite (issue #21): scripts/package.sh run once on the release
binary ($AUTH_SIDECAR_BIN, else .build/release/auth-sidecar: the one scripts/test.sh built),
and the bundled mock started by scripts/try.sh, which the installed packages' quick starts
run against. Each package is then installed and run as a user would, on a "machine" without
the Swift toolchain (Tests/e2e/no_toolchain.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from as_user import REPO, library_version  # noqa: E402  (puts Tests/e2e on sys.path too)
import sidecar as sc  # noqa: E402  (Tests/e2e/sidecar.py)


@pytest.fixture(scope="session")
def sidecar_bin() -> str:
    return sc.require_binary()


@pytest.fixture(scope="session")
def dist(sidecar_bin, tmp_path_factory) -> dict[str, str]:
    """scripts/package.sh --binary <the release binary> into a temporary dist/: {kind: path}."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(["bash", os.path.join(REPO, "scripts", "package.sh"), "--binary", sidecar_bin,
                           "--output", str(out)], capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    version = library_version()
    names = sorted(os.listdir(out))
    kinds = {"wheel": rf"auth_sidecar-{re.escape(version)}-py3-none-manylinux_2_\d+_x86_64\.whl",
             "deb": rf"auth-sidecar_{re.escape(version)}_amd64\.deb",
             "npm": rf"auth-sidecar-{re.escape(version)}\.tgz",
             "tarball": rf"auth-sidecar-{re.escape(version)}-linux-x86_64\.tar\.gz",
             "sums": r"SHA256SUMS"}
    found = {}
    for kind, pattern in kinds.items():
        matching = [n for n in names if re.fullmatch(pattern, n)]
        assert len(matching) == 1, f"{kind}: {pattern} in {names}"
        found[kind] = str(out / matching[0])
    assert len(names) == len(kinds), names
    return found


@pytest.fixture(scope="session")
def tried(sidecar_bin, tmp_path_factory):
    """scripts/try.sh (the mock, its configuration, the scripted browser) in a temporary
    directory; yields TRY_DIR. Its bin/ and $AUTH_SIDECAR_BIN are not used: each test puts
    the package's own binary in their place."""
    tmp = tmp_path_factory.mktemp("try")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AUTH_SIDECAR_"))}
    env.update(HOME=str(tmp), TRY_DIR=str(tmp / "try"), AUTH_SIDECAR_BIN=sidecar_bin)
    started = subprocess.run(["bash", os.path.join(REPO, "scripts", "try.sh")], env=env, capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert started.returncode == 0, started.stderr
    yield env["TRY_DIR"]
    subprocess.run(["bash", os.path.join(REPO, "scripts", "try.sh"), "stop"], env=env, capture_output=True,
                   timeout=30)
