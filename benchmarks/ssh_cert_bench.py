#!/usr/bin/env python3
"""`auth-sidecar ssh-cert --key KEY` with a cached, valid certificate (what `ssh`'s `Match exec`
or a `ProxyCommand` would pay per connection), side by side with `auth-sidecar token` with a
cached token: both fresh processes, spawn → exit, no agent, alternating. Target: ssh-cert
<= 1.5x token.

Reuses token_bench.py's set-up (benchlib/mock.py: the bundled mock, alice signed in through
the scripted browser); the configuration adds sshCertScope (the mock is a custom authority).
Prints a machine line and a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/ssh_cert_bench.py [--binary PATH] [--runs N] [--keep]
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

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"
TARGET = 1.5


def timed(argv: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0, p


def ssh_env(bench: MockSession) -> dict:
    """The verbs' environment, its default configuration file with sshCertScope added."""
    env = bench.verb_env()
    path = os.path.join(env["XDG_CONFIG_HOME"], "auth-sidecar", "config.json")
    with open(path) as f:
        config = json.load(f)
    config["sshCertScope"] = PAS
    with open(path, "w") as f:
        json.dump(config, f)
    return env


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
    try:
        bench.start_mock()
        bench.sign_in()
        env = ssh_env(bench)
        key = os.path.join(bench.tmp, "id_rsa")
        subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-f", key], check=True,
                       stdin=subprocess.DEVNULL)
        token = [bench.binary, "token", "--no-agent"]
        ssh_cert = [bench.binary, "ssh-cert", "--key", key, "--no-agent"]
        for argv in (token, ssh_cert):  # warm-up, not counted: the certificate is fetched here
            _, p = timed(argv, env)
            if p.returncode != 0:
                raise RuntimeError(f"{argv[1]} failed: {p.stderr.strip()}")
        log(f"{a.runs} runs each, alternating", who="ssh_cert_bench")
        tokens, certs, failures = [], [], []
        token_requests, cert_requests = {}, {}
        for _ in range(a.runs):
            t, p = bench.counted(token_requests, lambda: timed(token, env))
            tokens.append(t)
            if p.returncode != 0 or not p.stdout.strip():
                failures.append(p.stderr.strip())
            t, p = bench.counted(cert_requests, lambda: timed(ssh_cert, env))
            certs.append(t)
            if p.returncode != 0 or p.stdout.strip() != key + "-cert.pub":
                failures.append(p.stderr.strip())
        t, c = statistics.median(tokens), statistics.median(certs)
        print(f"auth-sidecar ssh-cert — {machine()}, {a.runs} runs each, alternating")
        print()
        for line in markdown_table(["figure", "`ssh-cert --key KEY`", "`token`", "ratio (ssh-cert ÷ token)"], [
                ("fresh process spawn → exit, cached and valid, no agent, median", ms(c), ms(t),
                 f"{ratio(c, t)} (target <= {TARGET}x)"),
                ("p90", ms(pct(certs, 90)), ms(pct(tokens, 90)), ""),
                ("network requests per run", net(cert_requests, a.runs), net(token_requests, a.runs), "")]):
            print(line)
        if failures:
            print(f"\n{len(failures)} runs failed: {failures[0]}")
        return 1 if failures or c > TARGET * t else 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
