#!/usr/bin/env python3
"""A cached proof-of-possession token with a fresh signed HTTP request (`auth-sidecar token
--pop-method GET --pop-url URL`, printing `PoP <SHR>`), side by side with `auth-sidecar token`
with a cached bearer token: fresh processes (spawn → exit, no agent) and through the agent
(`token` connecting to a running `auth-sidecar agent`), alternating. Target: PoP <= 1.5x bearer.

The cache is encrypted with a key file (the PoP key is kept beside it, sealed under that key,
so a fresh process signs with the same key and finds the cached PoP token). Reuses
token_bench.py's set-up (benchlib/mock.py: the bundled mock, alice signed in through the
scripted browser). Prints a machine line and a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/pop_bench.py [--binary PATH] [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from benchlib.harness import DEFAULT_BINARY, log, machine, missing_binary, pct
from benchlib.mock import MockSession
from benchlib.report import markdown_table, ms, net, ratio

TARGET = 1.5
URL = "https://graph.microsoft.com/v1.0/me"


def timed(argv: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0, p


def encrypted_env(bench: MockSession) -> dict:
    """The verbs' environment, its configuration's cache encrypted with a key file."""
    env = bench.verb_env()
    path = os.path.join(env["XDG_CONFIG_HOME"], "auth-sidecar", "config.json")
    key = os.path.join(bench.tmp, "cache.key")
    with open(key, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(key, 0o600)
    with open(path) as f:
        config = json.load(f)
    config["cache"]["encryption"] = {"keyFile": key}
    config.pop("cacheProtection", None)
    with open(path, "w") as f:
        json.dump(config, f)
    return env


def series(bench, runs, bearer, pop, env, failures):
    tokens, pops, bearer_requests, pop_requests = [], [], {}, {}
    for _ in range(runs):
        t, p = bench.counted(bearer_requests, lambda: timed(bearer, env))
        tokens.append(t)
        if p.returncode != 0 or not p.stdout.strip():
            failures.append(p.stderr.strip())
        t, p = bench.counted(pop_requests, lambda: timed(pop, env))
        pops.append(t)
        if p.returncode != 0 or not p.stdout.startswith("PoP "):
            failures.append(p.stderr.strip())
    return tokens, pops, bearer_requests, pop_requests


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    problem = missing_binary(a.binary)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    bench = MockSession(a.binary, keep=a.keep)
    agent = None
    try:
        bench.start_mock()
        bench.sign_in()
        env = encrypted_env(bench)
        bearer = [bench.binary, "token", "--no-agent"]
        pop = [bench.binary, "token", "--no-agent", "--pop-method", "GET", "--pop-url", URL]
        for argv in (bearer, pop):  # warm-up, not counted: the PoP key and token are made here
            _, p = timed(argv, env)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(argv[1:])} failed: {p.stderr.strip()}")
        failures: list[str] = []
        log(f"{a.runs} runs each, alternating, fresh processes", who="pop_bench")
        fresh = series(bench, a.runs, bearer, pop, env, failures)
        socket = os.path.join(env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
        os.makedirs(os.path.dirname(socket), mode=0o700, exist_ok=True)
        agent = subprocess.Popen([bench.binary, "agent", "--socket", socket], env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(socket) and time.monotonic() < deadline:
            time.sleep(0.02)
        via = [argv[:2] + argv[3:] for argv in (bearer, pop)]  # without --no-agent
        for argv in via:
            timed(argv, env)
        log(f"{a.runs} runs each, alternating, through the agent", who="pop_bench")
        agented = series(bench, a.runs, via[0], via[1], env, failures)
        print(f"auth-sidecar token --pop-method/--pop-url — {machine()}, {a.runs} runs each, alternating")
        print()
        rows = []
        worst = 0.0
        for label, (tokens, pops, bearer_requests, pop_requests) in (("fresh process, no agent", fresh),
                                                                     ("through the agent", agented)):
            t, c = statistics.median(tokens), statistics.median(pops)
            worst = max(worst, c / t)
            rows += [(f"{label}: spawn → exit, cached and valid, median", ms(c), ms(t), f"{ratio(c, t)} (target <= {TARGET}x)"),
                     (f"{label}: p90", ms(pct(pops, 90)), ms(pct(tokens, 90)), ""),
                     (f"{label}: network requests per run", net(pop_requests, a.runs), net(bearer_requests, a.runs), "")]
        for line in markdown_table(["figure", "`token --pop-*` (PoP header)", "`token` (bearer)", "ratio (PoP ÷ bearer)"], rows):
            print(line)
        if failures:
            print(f"\n{len(failures)} runs failed: {failures[0]}")
        return 1 if failures or worst > TARGET else 0
    finally:
        if agent:
            agent.terminate()
            agent.wait(10)
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
