#!/usr/bin/env python3
"""`auth-sidecar token` (the shell verb) from spawn to exit, with a cached token and no agent,
side by side with MSAL for Python in a fresh process on the same cache file.

Reuses token_bench.py's set-up (benchlib/mock.py: the bundled mock, alice signed in through
the scripted browser, the MSAL script). Prints a machine line and a Markdown table on stdout;
progress on stderr.

Usage: python3 benchmarks/verbs_bench.py [--binary PATH] [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from benchlib.harness import DEFAULT_BINARY, machine, pct
from benchlib.mock import SILENT, MockSession, describe_reply
from benchlib.report import markdown_table, ms, net, ratio


def verb_token(bench: MockSession, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run([bench.binary, "token", "--no-agent"], env=env, capture_output=True, text=True, timeout=60)
    return time.perf_counter() - t0, p


def stdio_token(bench: MockSession, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    """The same cached token through the stdio mode, measured as the verb is: spawn (the request
    on stdin, then its end) → exit, through the same `subprocess.run`."""
    t0 = time.perf_counter()
    p = subprocess.run([bench.binary, "--config", bench.config_file(bench.cache)], input=SILENT % 1, env=env,
                       capture_output=True, timeout=60)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    bench = MockSession(a.binary, keep=a.keep)
    try:
        bench.start_mock()
        bench.sign_in()
        env = bench.verb_env()  # the verb reads the default configuration file, as a user's shell would
        verb_token(bench, env)          # warm-up, not counted
        bench.msal_fresh(bench.cache)
        verb, stdio, stdio_exit, msal, failures = [], [], [], [], []
        verb_requests, msal_requests = {}, {}
        for _ in range(a.runs):
            t, p = bench.counted(verb_requests, lambda: verb_token(bench, env))
            verb.append(t)
            if p.returncode != 0 or not p.stdout.strip():
                failures.append(p.stderr.strip())
            t, q = stdio_token(bench, env)
            stdio_exit.append(t)
            if b'"fromCache":true' not in q.stdout:
                failures.append(q.stdout.decode(errors="replace")[:200])
            t, r = bench.sidecar_fresh(bench.cache)
            stdio.append(t)
            if not r.get("result", {}).get("fromCache"):
                failures.append(describe_reply(r))
            t, res, _ = bench.counted(msal_requests, lambda: bench.msal_fresh(bench.cache))
            msal.append(t)
            if not res.get("ok"):
                failures.append(res.get("error"))
        v, m = statistics.median(verb), statistics.median(msal)
        print(f"auth-sidecar verbs — {machine()}, {a.runs} runs each, alternating")
        print()
        for line in markdown_table(["figure", "auth-sidecar", "MSAL for Python", "ratio"], [
                ("`auth-sidecar token` (no agent) spawn → exit, cached token, median", ms(v),
                 f"{ms(m)} (fresh `python3` script → result)", ratio(m, v)),
                ("`token` p90", ms(pct(verb, 90)), ms(pct(msal, 90)), ""),
                ("the stdio mode, the same request, spawn → exit through the same harness, median",
                 ms(statistics.median(stdio_exit)), "", ""),
                ("`token` ÷ the stdio mode, both spawn → exit (target <= 1.0x)", ratio(v, statistics.median(stdio_exit)), "", ""),
                ("the stdio mode: spawn → cached `acquireTokenSilent` reply (the process left running), median",
                 ms(statistics.median(stdio)), "", ""),
                ("network requests per run", net(verb_requests, a.runs), net(msal_requests, a.runs), "")]):
            print(line)
        if failures:
            print(f"\n{len(failures)} runs failed: {failures[0]}")
        return 1 if failures else 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
