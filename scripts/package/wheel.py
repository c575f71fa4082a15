#!/usr/bin/env python3
"""Writes the auth_sidecar wheel: the Python client (clients/python/src/auth_sidecar) and the
binary in the wheel's .data/scripts, so `pip install` puts `auth-sidecar` on the environment's
PATH (<venv>/bin) and the client finds it there (auth_sidecar._common.packaged_binary). The
binary is linked statically except for glibc, so no launcher or vendored library is needed
(auditwheel's launcher would cost ~9 ms a spawn).

The mock identity platform (MOCK_DIR: scripts/try.py, scripted_browser.py, mock_idp/, as
scripts/package.sh stages it) goes in auth_sidecar/mock, try.py as its __main__: `python -m
auth_sidecar.mock`, or the `auth-sidecar-try` entry point, starts it.

The files every package ships beside its binary (STAGE_DIR: scripts/install.sh's prefix, as
scripts/package.sh stages it) go in the wheel's .data/data, which pip installs under the prefix
the binary's bin/ is in (the venv, ~/.local with --user): share/auth-sidecar/{neovim,emacs,shell},
share/doc/auth-sidecar (README.md, docs/, protocol/), where `auth-sidecar where NAME` finds them.
A wheel holds no links, so the multi-call names the other packages link (#50) are two-line
scripts running the binary beside them: bin/docker-credential-auth-sidecar (.data/scripts),
share/auth-sidecar/keyring-shim/bin/keyring and share/auth-sidecar/az-shim/bin/az (directories
of their own, as in the other packages).

Usage: wheel.py BINARY VERSION PLATFORM_TAG OUTPUT_DIR MOCK_DIR STAGE_DIR   (prints the wheel's path)
Standard library only; the file list and RECORD are in a fixed order, dates fixed.
"""
from __future__ import annotations

import base64
import hashlib
import os
import sys
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLIENT = os.path.join(REPO, "clients", "python")
NAME = "auth_sidecar"
DATE = (2020, 1, 1, 0, 0, 0)


def metadata(version: str) -> str:
    with open(os.path.join(CLIENT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: auth-sidecar and its Python client: MSAL-style sign-in to the Microsoft identity "
            "platform over JSON-RPC on stdio\n"
            "License: MIT\nRequires-Python: >=3.8\n"
            "Classifier: Programming Language :: Python :: 3\nClassifier: Framework :: AsyncIO\n"
            "Classifier: Typing :: Typed\nClassifier: Operating System :: POSIX :: Linux\n"
            "Description-Content-Type: text/markdown\n\n" + readme)


def mock_entries(mock: str) -> list[tuple[str, bytes, int]]:
    """auth_sidecar/mock/: __init__.py, __main__.py (try.py), scripted_browser.py, mock_idp/."""
    found = [(f"{NAME}/mock/__init__.py", b'"""The mock identity platform for trying auth-sidecar: '
              b'python -m auth_sidecar.mock."""\n', 0o644)]
    for root, dirs, files in os.walk(mock):
        dirs.sort()
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(root, name), mock)
            with open(os.path.join(root, name), "rb") as f:
                body = f.read()
            found.append((f"{NAME}/mock/" + ("__main__.py" if relative == "try.py" else relative), body, 0o644))
    return found


# The multi-call names as scripts (Sources/SidecarCLI/MultiCallNames.swift: `auth-sidecar
# SUBCOMMAND` is the name's program), shared with the npm package (scripts/package.sh).
SCRIPTS = os.path.join(REPO, "scripts", "package")


def script(name: str) -> bytes:
    with open(os.path.join(SCRIPTS, name), "rb") as f:
        return f.read()


def shared_entries(stage: str, data: str) -> list[tuple[str, bytes, int]]:
    """STAGE/share/auth-sidecar/{neovim,emacs,shell} and STAGE/share/doc/auth-sidecar, under
    DATA/data/share; the keyring and az scripts in share/auth-sidecar/{keyring,az}-shim/bin."""
    found = []
    for top in ("share/auth-sidecar/neovim", "share/auth-sidecar/emacs", "share/auth-sidecar/shell",
                "share/doc/auth-sidecar"):
        root = os.path.join(stage, top)
        if not os.path.isdir(root):
            sys.exit(f"wheel.py: {root} is missing (scripts/install-shared-files.sh)")
        for directory, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    found.append((f"{data}/data/" + os.path.relpath(path, stage), f.read(), 0o644))
    found.append((f"{data}/data/share/auth-sidecar/keyring-shim/bin/keyring", script("keyring"), 0o755))
    found.append((f"{data}/data/share/auth-sidecar/az-shim/bin/az", script("az"), 0o755))
    return found


def main(binary: str, version: str, platform: str, output: str, mock: str, stage: str) -> str:
    tag = f"py3-none-{platform}"
    dist_info, data = f"{NAME}-{version}.dist-info", f"{NAME}-{version}.data"
    entries: list[tuple[str, bytes, int]] = []
    package = os.path.join(CLIENT, "src", NAME)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(package, name), "rb") as f:
                entries.append((f"{NAME}/{name}", f.read(), 0o644))
    entries += mock_entries(mock)
    with open(binary, "rb") as f:
        entries.append((f"{data}/scripts/auth-sidecar", f.read(), 0o755))
    entries.append((f"{data}/scripts/docker-credential-auth-sidecar", script("docker-credential-auth-sidecar"), 0o755))
    entries += shared_entries(stage, data)
    entries.append((f"{dist_info}/METADATA", metadata(version).encode(), 0o644))
    wheel = f"Wheel-Version: 1.0\nGenerator: auth-sidecar scripts/package/wheel.py\nRoot-Is-Purelib: true\nTag: {tag}\n"
    entries.append((f"{dist_info}/WHEEL", wheel.encode(), 0o644))
    # twine and pip --keyring-provider import: keyring loads the backend (clients/python/pyproject.toml)
    entry_points = ("[console_scripts]\nauth-sidecar-try = auth_sidecar.mock.__main__:main\n\n"
                    "[keyring.backends]\nauth_sidecar = auth_sidecar.keyring_backend\n")
    entries.append((f"{dist_info}/entry_points.txt", entry_points.encode(), 0o644))
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b'=').decode()},"
                     f"{len(body)}\n" for path, body, _ in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    path = os.path.join(output, f"{NAME}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, body, mode in entries:
            info = zipfile.ZipInfo(name, DATE)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, body)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__.split("\n\n")[1])
    print(main(*sys.argv[1:]))
