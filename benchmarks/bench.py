#!/usr/bin/env python3
"""Benchmark the auth-sidecar JSON-RPC engine over real pipes.

Prints a Markdown table (see benchmarks/README.md for what each figure means):
  - cold start: spawn to the first `ping` reply (median, p90) over --runs runs;
  - pipelined `ping` throughput over one pipe (a writer thread writes --count
    pings while a reader thread counts replies), NDJSON and LSP framing;
  - lock-step round trips per second (send one ping, wait for its reply, repeat);
  - max RSS of the sidecar during each throughput run (from wait4 rusage).

Usage: python3 benchmarks/bench.py [--binary PATH] [--runs 200] [--count 200000]
                                    [--lockstep 20000] [--framing ndjson,lsp]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

DEFAULT_BINARY = os.environ.get("AUTH_SIDECAR_BIN") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".build", "release", "auth-sidecar")
ARGS = ["--client-id", "11111111-2222-3333-4444-555555555555"]
DEADLINE = 600.0  # no single measurement may take longer than this


def ping(i: int, framing: str) -> bytes:
    body = b'{"jsonrpc":"2.0","method":"ping","id":%d}' % i
    if framing == "lsp":
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    return body + b"\n"


class ReplyCounter:
    """Counts complete replies in a stdout byte stream (NDJSON lines or LSP frames)."""

    def __init__(self, framing: str):
        self.framing = framing
        self.count = 0
        self.errors = 0
        self._buf = b""
        self._need = None  # LSP: body bytes still to skip

    def feed(self, chunk: bytes) -> None:
        if self.framing == "ndjson":
            self.count += chunk.count(b"\n")
            self.errors += chunk.count(b'"error"')
            return
        buf = self._buf + chunk
        pos = 0
        while True:
            if self._need is None:
                end = buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    break
                header = buf[pos:end].lower()
                i = header.find(b"content-length:")
                self._need = int(header[i + 15:].split(b"\r\n")[0])
                pos = end + 4
            if len(buf) - pos < self._need:
                break
            if b'"error"' in buf[pos:pos + self._need]:
                self.errors += 1
            pos += self._need
            self._need = None
            self.count += 1
        self._buf = buf[pos:]


def spawn(binary: str) -> subprocess.Popen:
    return subprocess.Popen([binary, *ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)


def reap(proc: subprocess.Popen) -> tuple[int, int]:
    """Wait for the process with wait4; return (exit status, max RSS in KiB)."""
    deadline = time.monotonic() + 30
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, ru.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            deadline += 30
        time.sleep(0.005)


def read_exact_replies(fd: int, counter: ReplyCounter, want: int, deadline: float) -> None:
    import select
    while counter.count < want:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"only {counter.count}/{want} replies before the deadline")
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise RuntimeError(f"stdout closed after {counter.count}/{want} replies")
        counter.feed(chunk)


def cold_start(binary: str, runs: int, framing: str) -> list[float]:
    times = []
    msg = ping(1, framing)
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = spawn(binary)
        proc.stdin.write(msg)
        counter = ReplyCounter(framing)
        try:
            read_exact_replies(proc.stdout.fileno(), counter, 1, time.monotonic() + 30)
        finally:
            t1 = time.perf_counter()
            proc.stdin.close()
            code, _ = reap(proc)
        if code != 0:
            raise RuntimeError(f"the sidecar exited {code} at end of input")
        times.append(t1 - t0)
    return times


def throughput(binary: str, count: int, framing: str) -> tuple[float, int, int]:
    """Return (requests per second, max RSS KiB, error replies)."""
    proc = spawn(binary)
    chunk_size = 2000
    chunks = [b"".join(ping(i, framing) for i in range(s, min(count, s + chunk_size)))
              for s in range(0, count, chunk_size)]
    # warm up: one round trip so start-up time is not counted
    proc.stdin.write(ping(-1, framing))
    warm = ReplyCounter(framing)
    read_exact_replies(proc.stdout.fileno(), warm, 1, time.monotonic() + 30)

    failure: list[BaseException] = []

    def writer():
        try:
            for c in chunks:
                proc.stdin.write(c)
        except BaseException as e:  # noqa: BLE001
            failure.append(e)

    counter = ReplyCounter(framing)
    t0 = time.perf_counter()
    w = threading.Thread(target=writer, daemon=True)
    w.start()
    try:
        read_exact_replies(proc.stdout.fileno(), counter, count, time.monotonic() + DEADLINE)
    finally:
        t1 = time.perf_counter()
        w.join(10)
        proc.stdin.close()
        code, rss = reap(proc)
    if failure:
        raise RuntimeError(f"writer failed: {failure[0]!r}")
    if code != 0:
        raise RuntimeError(f"the sidecar exited {code} at end of input")
    return count / (t1 - t0), rss, counter.errors


def lockstep(binary: str, count: int, framing: str) -> tuple[float, list[float]]:
    proc = spawn(binary)
    fd = proc.stdout.fileno()
    counter = ReplyCounter(framing)
    lat = []
    proc.stdin.write(ping(-1, framing))
    read_exact_replies(fd, counter, 1, time.monotonic() + 30)
    deadline = time.monotonic() + DEADLINE
    t0 = time.perf_counter()
    for i in range(count):
        s = time.perf_counter()
        proc.stdin.write(ping(i, framing))
        read_exact_replies(fd, counter, i + 2, deadline)
        lat.append(time.perf_counter() - s)
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    reap(proc)
    return count / elapsed, lat


def pct(values: list[float], p: float) -> float:
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="the auth-sidecar executable")
    ap.add_argument("--runs", type=int, default=200, help="cold-start runs (default 200)")
    ap.add_argument("--count", type=int, default=200_000, help="pings in the throughput run (default 200000)")
    ap.add_argument("--lockstep", type=int, default=20_000, help="lock-step round trips (default 20000)")
    ap.add_argument("--framing", default="ndjson,lsp", help="comma-separated: ndjson, lsp (default both)")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        print(f"no executable at {binary} (build with `swift build -c release` or pass --binary)", file=sys.stderr)
        return 2
    framings = [f.strip() for f in a.framing.split(",") if f.strip()]
    for f in framings:
        if f not in ("ndjson", "lsp"):
            ap.error(f"unknown framing {f}")

    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL).stdout.strip() or "?"
    rows = []
    cs = cold_start(binary, a.runs, framings[0])
    rows.append((f"cold start, spawn → first `ping` reply ({a.runs} runs), median",
                 f"{statistics.median(cs) * 1e3:.2f} ms"))
    rows.append(("cold start, p90", f"{pct(cs, 90) * 1e3:.2f} ms"))
    for f in framings:
        rps, rss, errors = throughput(binary, a.count, f)
        if errors:
            print(f"warning: {errors} error replies in the {f} throughput run", file=sys.stderr)
        rows.append((f"pipelined `ping` throughput, {f}, {a.count:,} requests on one pipe",
                     f"{rps:,.0f} req/s"))
        rows.append((f"max RSS of the sidecar during the {f} throughput run", f"{rss / 1024:.1f} MiB"))
    for f in framings:
        rts, lat = lockstep(binary, a.lockstep, f)
        rows.append((f"lock-step round trips, {f} ({a.lockstep:,} pings)",
                     f"{rts:,.0f} /s (median {statistics.median(lat) * 1e6:.0f} µs, "
                     f"p99 {pct(lat, 99) * 1e6:.0f} µs)"))

    print(f"auth-sidecar {version} — {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} "
          f"{platform.release()}, {datetime.date.today().isoformat()}")
    print()
    print("| measurement | result |")
    print("|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
