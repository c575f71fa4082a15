"""What the packages suite's tests share: the version (LibraryInfo), the documentation's code blocks, and
running a script as a user on a machine without the Swift toolchain, configured for the mock."""
from __future__ import annotations

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "e2e"))

import no_toolchain  # noqa: E402  (Tests/e2e/no_toolchain.py)
from doc_sections import blocks  # noqa: E402,F401  (Tests/e2e/doc_sections.py: the docs' code blocks by heading)


def library_version() -> str:
    """LibraryInfo.version, the one place the version is written."""
    with open(os.path.join(REPO, "Sources", "AuthCore", "LibraryInfo.swift"), encoding="utf-8") as f:
        (version,) = re.findall(r'static let version = "([^"]+)"', f.read())
    return version


def as_a_user(tried: str, home, script: str, path: str = no_toolchain.BARE_PATH, *args: str,
              **kwargs) -> subprocess.CompletedProcess:
    """`script` in bash on the toolchain-less "machine", configured for the mock (try.sh's
    env) but with PATH=`path`, HOME=`home`, and no $AUTH_SIDECAR_BIN / $AUTH_SIDECAR_SOCK:
    the binary must be the package's own. `args` are $1... of the script."""
    wrapped = ('source "$TRY_DIR/env" && unset AUTH_SIDECAR_BIN AUTH_SIDECAR_SOCK && export PATH="$USER_PATH" && '
               + script)
    return no_toolchain.run(["bash", "-c", wrapped, "bash", *args],
                            env={"TRY_DIR": tried, "HOME": str(home), "USER_PATH": path, "LANG": "C.UTF-8"},
                            **kwargs)
