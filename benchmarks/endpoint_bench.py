#!/usr/bin/env python3
"""The managed-identity endpoint under concurrent clients of two scopes while one scope's
refresh is stalled by the service (the mock's latency fault on its token endpoint).

`auth-sidecar managed-identity --no-agent` is started on the bundled mock with alice signed in
and Graph's token cached. Then, at once, C/2 clients ask for Storage (no token cached: one
refresh, held back DELAY ms by the mock) and C/2 clients ask for Graph (cached), each one request
over its own connection. Printed: how long the Graph clients waited (p50, p99, max) and the
Storage clients (the stall), the token-endpoint requests the mock counted (one refresh per token),
the machine. Before the endpoint served requests on a pool of engine connections (#34) it held one
lock around one connection: every Graph client waited the stall out.

Prints a machine line and a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/endpoint_bench.py [--binary PATH] [--clients C] [--delay-ms D] [--keep]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from benchlib.harness import DEFAULT_BINARY, log, machine, pct
from benchlib.mock import MockSession
from benchlib.report import markdown_table, ms

GRAPH = "https://graph.microsoft.com"
STORAGE = "https://storage.azure.com"


def get(endpoint: str, secret: str, resource: str) -> tuple[float, int]:
    """Seconds and HTTP status of one token request."""
    url = endpoint + "?api-version=2019-08-01&resource=" + urllib.parse.quote(resource, safe="")
    request = urllib.request.Request(url, headers={"X-IDENTITY-HEADER": secret})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    return time.perf_counter() - t0, status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--delay-ms", type=int, default=3000)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        print(f"endpoint_bench: no binary at {a.binary} (scripts/build.sh makes it)", file=sys.stderr)
        return 2
    bench = MockSession(a.binary, keep=a.keep)
    endpoint = None
    try:
        bench.start_mock()
        bench.sign_in()
        env = bench.verb_env()
        endpoint = subprocess.Popen([bench.binary, "managed-identity", "--no-agent"], env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = endpoint.stdout.read().splitlines()
        url = lines[0].split("=", 1)[1]
        secret = lines[1].split("=", 1)[1]
        _, status = get(url, secret, GRAPH)  # Graph's token cached in the endpoint's engine
        if status != 200:
            raise RuntimeError(f"the endpoint answered {status} for Graph")
        bench.admin.fault(endpoint="token", type="latency", delay_ms=a.delay_ms, times=1)
        before = bench.counts().get("token", 0)
        results: dict[str, list[tuple[float, int]]] = {GRAPH: [], STORAGE: []}
        lock = threading.Lock()

        def client(resource: str) -> None:
            outcome = get(url, secret, resource)
            with lock:
                results[resource].append(outcome)

        log(f"{a.clients} clients, half for Storage (its refresh stalled {a.delay_ms} ms), half for Graph (cached)",
            "endpoint_bench")
        stalled = [threading.Thread(target=client, args=(STORAGE,)) for _ in range(a.clients // 2)]
        for t in stalled:
            t.start()
        time.sleep(0.3)  # the refresh is waiting on the token endpoint now
        cached = [threading.Thread(target=client, args=(GRAPH,)) for _ in range(a.clients - a.clients // 2)]
        for t in cached:
            t.start()
        for t in stalled + cached:
            t.join()
        refreshes = bench.counts().get("token", 0) - before
        rows = []
        for resource, label in ((GRAPH, "Graph (cached) while Storage's refresh is stalled"),
                                (STORAGE, f"Storage (its one refresh held {a.delay_ms} ms)")):
            seconds = [s for s, _ in results[resource]]
            ok = sum(1 for _, st in results[resource] if st == 200)
            rows.append([label, f"{ok}/{len(seconds)}", ms(pct(seconds, 50)), ms(pct(seconds, 99)), ms(max(seconds))])
        print(f"machine: {machine()}")
        print("\n".join(markdown_table(["clients", "200 OK", "p50", "p99", "max"], rows)))
        print(f"\ntoken endpoint requests during the run: {refreshes} (one refresh for Storage's {a.clients // 2} clients)")
        graph_max = max(s for s, _ in results[GRAPH])
        print(f"Graph's slowest client: {ms(graph_max)} (target: within 50 ms)")
        return 0
    finally:
        if endpoint is not None and endpoint.poll() is None:
            endpoint.terminate()
            endpoint.wait(10)
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
