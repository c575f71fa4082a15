"""token_bench.py figure 8: the sidecar's resident memory, idle and after many pipelined
silent requests."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .harness import log, vmrss_kib
from .mock import Sidecar
from .report import counts_delta, mib, net
from .token_rate import pipelined

if TYPE_CHECKING:
    from .token_session import TokenSession


def fig8(bench: "TokenSession") -> None:
    count, limit = bench.p["rss_count"], bench.p["rss_time_limit"]
    window = bench.p["rss_window"]
    log(f"figure 8: RSS idle and after {count:,} pipelined silent requests "
        f"(at most {limit:.0f} s of sending, at most {window:,} outstanding)")
    b = bench.counts()
    sc = Sidecar(bench, bench.cache)
    try:
        r = sc.silent()
        if "result" not in r:
            raise RuntimeError(f"silent failed: {r}")
        time.sleep(0.5)
        idle = vmrss_kib(sc.proc.pid)
        rate, errors, replies = pipelined(sc, count, window=window, time_limit=limit)
        after = vmrss_kib(sc.proc.pid)
        peak = vmrss_kib(sc.proc.pid, "VmHWM")
    finally:
        code, _ = sc.close()
    d = counts_delta(b, bench.counts())
    bench.add("8a. idle RSS of the sidecar (VmRSS after start + one silent reply)",
              mib(idle), f"script process max RSS: {mib(bench.msal_script_rss)}"
              if bench.msal_script_rss else "—", "—", net(d) + " (8a and 8b together)")
    if bench.msal_script_rss:
        bench.plot("8a. resident memory: the sidecar idle vs MSAL's script process (max RSS)",
                   idle * 1024, bench.msal_script_rss * 1024,
                   texts=[mib(idle), mib(bench.msal_script_rss)], note="lower is better")
    short = replies < count
    what = f"{replies:,} pipelined silent requests" + (
        f" (time limit {limit:.0f} s reached before {count:,})" if short else "")
    bench.add(f"8b. RSS after {what}, at most {window:,} outstanding: VmRSS before closing stdin; "
              "peak (VmHWM) (target ≤ 30 MB)",
              f"{mib(after)}; peak {mib(peak)} ({rate:,.0f} /s"
              + (f", {errors:,} error replies" if errors else "") + ")", "—", "—",
              "(in 8a)")
    if short:
        bench.notes.append(f"figure 8: only {replies:,} of {count:,} requests were sent within "
                          f"the {limit:.0f} s limit (at {rate:,.0f} /s); --rss-time-limit "
                          "raises it")
    if code != 0:
        bench.notes.append(f"figure 8: the sidecar exited {code} at end of input")
