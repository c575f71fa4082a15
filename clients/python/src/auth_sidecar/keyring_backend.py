"""A `keyring` backend that asks auth-sidecar (registered under the `keyring.backends` entry
point, so twine and pip's `--keyring-provider import` find it once this package is installed).

For an Azure Artifacts feed (https://pkgs.dev.azure.com/..., https://ORG.pkgs.visualstudio.com/...)
or a feed of the configuration's `packageFeeds`, the password is an access token of the signed-in
account, acquired silently by `auth-sidecar keyring get` (the binary decides which URLs are
feeds, one rule for every client). Any other service: None, so keyring asks its next backend.
Nothing is stored: `set_password` and `delete_password` refuse.
"""
from __future__ import annotations

import subprocess
from typing import Optional

from keyring import credentials, errors
from keyring.backend import KeyringBackend

from ._common import find_binary

TIMEOUT = 120.0  # a refresh over a slow network; never a sign-in (the binary asks silently)


def _classproperty(fn):
    class _Descriptor:
        def __get__(self, obj, owner):
            return fn(owner)
    return _Descriptor()


class SidecarKeyring(KeyringBackend):
    """auth-sidecar's tokens as passwords for package feeds (get only)."""

    @_classproperty
    def priority(cls) -> float:  # noqa: N805 (a class property)
        find_binary()  # raises SidecarNotFoundError: this backend is then not viable
        return 1  # below a system keyring: asked after it, in keyring's chain

    def _ask(self, service: str, username: Optional[str]) -> Optional[tuple]:
        args = [find_binary(), "keyring", "get", service]
        args += [username] if username else ["--mode", "creds"]
        try:
            done = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, timeout=TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        lines = done.stdout.decode("utf-8").splitlines()
        if username:
            return (username, lines[0]) if lines and lines[0] else None
        return (lines[0], lines[1]) if len(lines) >= 2 and lines[1] else None

    def get_password(self, service: str, username: str) -> Optional[str]:
        found = self._ask(service, username)
        return found[1] if found else None

    def get_credential(self, service: str, username: Optional[str]) -> Optional[credentials.Credential]:
        found = self._ask(service, username)
        return credentials.SimpleCredential(found[0], found[1]) if found else None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise errors.PasswordSetError("auth-sidecar stores no passwords: its tokens come from a sign-in")

    def delete_password(self, service: str, username: str) -> None:
        raise errors.PasswordDeleteError("auth-sidecar stores no passwords")
