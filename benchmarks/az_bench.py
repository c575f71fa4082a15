#!/usr/bin/env python3
"""The `az` shim (issue #24) as its callers see it: azure-identity's
`AzureCliCredential().get_token(...)` in this process (it spawns `az account get-access-token`
each call), with the `az` link first on PATH, a cached token, side by side in one run:

1. through the shim, no agent (the engine in the shim's process);
2. through the shim, with an agent running;
3. the real Azure CLI, when one is given (`--real-az PATH`, e.g. a `pip install azure-cli`
   venv's bin/az), signed in to the same mock as the same user (benchlib/real_az.py), the
   Graph token cached in its own MSAL cache.

Set-up (mock, alice signed in through the scripted browser) is token_bench.py's
(benchlib/mock.py). Prints a machine line and a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/az_bench.py [--binary PATH] [--runs N] [--real-az PATH]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib.harness import DEFAULT_BINARY, machine, missing_binary, pct
from benchlib.mock import CHILDREN, MockSession
from benchlib.real_az import environment, signed_in_config_dir
from benchlib.report import markdown_table, ms

GRAPH = "https://graph.microsoft.com/.default"


def timed_get_token(runs: int, expect_token: bool) -> tuple[list[float], list[str]]:
    from azure.identity import AzureCliCredential, CredentialUnavailableError
    samples, failures = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        error = ""
        try:
            AzureCliCredential().get_token(GRAPH)
            got = True
        except CredentialUnavailableError as e:
            got, error = False, str(e)
        samples.append(time.perf_counter() - t0)
        if got != expect_token:
            failures.append(error or "a token from an az that is not signed in")
    return samples, failures


def start_agent(bench: MockSession, env: dict) -> subprocess.Popen:
    socket = os.path.join(env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = subprocess.Popen([bench.binary, "agent"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(bench.tmp, "agent.log"), "ab"))
    CHILDREN.append(agent)
    deadline = time.monotonic() + 10
    while not os.path.exists(socket):
        if time.monotonic() > deadline:
            raise RuntimeError("the agent did not start")
        time.sleep(0.02)
    return agent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--real-az", help="a real Azure CLI's az, for figure 3")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if problem := missing_binary(a.binary):
        print(problem, file=sys.stderr)
        return 2
    bench = MockSession(a.binary, keep=a.keep)
    try:
        bench.start_mock()
        bench.sign_in()
        verb_env = bench.verb_env()
        config_home = verb_env["XDG_CONFIG_HOME"]
        runtime = verb_env["XDG_RUNTIME_DIR"]
        os.makedirs(runtime, mode=0o700)
        shim = os.path.join(bench.tmp, "az-shim", "bin")
        os.makedirs(shim)
        os.symlink(bench.binary, os.path.join(shim, "az"))
        env = dict(bench.child_env, XDG_CONFIG_HOME=config_home, XDG_RUNTIME_DIR=runtime,
                   PATH=f"{shim}:{os.environ['PATH']}")
        env.pop("AUTH_SIDECAR_SOCK", None)
        os.environ.clear()
        os.environ.update(env)  # AzureCliCredential runs az with this process's environment

        os.environ["AUTH_SIDECAR_NO_AGENT"] = "1"
        timed_get_token(2, True)  # warm-up: the Graph token is refreshed once, then cached
        alone, failures = timed_get_token(a.runs, True)
        del os.environ["AUTH_SIDECAR_NO_AGENT"]
        agent = start_agent(bench, env)
        timed_get_token(2, True)
        with_agent, more = timed_get_token(a.runs, True)
        failures += more
        agent.terminate()
        agent.wait(10)
        rows = [
            ("`AzureCliCredential().get_token` through the `az` shim, no agent, median", ms(statistics.median(alone))),
            ("same, p90", ms(pct(alone, 90))),
            ("through the `az` shim with the agent running, median", ms(statistics.median(with_agent))),
            ("same, p90", ms(pct(with_agent, 90))),
        ]
        if a.real_az:
            config_dir = signed_in_config_dir(bench)
            real_dir = tempfile.mkdtemp(prefix="real-az-", dir=bench.tmp)
            os.symlink(os.path.abspath(a.real_az), os.path.join(real_dir, "az"))
            os.environ.update(environment(bench, config_dir))
            os.environ["PATH"] = f"{real_dir}:{env['PATH']}"
            version = subprocess.run([a.real_az, "version", "--query", '"azure-cli"', "-o", "tsv"], capture_output=True,
                                     text=True, timeout=120).stdout.strip()
            timed_get_token(2, True)  # warm-up: az's Graph token refreshed once, then cached
            real, more = timed_get_token(max(5, a.runs // 5), True)
            failures += more
            rows.append((f"the real Azure CLI {version}, same user, cached token, median ({len(real)} runs)",
                         ms(statistics.median(real))))
            rows.append(("same, p90", ms(pct(real, 90))))
        print(f"az shim — {machine()}, {a.runs} runs each")
        print()
        for line in markdown_table(["figure", "time"], rows):
            print(line)
        if failures:
            print(f"\n{len(failures)} runs failed: {failures[0]}")
            return 1
        return 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
