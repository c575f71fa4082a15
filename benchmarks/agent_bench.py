#!/usr/bin/env python3
"""The agent's figures (issue #11), one run against the bundled mock, on one machine:

1. a fresh stdio process asking one silent token, 10,001 accounts in the cache: standalone
   vs forwarded to a running agent (spawn to exit, median);
2. `auth-sidecar token` (the shell verb, when this build has it) with and without the agent;
3. 8 processes through one agent on an expired token: token requests the mock counted;
4. the agent's resident memory with 100 connected clients idle (each made one call);
5. N lock-step clients on `agent.sock` (issue 41): replies/s, p50/p99/max, clients that never
   got a token, refusals, the agent's stderr lines; 6. the same on `forward.sock`;
7. 100 slow-loris connections: a client timed 20 times on each socket.

    python3 benchmarks/agent_bench.py [--binary PATH] [--runs N]
    python3 benchmarks/agent_bench.py --load-only [--clients 1,64,200,256] [--seconds 30] [--max-connections N]

Set-up (mock, sign-in through the scripted browser, synthetic accounts) is token_bench.py's
(benchlib/mock.py, benchlib/cachefile.py).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

from benchlib import agent_load
from benchlib.cachefile import add_synthetic_accounts, expire_access_tokens
from benchlib.harness import DEFAULT_BINARY, machine, spawn_to_exit, vmrss_kib
from benchlib.mock import CHILDREN, MockSession
from benchlib.report import markdown_table

SILENT_LINE = b'{"jsonrpc":"2.0","id":1,"method":"acquireTokenSilent","params":{"scopes":["User.Read"]}}\n'


def median_ms(samples) -> float:
    return statistics.median(samples) * 1000


class AgentBench:
    def __init__(self, a):
        self.bench = MockSession(a.binary)
        self.runs = a.runs
        self.args = a
        self.socket = os.path.join(self.bench.tmp, "agent", "agent.sock")
        self.rows: list[tuple[str, str, str]] = []

    def env(self, agent: bool) -> dict:
        e = dict(self.bench.child_env)
        e["AUTH_SIDECAR_SOCK"] = self.socket
        if not agent:
            e["AUTH_SIDECAR_NO_AGENT"] = "1"
        return e

    def start_agent(self, cache: str) -> subprocess.Popen:
        b = self.bench
        # 100 idle clients are measured: above the former default cap of 64 connections.
        return self.spawn_agent(["--config", b.config_file(cache), "--max-connections", "128"],
                                os.path.join(b.tmp, "agent.log"), self.socket)

    def spawn_agent(self, flags: list[str], log: str, ready: str) -> subprocess.Popen:
        """The agent on the bench's socket with `flags`, stderr appended to `log`, once `ready`
        (a socket path) exists."""
        agent = subprocess.Popen([self.bench.binary, "agent", "--socket", self.socket, *flags],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "ab"),
                                 env=self.env(True))
        CHILDREN.append(agent)
        deadline = time.monotonic() + 10
        while not os.path.exists(ready):
            if time.monotonic() > deadline or agent.poll() is not None:
                raise RuntimeError("the agent did not start")
            time.sleep(0.01)
        return agent

    def fresh_silent(self, cache: str, agent: bool) -> float:
        argv = [self.bench.binary, "--config", self.bench.config_file(cache)]
        samples = []
        for _ in range(self.runs):
            elapsed, out, code = spawn_to_exit(argv, self.env(agent), SILENT_LINE)
            if b'"fromCache":true' not in out:
                raise RuntimeError(f"no cached token (agent={agent}): {out[:300]!r}")
            samples.append(elapsed)
        return median_ms(samples)

    def token_verb(self, cache: str, agent: bool) -> float | None:
        argv = [self.bench.binary, "token", "--config", self.bench.config_file(cache)]
        _, out, code = spawn_to_exit(argv, self.env(agent))
        if code != 0:
            return None  # this build has no `token` verb (or it failed): no figure
        return median_ms([spawn_to_exit(argv, self.env(agent))[0] for _ in range(self.runs)])

    def refresh_storm(self) -> int:
        b = self.bench
        expire_access_tokens(b.cache)
        before = b.admin.counts().get("token:refresh_token", 0)
        argv = [b.binary, "--config", b.config_file(b.cache)]
        threads = [threading.Thread(target=spawn_to_exit, args=(argv, self.env(True), SILENT_LINE)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return b.admin.counts().get("token:refresh_token", 0) - before

    def idle_clients_rss(self, agent: subprocess.Popen, count: int = 100) -> int:
        clients = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.socket)
            s.sendall(SILENT_LINE)
            reply = s.makefile("rb").readline()
            if b"tooManyConnections" in reply:
                raise SystemExit("agent_bench: the agent refused a client (its connection cap)")
            clients.append(s)
        time.sleep(0.5)
        rss = vmrss_kib(agent.pid)
        for s in clients:
            s.close()
        return rss

    def run(self) -> None:
        b = self.bench
        b.start_mock()
        b.sign_in()
        add_synthetic_accounts(b.cache, b.big, 10_000, b.url)
        standalone = self.fresh_silent(b.big, agent=False)
        verb_alone = self.token_verb(b.big, agent=False)
        agent = self.start_agent(b.big)
        forwarded = self.fresh_silent(b.big, agent=True)
        verb_agent = self.token_verb(b.big, agent=True)
        self.rows.append(("1. fresh stdio process, one silent token, 10,001 accounts (median)",
                          f"{standalone:.1f} ms standalone", f"{forwarded:.1f} ms through the agent"))
        if verb_alone is not None and verb_agent is not None:
            self.rows.append(("2. `auth-sidecar token`, 10,001 accounts (median spawn to exit)",
                              f"{verb_alone:.1f} ms standalone", f"{verb_agent:.1f} ms with the agent"))
        big_rss = self.idle_clients_rss(agent)
        agent.terminate()
        agent.wait(timeout=20)
        storm_agent = self.start_agent(b.cache)
        refreshes = self.refresh_storm()
        one_rss = self.idle_clients_rss(storm_agent, count=1)
        rss = self.idle_clients_rss(storm_agent)
        self.rows.append(("3. 8 processes through one agent, expired token", f"{refreshes} token request(s)", "target 1"))
        self.rows.append(("4. agent RSS, 1 account: 1 client / 100 clients connected and idle",
                          f"{one_rss / 1024:.1f} MiB / {rss / 1024:.1f} MiB", "target <= 40 MB"))
        self.rows.append(("4b. the same with 10,001 accounts (a 30 MB cache in memory), 100 clients",
                          f"{big_rss / 1024:.1f} MiB", ""))
        storm_agent.terminate()
        storm_agent.wait(timeout=20)

    def start_load_agent(self) -> tuple[subprocess.Popen, str]:
        """The agent with its forward socket (forwardScopes: the bench's scopes), default log
        level, stderr to a file of its own."""
        b = self.bench
        config = os.path.join(b.tmp, "load-config.json")
        with open(b.config_file(b.cache)) as f:
            settings = json.load(f)
        settings["forwardScopes"] = settings["scopes"]
        with open(config, "w") as f:
            json.dump(settings, f)
        log = os.path.join(b.tmp, f"load-agent-{time.monotonic_ns()}.log")
        cap = ["--max-connections", str(self.args.max_connections)] if self.args.max_connections else []
        return self.spawn_agent(["--forward", "--config", config, *cap], log, self.forward_socket), log

    @property
    def forward_socket(self) -> str:
        return os.path.join(os.path.dirname(self.socket), "forward.sock")

    def load(self) -> None:
        """Figures 5-7: a fresh agent per run, so each run's stderr is its own."""
        client = agent_load.compiled_client(self.bench.tmp)
        for name, number in (("agent.sock", 5), ("forward.sock", 6)):
            for clients in self.args.clients:
                agent, log = self.start_load_agent()
                path = self.socket if name == "agent.sock" else self.forward_socket
                load = agent_load.loadavg()
                r = agent_load.lock_step(path, clients, self.args.seconds, client)
                alive = agent.poll() is None
                agent.terminate()
                agent.wait(timeout=30)
                self.rows.append((
                    f"{number}. {clients} lock-step clients on {name}, {self.args.seconds:g} s (load {load})",
                    f"{r['replies_per_s']:,.0f} replies/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
                    f"max {r['max_ms']:.1f} ms",
                    f"{r['starved']} of {clients} never served, {r['refusals']} refusals, {r['errors']} errors, "
                    f"{agent_load.stderr_lines(log)} stderr lines{'' if alive else ', THE AGENT DIED'}"))
        agent, log = self.start_load_agent()
        for name, path in (("agent.sock", self.socket), ("forward.sock", self.forward_socket)):
            served, slowest = agent_load.slow_loris(path)
            self.rows.append((f"7. 100 slow-loris connections on {name}: a client asks a token, 20 tries",
                              f"{served} of 20 within 1 s", f"slowest {slowest * 1000:.0f} ms"))
        agent.terminate()
        agent.wait(timeout=30)

    def report(self) -> None:
        print(f"agent benchmark — {machine()}, {self.runs} runs per median")
        for line in markdown_table(None, self.rows):
            print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=DEFAULT_BINARY)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--load-only", action="store_true", help="only figures 5-7 (the agent under load)")
    parser.add_argument("--no-load", action="store_true", help="without figures 5-7")
    parser.add_argument("--clients", type=lambda v: [int(n) for n in v.split(",")], default=[1, 64, 200, 256],
                        help="figures 5 and 6: the client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=30, help="figures 5 and 6: each run's length")
    parser.add_argument("--max-connections", type=int, help="figures 5-7: the agent's --max-connections (default: its own)")
    bench = AgentBench(parser.parse_args())
    try:
        if bench.args.load_only:
            bench.bench.start_mock()
            bench.bench.sign_in()
        else:
            bench.run()
        if not bench.args.no_load:
            bench.load()
    finally:
        bench.bench.cleanup()
    bench.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
