"""token_bench.py figures 1 and 2: a fresh process's cached token, with the identity service
up (figure 1) and stopped (figure 2, run last)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cachefile import valid_token_left
from .floor import build_hello, hello_fresh
from .harness import log
from .mock import SCOPES, Sidecar, describe_reply
from .report import add_counts, counts_delta, ms, net, ratio

if TYPE_CHECKING:
    from .token_session import TokenSession


@dataclass
class FreshRuns:
    """`alternate_fresh`'s samples: per tool, the times, the answers and the mock's requests."""
    sidecar_times: list = field(default_factory=list)
    sidecar_replies: list = field(default_factory=list)
    sidecar_requests: dict = field(default_factory=dict)
    msal_times: list = field(default_factory=list)
    msal_results: list = field(default_factory=list)
    msal_rss: list = field(default_factory=list)
    msal_requests: dict = field(default_factory=dict)


def alternate_fresh(bench: "TokenSession", cache: str, n: int, each=None, lead=None) -> FreshRuns:
    """`n` rounds of a fresh sidecar then a fresh MSAL script on `cache`, counting the mock's
    requests around each; `lead()` runs at the start of every round, `each()` at the end."""
    runs = FreshRuns()
    for _ in range(n):
        if lead:
            lead()
        b = bench.counts()
        t, r = bench.sidecar_fresh(cache)
        add_counts(runs.sidecar_requests, counts_delta(b, bench.counts()))
        runs.sidecar_times.append(t)
        runs.sidecar_replies.append(r)
        b = bench.counts()
        t, res, maxrss = bench.msal_fresh(cache)
        add_counts(runs.msal_requests, counts_delta(b, bench.counts()))
        runs.msal_times.append(t)
        runs.msal_rss.append(maxrss)
        runs.msal_results.append(res)
        if each:
            each()
    return runs


def fig1(bench: "TokenSession") -> None:
    n = bench.p["fresh_runs"]
    log(f"figure 1: fresh process → cached silent token, {n} runs each, alternating")
    hello, floor, why = None, [], ""
    try:
        hello = build_hello(bench.tmp)
        hello_fresh(hello, bench.child_env, bench.stderr_file)  # warm-up, not counted
    except Exception as e:  # noqa: BLE001 -- the floor is then reported as not measured
        why = str(e)
        log(f"figure 1: no static Swift hello world: {why}")
    bench.sidecar_fresh(bench.cache)      # warm-up (page cache), not counted
    bench.msal_fresh(bench.cache)
    runs = alternate_fresh(bench, bench.cache, n,
                           lead=(lambda: floor.append(hello_fresh(hello, bench.child_env, bench.stderr_file))) if hello else None)
    st, mt, rss = runs.sidecar_times, runs.msal_times, runs.msal_rss
    snet, mnet = runs.sidecar_requests, runs.msal_requests
    sfail = [describe_reply(r) for r in runs.sidecar_replies
             if not r.get("result", {}).get("fromCache")]
    mfail = [res.get("error") or res.get("source") for res in runs.msal_results
             if not res.get("ok") or res.get("source") != "cache"]
    bench.fresh_sidecar_median = statistics.median(st)
    bench.msal_script_rss = statistics.median(rss)
    s = ms(statistics.median(st)) + (f" ({len(sfail)} not from cache: {sfail[0]})" if sfail else "")
    m = ms(statistics.median(mt)) + (f" ({len(mfail)} failed: {mfail[0]})" if mfail else "")
    bench.add(f"1. fresh process → cached `acquireTokenSilent` reply, median of {n} "
              "(MSAL: a script doing the same; target ≤ 1.5x the floor (1b), ≥ 50x, 0 requests)",
              s, m, ratio(statistics.median(mt), statistics.median(st)),
              f"{net(snet, n)} · {net(mnet, n)}")
    bench.plot("1. fresh process → cached token, median", statistics.median(st),
               statistics.median(mt), note="time; lower is better")
    if floor:
        f = statistics.median(floor)
        bench.floor_median = f
        bench.add(f"1b. the floor: a static Swift hello world built as scripts/build.sh builds "
                  f"the sidecar, spawn → its answer to one line, median of {n} (each just before "
                  "the sidecar's run)",
                  ms(f), "—", "—", "0 · 0")
        bench.add("1c. fresh process → cached token ÷ the floor (target ≤ 1.5x)",
                  ratio(statistics.median(st), f), ratio(statistics.median(mt), f), "—", "—")
    else:
        bench.notes.append(f"figure 1b (the static Swift hello-world floor) not measured: {why}")


def fig2(bench: "TokenSession") -> None:
    n = bench.p["offline_runs"]
    if not valid_token_left(bench.cache):
        log("figure 2: refreshing the cached token first")
        sc = Sidecar(bench, bench.cache)
        sc.call("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True})
        sc.close()
    # both serve it from the cache while the service is up
    _, r = bench.sidecar_fresh(bench.cache)
    _, res, _ = bench.msal_fresh(bench.cache)
    log(f"figure 2: stopping the mock; fresh process → cached token with the service "
        f"unreachable, {n} runs each (service up just before: sidecar {describe_reply(r)}, "
        f"MSAL {res.get('source') or res.get('error')})")
    bench.stop_mock()
    sres, mres, st, mt = [], [], [], []
    for _ in range(n):
        t, r = bench.sidecar_fresh(bench.cache)
        st.append(t)
        sres.append("ok" if "result" in r else describe_reply(r))
        t, res, _ = bench.msal_fresh(bench.cache)
        mt.append(t)
        mres.append("ok" if res.get("ok") else (res.get("error") or "failed").split(":")[0])

    def verdict(results, times):
        ok = results.count("ok")
        if ok == len(results):
            return f"succeeds {ok}/{len(results)} ({ms(statistics.median(times))})"
        fails = [x for x in results if x != "ok"]
        return f"fails {len(fails)}/{len(results)}: {fails[0]} (after {ms(statistics.median(times))})"
    bench.add("2. valid cached token, identity service unreachable (mock stopped), "
              f"fresh process, {n} runs each", verdict(sres, st), verdict(mres, mt), "—",
              net(None))
    bench.plot("2. cached token, identity service stopped: the answer, median time",
               statistics.median(st), statistics.median(mt),
               texts=[verdict(sres, st), verdict(mres, mt)], note="a success beats a failure")
