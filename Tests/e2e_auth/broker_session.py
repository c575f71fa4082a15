"""The stand-in identity broker (broker_standin.py, not Microsoft's) on a private session bus of
its own: `dbus-run-session` runs it, and it writes the bus's address to a file once it owns
`com.microsoft.identity.broker1`. Used by test_broker.py and benchmarks/broker_bench.py.
Needs Debian's `dbus` and python3-dbus + python3-gi for /usr/bin/python3 (scripts/setup.sh)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "broker_standin.py")
SYSTEM_PYTHON = "/usr/bin/python3"


def missing() -> str | None:
    """What is missing to run the stand-in (None: nothing)."""
    if not shutil.which("dbus-run-session"):
        return "dbus-run-session (apt-get install dbus)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import dbus, gi"], capture_output=True)
    if probe.returncode != 0:
        return "python3-dbus and python3-gi for /usr/bin/python3 (apt-get install python3-dbus python3-gi)"
    return None


class StandInBroker:
    """broker_standin.py under its own `dbus-run-session`: a private session bus."""

    def __init__(self, tmp_path, *args: str):
        tmp_path = Path(tmp_path)
        self.log_path = tmp_path / "broker-calls.log"
        self.control_path = tmp_path / "broker-control.json"
        address_file = tmp_path / "broker-bus-address"
        self.stderr = open(tmp_path / "broker-stderr.log", "wb")
        self.process = subprocess.Popen(
            ["dbus-run-session", "--", SYSTEM_PYTHON, STANDIN, "--log", str(self.log_path),
             "--control", str(self.control_path), "--address-file", str(address_file), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr, start_new_session=True)
        deadline = time.monotonic() + 15
        while not address_file.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, (tmp_path / "broker-stderr.log").read_text()
            time.sleep(0.02)
        self.address = address_file.read_text()

    def calls(self, method: str | None = None) -> list[dict]:
        if not self.log_path.exists():
            return []
        entries = [json.loads(line) for line in self.log_path.read_text().splitlines()]
        return [e for e in entries if method is None or e["method"] == method]

    def control(self, **settings) -> None:
        self.control_path.write_text(json.dumps(settings))

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        self.stderr.close()
