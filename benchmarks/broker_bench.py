#!/usr/bin/env python3
"""A cached token through the Linux identity broker (`broker: "auto"`) side by side with the same
kind of token from the file cache: `auth-sidecar token` in a fresh process (no agent), and
`token` through a running agent. Plus what a process that does not use the broker pays for
the broker's code: `token --no-agent` (file cache) against a baseline binary built without it.

The broker is the tests' stand-in (Tests/e2e_auth/broker_standin.py, not Microsoft's) on a
private session bus (`dbus-run-session`): its answers cost what a Python D-Bus service costs,
so the broker column is the sidecar's D-Bus path plus that service. The file-cache column is
token_bench.py's set-up (benchlib/mock.py: the bundled mock, alice signed in through the
scripted browser). Targets (issue #36): the broker path at most 2 ms more per fresh process;
no measurable start-up cost without the broker. Prints a machine line and a Markdown table on
stdout; progress on stderr.

Usage: python3 benchmarks/broker_bench.py [--binary PATH] [--baseline PATH] [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from benchlib.harness import DEFAULT_BINARY, REPO, log, machine, missing_binary, pct
from benchlib.mock import CHILDREN, SILENT, MockSession
from benchlib.report import add_counts, counts_delta, markdown_table, ms, net

from broker_session import StandInBroker, missing  # Tests/e2e_auth (benchlib.mock puts it on sys.path)

MAIN_BINARY = os.path.join(os.path.dirname(REPO), "main", ".build", "release", "auth-sidecar")


def timed(argv: list[str], env: dict, stdin: bytes | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, input=stdin, capture_output=True, timeout=60,
                       stdin=None if stdin is not None else subprocess.DEVNULL)
    return time.perf_counter() - t0, p


def libdbus_mapped(binary: str, config: str, env: dict) -> bool:
    """Whether a stdio process (broker off) has libdbus mapped once it answered a cached token."""
    p = subprocess.Popen([binary, "--config", config], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    try:
        assert p.stdin and p.stdout
        p.stdin.write(SILENT % 1)
        p.stdin.flush()
        p.stdout.readline()
        with open(f"/proc/{p.pid}/maps") as f:
            return "libdbus-1" in f.read()
    finally:
        p.kill()
        p.wait()


class Agent:
    def __init__(self, binary: str, env: dict, tmp: str):
        self.log_path = os.path.join(tmp, "agent.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen([binary, "agent"], env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        CHILDREN.append(self.process)
        deadline = time.monotonic() + 15
        while "agent listening" not in open(self.log_path, errors="replace").read():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("the agent did not start: " + open(self.log_path, errors="replace").read())
            time.sleep(0.02)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()


def difference(x: float) -> str:
    return ("+" if x >= 0 else "−") + ms(abs(x))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--baseline", default=MAIN_BINARY if os.access(MAIN_BINARY, os.X_OK) else None,
                    help="a build without the broker's code, for the start-up figure (default: ../main's release build)")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if message := missing_binary(a.binary):
        print(message, file=sys.stderr)
        return 2
    if absent := missing():
        print(f"missing {absent}", file=sys.stderr)
        return 2
    bench = MockSession(a.binary, keep=a.keep)
    broker = None
    agent = None
    try:
        bench.start_mock()
        bench.sign_in()
        broker = StandInBroker(bench.tmp)
        env = dict(bench.verb_env(), DBUS_SESSION_BUS_ADDRESS=broker.address)
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        log("signing in alice@contoso.com with the stand-in broker", who="broker_bench")
        login = subprocess.run([a.binary, "login", "--no-agent", "--broker", "auto"], env=env, capture_output=True,
                               text=True, timeout=60, stdin=subprocess.DEVNULL)
        if login.returncode != 0:
            raise RuntimeError("broker sign-in failed: " + login.stderr)
        file_token = [a.binary, "token", "--no-agent"]
        broker_token = [a.binary, "token", "--no-agent", "--broker", "auto"]
        baseline_token = [a.baseline, "token", "--no-agent"] if a.baseline else None
        for argv in (file_token, broker_token, baseline_token):  # warm-up, not counted
            if argv:
                timed(argv, env)
        fresh = {"file": [], "broker": [], "baseline": []}
        requests: dict = {}
        failures: list[str] = []
        calls_before = len(broker.calls("acquireTokenSilently"))
        log(f"{a.runs} fresh processes each, alternating", who="broker_bench")
        for _ in range(a.runs):
            t, p = timed(file_token, env)
            fresh["file"].append(t)
            failures += [p.stderr.decode()] if p.returncode else []
            before = bench.counts()
            t, p = timed(broker_token, env)
            add_counts(requests, counts_delta(before, bench.counts()))
            fresh["broker"].append(t)
            failures += [p.stderr.decode()] if p.returncode or b"standin" not in p.stdout else []
            if baseline_token:
                t, p = timed(baseline_token, env)
                fresh["baseline"].append(t)
                failures += [p.stderr.decode()] if p.returncode else []
        broker_calls = len(broker.calls("acquireTokenSilently")) - calls_before
        log("the same through a running agent", who="broker_bench")
        agent = Agent(a.binary, env, bench.tmp)
        via_agent = {"file": [], "broker": []}
        agent_file, agent_broker = [a.binary, "token"], [a.binary, "token", "--broker", "auto"]
        timed(agent_file, env)
        timed(agent_broker, env)
        for _ in range(a.runs):
            t, p = timed(agent_file, env)
            via_agent["file"].append(t)
            failures += [p.stderr.decode()] if p.returncode else []
            t, p = timed(agent_broker, env)
            via_agent["broker"].append(t)
            failures += [p.stderr.decode()] if p.returncode or b"standin" not in p.stdout else []
        dbus_off = libdbus_mapped(a.binary, bench.config_file(bench.cache), env)
        f, b = statistics.median(fresh["file"]), statistics.median(fresh["broker"])
        af, ab = statistics.median(via_agent["file"]), statistics.median(via_agent["broker"])
        rows = [
            ("`auth-sidecar token --no-agent`, cached token, spawn → exit, median", ms(f), ms(b), difference(b - f)),
            ("the same, p10 (the least disturbed by other processes)", ms(pct(fresh["file"], 10)), ms(pct(fresh["broker"], 10)),
             difference(pct(fresh["broker"], 10) - pct(fresh["file"], 10))),
            ("the same, p90", ms(pct(fresh["file"], 90)), ms(pct(fresh["broker"], 90)), ""),
            ("`auth-sidecar token` through a running agent, median", ms(af), ms(ab), difference(ab - af)),
            ("the same, p10", ms(pct(via_agent["file"], 10)), ms(pct(via_agent["broker"], 10)),
             difference(pct(via_agent["broker"], 10) - pct(via_agent["file"], 10))),
            ("network requests per broker run", "", net(requests, a.runs), ""),
            ("broker `acquireTokenSilently` calls per broker run", "", f"{broker_calls / a.runs:.1f}", ""),
        ]
        if fresh["baseline"]:
            base = statistics.median(fresh["baseline"])
            rows.append(("broker off: `token --no-agent` (file cache), this build vs the baseline build, median",
                         ms(f), f"baseline {ms(base)}", difference(f - base)))
        rows.append(("broker off: libdbus mapped in a stdio process after a cached token", "no" if not dbus_off else "YES", "", ""))
        load = open("/proc/loadavg").read().split()[:3]
        print(f"auth-sidecar through the identity broker (stand-in) vs the file cache — {machine()}, "
              f"{a.runs} runs each, alternating, load average {' '.join(load)}")
        print()
        for line in markdown_table(["figure", "file cache (broker off)", "broker (auto, stand-in)", "difference"], rows):
            print(line)
        if failures:
            print(f"\n{len(failures)} runs failed: {failures[0][:300]}")
        return 1 if failures or dbus_off else 0
    finally:
        if agent:
            agent.close()
        if broker:
            broker.stop()
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
