"""bench.py's figures: the JSON-RPC engine of the real binary over real pipes (cold start,
pipelined `ping` throughput with the sidecar's max RSS, lock-step round trips), NDJSON or LSP."""
from __future__ import annotations

import os
import select
import subprocess
import threading
import time

from .harness import reap

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


def read_exact_replies(fd: int, counter: ReplyCounter, want: int, deadline: float) -> None:
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
            code, _ = reap(proc, timeout=30)
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
        code, rss = reap(proc, timeout=30)
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
    reap(proc, timeout=30)
    return count / elapsed, lat
