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

    def __init__(self, tmp_path, *args: str, bus_address: str | None = None, env: dict | None = None):
        """`bus_address`: join that bus (e.g. a KeyringSession's) instead of a private one of its own."""
        tmp_path = Path(tmp_path)
        self.log_path = tmp_path / "broker-calls.log"
        self.control_path = tmp_path / "broker-control.json"
        address_file = tmp_path / "broker-bus-address"
        address_file.unlink(missing_ok=True)
        self.stderr = open(tmp_path / "broker-stderr.log", "wb")
        command = [SYSTEM_PYTHON, STANDIN, "--log", str(self.log_path), "--control", str(self.control_path),
                   "--address-file", str(address_file), *args]
        environment = {**os.environ, **(env or {})}
        if bus_address:
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus_address
        else:
            command = ["dbus-run-session", "--", *command]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr, start_new_session=True,
            env=environment)
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


class ActivatableBroker:
    """A private session bus (`dbus-daemon --session` with a configuration of its own) whose
    service directory holds `com.microsoft.identity.broker1.service`, as the broker's package
    installs it since 2.0.2: the first call to the name starts `exec` (the stand-in by default,
    or a program that fails). `activations()` counts the starts."""

    def __init__(self, tmp_path, exec_line: str | None = None):
        tmp_path = Path(tmp_path)
        services = tmp_path / "dbus-services"
        services.mkdir(exist_ok=True)
        self.log_path = tmp_path / "broker-calls.log"
        self.control_path = tmp_path / "broker-control.json"
        self.starts = tmp_path / "broker-activations"
        launcher = tmp_path / "broker-launch.sh"
        program = exec_line or f"{SYSTEM_PYTHON} {STANDIN} --log {self.log_path} --control {self.control_path}"
        launcher.write_text(f"#!/bin/sh\necho $$ >> {self.starts}\nexec {program}\n")
        launcher.chmod(0o755)
        (services / "com.microsoft.identity.broker1.service").write_text(
            f"[D-BUS Service]\nName=com.microsoft.identity.broker1\nExec={launcher}\n")
        config = tmp_path / "dbus-session.conf"
        config.write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={tmp_path}/activation-bus</listen>
  <servicedir>{services}</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")
        self.stderr = open(tmp_path / "activation-bus-stderr.log", "wb")
        self.bus = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                                    stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True)
        self.address = self.bus.stdout.readline().decode().strip()
        assert self.address, "dbus-daemon printed no address"

    def activations(self) -> int:
        return len(self.starts.read_text().splitlines()) if self.starts.exists() else 0

    def calls(self, method: str | None = None) -> list[dict]:
        if not self.log_path.exists():
            return []
        entries = [json.loads(line) for line in self.log_path.read_text().splitlines()]
        return [e for e in entries if method is None or e["method"] == method]

    def stop(self) -> None:
        if self.bus.poll() is None:
            os.killpg(self.bus.pid, signal.SIGTERM)
            self.bus.wait(timeout=10)
        for pid in (self.starts.read_text().split() if self.starts.exists() else []):  # the stand-ins it started
            try:
                os.kill(int(pid), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pass
        self.stderr.close()
