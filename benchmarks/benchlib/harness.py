"""Processes, pipes, timing and the machine line: what every benchmark script needs."""
from __future__ import annotations

import datetime
import os
import platform
import select
import subprocess
import sys
import time

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCHMARKS)
DEFAULT_BINARY = os.environ.get("AUTH_SIDECAR_BIN") or os.path.join(
    REPO, ".build", "release", "auth-sidecar")


def log(msg: str, who: str = "token_bench") -> None:
    """Progress on stderr (stdout carries only the machine line and the table)."""
    print(f"[{who} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def missing_binary(binary: str) -> str | None:
    """The message to print (exit status 2) when `binary` is not an executable, else None."""
    if os.access(binary, os.X_OK):
        return None
    return f"no executable at {binary} (build it with `scripts/build.sh`, the lean release build, or pass --binary)"


def binary_version(binary: str) -> str:
    """What `--version` says after the name: `0.1.0 (commit 51e95b2c0ffe, release-lean build)`."""
    said = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10,
                          stdin=subprocess.DEVNULL).stdout.strip()
    return said.removeprefix("auth-sidecar ") or "?"


def reap(proc: subprocess.Popen, timeout: float = 60.0) -> tuple[int, int]:
    """Wait with wait4; return (exit code, ru_maxrss KiB). Kills after `timeout`."""
    if proc.returncode is not None:
        return proc.returncode, getattr(proc, "maxrss", 0)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            proc.maxrss = ru.ru_maxrss
            return proc.returncode, ru.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            deadline += 30
        time.sleep(0.002)


def vmrss_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of /proc/PID/status in KiB: VmRSS (now) or VmHWM (peak since exec).

    (wait4's ru_maxrss is no use for the peak: Linux carries the parent's high-water mark
    into a child across fork and exec, so it reports this benchmark's own size.)"""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def spawn_to_exit(argv, env, stdin_bytes=None) -> tuple[float, bytes, int]:
    """Run `argv` to its exit: (seconds from spawn to exit, stdout, exit status)."""
    t0 = time.perf_counter()
    run = subprocess.run(argv, input=stdin_bytes, capture_output=True, env=env, timeout=60)
    return time.perf_counter() - t0, run.stdout, run.returncode


class LineReader:
    """NDJSON lines from a pipe, with deadlines."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = b""
        self.lines: list[bytes] = []

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no reply before the deadline")
        r, _, _ = select.select([self.fd], [], [], left)
        if not r:
            return
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError("the process closed its stdout")
        self.buf += chunk
        if b"\n" in chunk:
            *done, self.buf = self.buf.split(b"\n")
            self.lines.extend(line for line in done if line.strip())

    def line(self, deadline: float) -> bytes:
        while not self.lines:
            self._fill(deadline)
        return self.lines.pop(0)


def pct(values: list[float], p: float) -> float:
    """The p-th percentile by nearest rank over (n - 1): pct(v, 50) of an odd count is the
    median, pct(v, 0) the least, pct(v, 100) the greatest."""
    if not values:
        raise ValueError("pct() of no values")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """`AMD EPYC, 2 CPUs, Linux 6.18, 2026-11-22`: figures compare only on the same machine."""
    return (f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"{datetime.date.today().isoformat()}")
