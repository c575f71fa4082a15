#!/usr/bin/env python3
"""A fresh process's cached token with no Python on the timed path: shell loops.

`auth-sidecar token` (no agent, the default configuration file), the stdio mode answering one
cached `acquireTokenSilent` and the floor (a static Swift hello world built as scripts/build.sh
builds the sidecar, benchlib/floor.py) each run N times in a bash loop, nothing else in it
(a `| cat` would add a process of its own to every run and flatten every ratio toward 1):

    for i in $(seq N); do CMD <REQUEST >/dev/null; done

bash times each loop (`$EPOCHREALTIME`); Python only sets up (the bundled mock, alice signed in,
benchlib/mock.py) and prints. The three loops take turns, ROUNDS times, and the figure of each
is the median of its rounds' per-run times. Prints the machine and a Markdown table on stdout.

Usage: python3 benchmarks/startup_loops.py [--binary PATH] [--runs N] [--rounds R]
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys

from benchlib.floor import build_hello
from benchlib.harness import DEFAULT_BINARY, binary_version, machine, missing_binary
from benchlib.mock import SILENT, MockSession
from benchlib.report import markdown_table, ms, ratio

LOOP = """
set -e
start=$EPOCHREALTIME
for i in $(seq {runs}); do {command} <{request} >/dev/null; done
end=$EPOCHREALTIME
echo "$start $end"
times
"""


def loop_per_run(command: list[str], request: str, runs: int, env: dict) -> tuple[float, float]:
    """Seconds per run of `command` in a bash loop of `runs` (bash's clock, not Python's): the
    elapsed time, and the CPU time (user + system) of the loop's children from bash's `times`,
    which a loaded machine disturbs far less."""
    script = LOOP.format(runs=runs, command=shlex.join(command), request=shlex.quote(request))
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.strip()[-300:]}")
    clock, _, children = done.stdout.strip().splitlines()
    start, end = (float(x) for x in clock.split())
    return (end - start) / runs, sum(bash_duration(x) for x in children.split()) / runs


def bash_duration(text: str) -> float:
    """`0m1.234s` (bash's `times`) in seconds."""
    minutes, seconds = text.rstrip("s").split("m")
    return int(minutes) * 60 + float(seconds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=200, help="runs in each loop (default 200)")
    ap.add_argument("--rounds", type=int, default=6, help="times the three loops take turns (default 6)")
    a = ap.parse_args()
    problem = missing_binary(a.binary)
    if problem:
        print(f"startup_loops: {problem}", file=sys.stderr)
        return 2
    bench = MockSession(a.binary)
    try:
        bench.start_mock()
        bench.sign_in()
        env = bench.verb_env()  # the verb reads the default configuration file
        hello = build_hello(bench.tmp)
        silent = os.path.join(bench.tmp, "silent.request")
        line = os.path.join(bench.tmp, "line.request")
        with open(silent, "wb") as f:
            f.write(SILENT % 1)
        with open(line, "wb") as f:
            f.write(b"{}\n")
        commands = {
            "token": ([bench.binary, "token", "--no-agent"], "/dev/null"),
            "stdio": ([bench.binary, "--config", bench.config_file(bench.cache)], silent),
            "hello": ([hello], line),
        }
        # The answers are checked once, outside the timed loops.
        token = subprocess.run(commands["token"][0], env=env, capture_output=True, stdin=subprocess.DEVNULL)
        with open(silent, "rb") as request:
            stdio = subprocess.run(commands["stdio"][0], env=env, capture_output=True, stdin=request)
        if token.returncode != 0 or not token.stdout.startswith(b"eyJ") or b'"fromCache":true' not in stdio.stdout:
            print(f"startup_loops: no cached token: {token.stderr[-200:]!r} {stdio.stdout[:200]!r}", file=sys.stderr)
            return 1
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for n in range(a.rounds):
            order = list(commands) if n % 2 == 0 else list(reversed(commands))
            for name in order:
                command, request = commands[name]
                elapsed, used = loop_per_run(command, request, a.runs, env)
                times[name].append(elapsed)
                cpu[name].append(used)
            print(f"[startup_loops] round {n + 1}/{a.rounds}", file=sys.stderr)
        median = {name: statistics.median(values) for name, values in times.items()}
        cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
        print(f"startup loops — {machine()}, auth-sidecar {binary_version(a.binary)}, "
              f"{a.rounds} rounds of {a.runs} runs each, alternating")
        print()
        for row in markdown_table(["figure", "elapsed per run (median of rounds)", "CPU per run (user + system)"], [
                ("`auth-sidecar token` (no agent), cached token", ms(median["token"]), ms(cpu_median["token"])),
                ("the stdio mode, one cached `acquireTokenSilent`", ms(median["stdio"]), ms(cpu_median["stdio"])),
                ("the floor: a static Swift hello world answering one line", ms(median["hello"]), ms(cpu_median["hello"])),
                ("**`token` ÷ the floor** (#46: ≤ 1.31x)", ratio(median["token"], median["hello"]),
                 ratio(cpu_median["token"], cpu_median["hello"])),
                ("**`token` ÷ the stdio mode** (≤ 1.0x)", ratio(median["token"], median["stdio"]),
                 ratio(cpu_median["token"], cpu_median["stdio"])),
                ("each round's `token` ÷ floor",
                 ", ".join(ratio(t, h) for t, h in zip(times["token"], times["hello"])),
                 ", ".join(ratio(t, h) for t, h in zip(cpu["token"], cpu["hello"])))]):
            print(row)
        return 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
