"""A headless Secret Service for the tests: a private D-Bus session bus (`dbus-daemon
--session`, what `dbus-run-session` starts) with `gnome-keyring-daemon` unlocked
non-interactively (`--unlock` reads the password from stdin and creates the login keyring),
its keyrings in a temporary XDG_DATA_HOME. Debian `dbus`, `gnome-keyring`, `libsecret-tools`
(scripts/setup.sh)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest


class KeyringSession:
    def __init__(self, root: str):
        self.root = root
        run = os.path.join(root, "run")
        os.makedirs(run, mode=0o700)
        self.env = {"XDG_RUNTIME_DIR": run, "XDG_DATA_HOME": os.path.join(root, "data"), "HOME": root,
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:path={run}/bus"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env, start_new_session=True)
        self.address = self.bus.stdout.readline().decode().strip()
        assert self.address, "dbus-daemon printed no address"
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        self.keyring = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env, start_new_session=True)
        self.keyring.stdin.write(b"test-keyring-password")
        self.keyring.stdin.close()
        deadline = time.monotonic() + 10
        while not self._owns_secrets():
            assert time.monotonic() < deadline, "gnome-keyring-daemon did not take org.freedesktop.secrets"
            time.sleep(0.05)

    def _owns_secrets(self) -> bool:
        done = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
            env=self.env, capture_output=True, timeout=5)
        return b"boolean true" in done.stdout

    def secret_tool(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["secret-tool", *args], env=self.env, capture_output=True, timeout=10, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL)

    def stop(self) -> None:
        for process in (self.keyring, self.bus):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


@pytest.fixture
def keyring_session(tmp_path):
    """An unlocked Secret Service on a private session bus; skipped (failing under CI) when
    its programs are missing."""
    missing = [p for p in ("dbus-daemon", "gnome-keyring-daemon", "secret-tool", "dbus-send") if not shutil.which(p)]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"missing {missing}: scripts/setup.sh installs dbus, gnome-keyring, libsecret-tools")
        pytest.skip(f"missing {missing} (apt-get install dbus gnome-keyring libsecret-tools)")
    session = KeyringSession(str(tmp_path / "keyring-session"))
    yield session
    session.stop()
