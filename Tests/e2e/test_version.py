"""`auth-sidecar --version`: the version written once (LibraryInfo.version), the commit the
binary was built from and the build flavour (issue #21)."""
from __future__ import annotations

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def library_version() -> str:
    """The version as Sources/AuthCore/LibraryInfo.swift writes it (what scripts/package.sh reads)."""
    with open(os.path.join(REPO, "Sources", "AuthCore", "LibraryInfo.swift"), encoding="utf-8") as f:
        (version,) = re.findall(r'static let version = "([^"]+)"', f.read())
    return version


def test_version_names_the_version_the_commit_and_the_lean_build(sidecar_bin):
    done = subprocess.run([sidecar_bin, "--version"], capture_output=True, text=True, timeout=10,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stderr == "", done
    line = done.stdout.strip()
    match = re.fullmatch(r"auth-sidecar (\S+) \(commit ([0-9a-f]{12}(?:\+dirty)?|unknown), release-lean build\)", line)
    assert match, line
    assert match.group(1) == library_version()
    if os.path.exists(os.path.join(REPO, ".git")):  # a clone: the commit is one of its own
        assert match.group(2) != "unknown", line
        known = subprocess.run(["git", "-C", REPO, "cat-file", "-e", match.group(2).removesuffix("+dirty") + "^{commit}"],
                               capture_output=True)
        assert known.returncode == 0, f"{match.group(2)} is no commit of this repository"
