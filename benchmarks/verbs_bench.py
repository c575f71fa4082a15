#!/usr/bin/env python3
"""`auth-sidecar token` (the shell verb) from spawn to exit, with a cached token and no agent,
side by side with MSAL for Python in a fresh process on the same cache file, and with the stdio
mode answering the same request (the two take turns going first after MSAL's run).

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
import threading
import time

from benchlib.harness import DEFAULT_BINARY, machine, pct
from benchlib.mock import SILENT, MockSession, describe_reply
from benchlib.report import markdown_table, ms, net, ratio


def spawn_to_exit(args: list[str], env: dict, stdin: bytes | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Seconds from spawn to exit (output read to its end, the process reaped), and the result.

    No `timeout=` on `subprocess.run`: with one, Python reaps the child by polling with sleeps
    (0.5 ms, then 1 ms, ...), which added up to a millisecond to whichever process had not quite
    exited when its output ended; a timer kills a child that hangs instead."""
    t0 = time.perf_counter()
    with subprocess.Popen(args, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        watchdog = threading.Timer(60, child.kill)
        watchdog.start()
        try:
            out, err = child.communicate(stdin)
        finally:
            watchdog.cancel()
    return time.perf_counter() - t0, subprocess.CompletedProcess(args, child.returncode, out, err)


def verb_token(bench: MockSession, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    return spawn_to_exit([bench.binary, "token", "--no-agent"], env)


def stdio_token(bench: MockSession, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    """The same cached token through the stdio mode, measured as the verb is: spawn (the request
    on stdin, then its end) → exit."""
    return spawn_to_exit([bench.binary, "--config", bench.config_file(bench.cache)], env, SILENT % 1)


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
        def run_verb() -> None:
            t, p = bench.counted(verb_requests, lambda: verb_token(bench, env))
            verb.append(t)
            if p.returncode != 0 or not p.stdout.strip():
                failures.append(p.stderr.decode(errors="replace").strip())

        def run_stdio_exit() -> None:
            t, q = stdio_token(bench, env)
            stdio_exit.append(t)
            if b'"fromCache":true' not in q.stdout:
                failures.append(q.stdout.decode(errors="replace")[:200])

        for n in range(a.runs):
            # Whatever runs right after MSAL's Python process pays for its exit (about 0.7 ms
            # here): the verb and the stdio mode take turns going first.
            for run in ((run_verb, run_stdio_exit) if n % 2 == 0 else (run_stdio_exit, run_verb)):
                run()
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
