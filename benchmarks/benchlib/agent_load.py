"""The agent under load (agent_bench.py figures 5-7, issue 41): N lock-step clients on one of
the agent's sockets for a while, slow-loris connections while a client is timed.

Each client has its own connection and asks one cached token at a time (write, read the reply,
repeat), reconnecting after a refusal 100 ms later as a well-behaved client would. The clients
are lockstep.c's threads when a C compiler is there (Python threads measure Python's own lock:
tens of ms of p99 at 200 clients), else Python threads in a few worker processes."""
from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import threading
import time

from benchlib.harness import pct

SILENT = b'{"jsonrpc":"2.0","id":%d,"method":"acquireTokenSilent","params":{"scopes":["User.Read"]}}\n'


def _client(path: str, until: float, out: list, index: int) -> None:
    """One lock-step client: latencies (s) of the replies with a token, refusals, errors."""
    latencies: list[float] = []
    refusals = errors = 0
    rid = 0
    while time.monotonic() < until:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(30)
            s.connect(path)
            f = s.makefile("rb")
            while time.monotonic() < until:
                rid += 1
                start = time.perf_counter()
                s.sendall(SILENT % rid)
                line = f.readline()
                if not line:
                    break  # closed by the agent (evicted): connect again
                elapsed = time.perf_counter() - start
                reply = json.loads(line)
                if "result" in reply:
                    latencies.append(elapsed)
                elif reply.get("id") is None:
                    refusals += 1  # tooManyConnections
                    break
                else:
                    errors += 1
            s.close()
        except OSError:
            errors += 1
        if time.monotonic() < until:
            time.sleep(0.1)  # refused or closed: retry as a client would
    out[index] = (latencies, refusals, errors)


def _worker(path: str, clients: int, until: float, queue) -> None:
    out: list = [None] * clients
    threads = [threading.Thread(target=_client, args=(path, until, out, i)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def compiled_client(directory: str) -> str | None:
    """lockstep.c built into `directory` (cc, else clang); `None` without a compiler."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lockstep.c")
    binary = os.path.join(directory, "lockstep")
    for cc in ("cc", "clang", "gcc"):
        try:
            if subprocess.run([cc, "-O2", "-pthread", "-o", binary, source], capture_output=True).returncode == 0:
                return binary
        except OSError:
            continue
    return None


def lock_step(path: str, clients: int, seconds: float, client: str | None = None) -> dict:
    """`clients` lock-step clients for `seconds` (the compiled `client` when given, else Python
    threads in worker processes): replies/s, p50/p99/max (ms), clients that never got a token,
    refusals, errors."""
    if client:
        run = subprocess.run([client, path, str(clients), str(seconds)], capture_output=True, text=True,
                             timeout=seconds + 120)
        if run.returncode != 0:
            raise RuntimeError(f"agent_bench: the lock-step client failed ({run.returncode}): {run.stderr[-300:]}")
        r = json.loads(run.stdout)
        if not r["replies"]:
            raise RuntimeError("agent_bench: no client got a token")
        return {"clients": clients, "replies_per_s": r["replies"] / seconds, "p50_ms": r["p50_us"] / 1000,
                "p99_ms": r["p99_us"] / 1000, "max_ms": r["max_us"] / 1000, "starved": r["starved"],
                "refusals": r["refusals"], "errors": r["errors"]}
    return _python_lock_step(path, clients, seconds)


def _python_lock_step(path: str, clients: int, seconds: float, processes: int = 4) -> dict:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    processes = max(1, min(processes, clients))
    until = time.monotonic() + seconds + 0.5  # the workers start within the half second
    share = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    workers = [context.Process(target=_worker, args=(path, n, until, queue)) for n in share]
    for w in workers:
        w.start()
    results = []
    for _ in workers:
        results += queue.get(timeout=seconds + 120)
    for w in workers:
        w.join()
    latencies = [v for r in results for v in r[0]]
    if not latencies:
        raise RuntimeError("agent_bench: no client got a token")
    return {
        "clients": clients, "replies_per_s": len(latencies) / (seconds + 0.5),
        "p50_ms": pct(latencies, 50) * 1000, "p99_ms": pct(latencies, 99) * 1000, "max_ms": max(latencies) * 1000,
        "starved": sum(1 for r in results if not r[0]), "refusals": sum(r[1] for r in results),
        "errors": sum(r[2] for r in results),
    }


def slow_loris(path: str, connections: int = 100, tries: int = 20) -> tuple[int, float]:
    """`connections` connections sending one byte a second, never a whole message; then
    `tries` times a client connects and asks a token: how many got it within 1 s, the slowest."""
    stop = threading.Event()
    sockets: list[socket.socket] = []

    def trickle() -> None:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            sockets.append(s)
            while not stop.wait(1.0):
                s.sendall(b" ")  # whitespace: never a complete message
        except OSError:
            return

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(connections)]
    for t in threads:
        t.start()
    time.sleep(2)
    served, slowest = 0, 0.0
    try:
        for _ in range(tries):
            start = time.perf_counter()
            try:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(5)
                s.connect(path)
                s.sendall(SILENT % 1)
                reply = json.loads(s.makefile("rb").readline() or b"{}")
                s.close()
            except (OSError, ValueError):
                reply = {}
            elapsed = time.perf_counter() - start
            slowest = max(slowest, elapsed)
            served += "result" in reply and elapsed <= 1.0
            time.sleep(0.2)
    finally:
        stop.set()
        for s in sockets:
            s.close()
    return served, slowest


def stderr_lines(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def loadavg() -> str:
    """The 1-minute load average (the machine is shared: figures move with it)."""
    return f"{os.getloadavg()[0]:.2f}"
