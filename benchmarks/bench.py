#!/usr/bin/env python3
"""Benchmark the auth-sidecar JSON-RPC engine over real pipes.

Prints a Markdown table (see benchmarks/README.md for what each figure means):
  - cold start: spawn to the first `ping` reply (median, p90) over --runs runs;
  - pipelined `ping` throughput over one pipe (a writer thread writes --count
    pings while a reader thread counts replies), NDJSON and LSP framing;
  - lock-step round trips per second (send one ping, wait for its reply, repeat);
  - max RSS of the sidecar during each throughput run (from wait4 rusage).
and writes a chart of the figures, the framings side by side (--chart).

Usage: python3 benchmarks/bench.py [--binary PATH] [--runs 200] [--count 200000]
                                    [--lockstep 20000] [--framing ndjson,lsp] [--chart PATH]

The measurements are in benchlib/engine.py.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

from benchlib.chart import Group, write_chart
from benchlib.engine import cold_start, lockstep, throughput
from benchlib.harness import BENCHMARKS, DEFAULT_BINARY, binary_version, log, machine, missing_binary, pct
from benchlib.report import markdown_table

DEFAULT_CHART = os.path.join(BENCHMARKS, "bench.svg")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY,
                    help="the auth-sidecar executable (default $AUTH_SIDECAR_BIN, else .build/release/auth-sidecar, which "
                         "scripts/build.sh makes)")
    ap.add_argument("--runs", type=int, default=200, help="cold-start runs (default 200)")
    ap.add_argument("--count", type=int, default=200_000, help="pings in the throughput run (default 200000)")
    ap.add_argument("--lockstep", type=int, default=20_000, help="lock-step round trips (default 20000)")
    ap.add_argument("--framing", default="ndjson,lsp", help="comma-separated: ndjson, lsp (default both)")
    ap.add_argument("--chart", default=DEFAULT_CHART, metavar="PATH",
                    help="write the chart here: SVG, or PNG if PATH ends in .png and matplotlib is "
                         "installed (default benchmarks/bench.svg)")
    ap.add_argument("--no-chart", dest="chart", action="store_const", const="", help="write no chart")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    problem = missing_binary(binary)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    framings = [f.strip() for f in a.framing.split(",") if f.strip()]
    for f in framings:
        if f not in ("ndjson", "lsp"):
            ap.error(f"unknown framing {f}")

    version = binary_version(binary)
    rows = []
    cs = cold_start(binary, a.runs, framings[0])
    rows.append((f"cold start, spawn → first `ping` reply ({a.runs} runs), median",
                 f"{statistics.median(cs) * 1e3:.2f} ms"))
    rows.append(("cold start, p90", f"{pct(cs, 90) * 1e3:.2f} ms"))
    rates, rss_mib, round_trips, medians, p99s = [], [], [], [], []
    for f in framings:
        rps, rss, errors = throughput(binary, a.count, f)
        if errors:
            print(f"warning: {errors} error replies in the {f} throughput run", file=sys.stderr)
        rows.append((f"pipelined `ping` throughput, {f}, {a.count:,} requests on one pipe",
                     f"{rps:,.0f} req/s"))
        rows.append((f"max RSS of the sidecar during the {f} throughput run", f"{rss / 1024:.1f} MiB"))
        rates.append(rps)
        rss_mib.append(rss / 1024)
    for f in framings:
        rts, lat = lockstep(binary, a.lockstep, f)
        rows.append((f"lock-step round trips, {f} ({a.lockstep:,} pings)",
                     f"{rts:,.0f} /s (median {statistics.median(lat) * 1e6:.0f} µs, "
                     f"p99 {pct(lat, 99) * 1e6:.0f} µs)"))
        round_trips.append(rts)
        medians.append(statistics.median(lat) * 1e6)
        p99s.append(pct(lat, 99) * 1e6)

    heading = f"auth-sidecar {version} — {machine()}"
    print(heading)
    print()
    for line in markdown_table(["measurement", "result"], rows):
        print(line)
    if a.chart:
        groups = [
            Group(f"pipelined ping throughput, {a.count:,} requests on one pipe", rates,
                  [f"{v:,.0f} req/s" for v in rates], "higher is better"),
            Group("max RSS of the sidecar during the throughput run", rss_mib,
                  [f"{v:.1f} MiB" for v in rss_mib], "lower is better"),
            Group(f"lock-step round trips per second, {a.lockstep:,} pings", round_trips,
                  [f"{v:,.0f} /s" for v in round_trips], "higher is better"),
            Group("lock-step round trip, median latency", medians,
                  [f"{v:.0f} µs" for v in medians], "lower is better"),
            Group("lock-step round trip, p99 latency", p99s, [f"{v:.0f} µs" for v in p99s],
                  "lower is better"),
        ]
        path = write_chart(a.chart, "auth-sidecar: the JSON-RPC engine over pipes, by framing",
                           framings, groups, subtitle=heading, footnotes=[
                               f"cold start ({framings[0]}, {a.runs} runs), spawn → first ping "
                               f"reply: median {rows[0][1]}, p90 {rows[1][1]}.",
                               "benchmarks/bench.py. Each figure is scaled to its own largest value."])
        log(f"chart written to {path}", who="bench")
    return 0


if __name__ == "__main__":
    sys.exit(main())
