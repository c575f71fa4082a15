#!/usr/bin/env python3
"""Benchmark the token path of auth-sidecar side by side with MSAL for Python.

One run, against the bundled mock identity platform (mock), on the same cache
file for both tools, alternating them where it makes sense. Prints a machine line and a
Markdown table (figure | auth-sidecar | MSAL for Python | ratio | network requests), and
writes a chart of the side-by-side figures (--chart); see benchmarks/README.md
("token_bench.py") for what each figure means.

  1. fresh process -> cached acquireTokenSilent reply (median), and its network requests
  2. the same with the identity service unreachable (mock stopped): success or failure
  3. cached silent tokens per second (sidecar: pipelined on one pipe; MSAL: in-process loop)
  4. silent latency with 10,001 accounts vs 1 account
  5. first token from the 10,001-account cache (+ MSAL's deserialize, + jansson's own parse)
  6. 8 processes want the same expired token at the same moment: refresh-token grants
  7. 100 concurrent silent calls on an expired token in one process: refresh-token grants
  8. idle RSS of the sidecar, and RSS after 1M pipelined silent requests

Usage: python3 benchmarks/token_bench.py [--binary PATH] [--quick] [--only N,...] [--keep] [--chart PATH]

Needs Python 3.9+, msal (1.39.0 was used), cryptography (for the mock), and cc + the jansson
headers for the jansson figure (skipped, and said so, when they are missing). Progress goes
to stderr; stdout carries only the machine line and the table.

The figures are measured in benchlib/ (token_fresh, token_rate, token_load, token_refresh,
token_memory); the set-up is benchlib/mock.py and benchlib/cachefile.py.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from benchlib.cachefile import add_synthetic_accounts
from benchlib.chart import write_chart
from benchlib.harness import BENCHMARKS, DEFAULT_BINARY, binary_version, log, machine, missing_binary
from benchlib.report import markdown_table
from benchlib.token_fresh import fig1, fig2
from benchlib.token_load import fig5
from benchlib.token_memory import fig8
from benchlib.token_rate import fig3, fig4
from benchlib.token_refresh import fig6, fig7
from benchlib.token_session import TokenSession, figure_key

FIGURES = [fig1, fig3, fig4, fig5, fig8, fig6, fig7, fig2]   # figure 2 stops the mock: last
DEFAULT_CHART = os.path.join(BENCHMARKS, "token_bench.svg")
SERIES = ["auth-sidecar", "MSAL for Python"]


class TokenBench(TokenSession):
    def __init__(self, a: argparse.Namespace):
        super().__init__(a.binary, quick=a.quick, keep=a.keep, runs=a.runs,
                         rss_count=a.rss_count, accounts=a.accounts)
        self.a = a

    def run(self) -> int:
        import msal
        version = binary_version(self.binary)
        heading = (f"auth-sidecar {version} ({self.binary}) vs MSAL for Python {msal.__version__} "
                   f"(Python {platform.python_version()}) — {machine()}"
                   + (" — --quick" if self.a.quick else ""))
        print(heading, flush=True)
        t_start = time.monotonic()
        self.start_mock()
        self.sign_in()
        self.big_size = add_synthetic_accounts(self.cache, self.big, self.accounts, self.url)
        log(f"{self.accounts + 1:,}-account cache: {self.big_size / 1e6:.1f} MB")
        for fig in FIGURES:
            if self.a.only and fig.__name__.removeprefix("fig") not in self.a.only:
                continue
            try:
                fig(self)
            except Exception as e:  # noqa: BLE001 -- report the figure as not measured
                name = fig.__name__.replace("fig", "figure ")
                log(f"{name} failed: {e!r}")
                self.notes.append(f"{name} not measured: {type(e).__name__}: {e}")
        self.rows.sort(key=lambda r: figure_key(r[0]))
        print()
        for line in markdown_table(["figure", "auth-sidecar", "MSAL for Python", "ratio",
                                    "network requests (sidecar · MSAL)"], self.rows):
            print(line)
        print()
        total = f"Total time {time.monotonic() - t_start:.0f} s."
        print("ratio: MSAL ÷ sidecar for times, sidecar ÷ MSAL for rates (> 1: the sidecar is "
              f"better). {total}")
        for n in self.notes:
            print(f"- {n}")
        if self.a.chart:
            self.groups.sort(key=lambda g: figure_key(g.label))
            runs = (f"{self.p['fresh_runs']} runs per tool for figure 1"
                    + (", --quick" if self.a.quick else ""))
            path = write_chart(self.a.chart, "auth-sidecar vs MSAL for Python: the token path",
                               SERIES, self.groups, subtitle=heading.replace(f" ({self.binary})", ""),
                               footnotes=[f"benchmarks/token_bench.py, {runs}. {total} Each figure "
                                          "is scaled to its own largest value."])
            log(f"chart written to {path}")
        return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY,
                    help="the auth-sidecar executable (default $AUTH_SIDECAR_BIN, else "
                         ".build/release/auth-sidecar, which scripts/build.sh makes)")
    ap.add_argument("--quick", action="store_true", help="fewer runs and requests (< 1 minute)")
    ap.add_argument("--runs", type=int, default=0, help="figure 1 runs per tool (default 20, quick 5)")
    ap.add_argument("--accounts", type=int, default=10_000,
                    help="synthetic accounts added for figures 4-5 (default 10000)")
    ap.add_argument("--rss-count", type=int, default=0,
                    help="figure 8 requests (default 1000000, quick 100000)")
    ap.add_argument("--rss-time-limit", type=float, default=0,
                    help="figure 8: stop sending after this many seconds (default 120, quick 8)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (caches, logs)")
    ap.add_argument("--only", type=lambda v: set(v.split(",")), default=set(), metavar="N[,N...]",
                    help="measure only these figures (numbers 1-8, e.g. --only 1,5); "
                         "default all")
    ap.add_argument("--chart", default=DEFAULT_CHART, metavar="PATH",
                    help="write the chart of the side-by-side figures here: SVG, or PNG if PATH "
                         "ends in .png and matplotlib is installed (default benchmarks/token_bench.svg)")
    ap.add_argument("--no-chart", dest="chart", action="store_const", const="",
                    help="write no chart")
    a = ap.parse_args()
    problem = missing_binary(a.binary)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        import msal  # noqa: F401 -- the peer
        import requests  # noqa: F401 -- its HTTP client
    except ImportError as e:
        print(f"{e}: pip install msal==1.39.0", file=sys.stderr)
        return 2
    bench = TokenBench(a)
    if a.rss_time_limit:
        bench.p["rss_time_limit"] = a.rss_time_limit
    try:
        return bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
