"""token_bench.py figure 5: the first token from the 10,001-account cache, MSAL's deserialize
of that file, and both against jansson's own parse of it (a small C program, when `cc` and the
jansson headers are there)."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from typing import TYPE_CHECKING

from .harness import log
from .mock import describe_reply
from .report import ms, net, ratio
from .token_fresh import alternate_fresh

if TYPE_CHECKING:
    from .token_session import TokenSession


JANSSON_C = r'''
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    int n = argc > 2 ? atoi(argv[2]) : 11;
    double *t = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
        struct timespec a, b; json_error_t e;
        clock_gettime(CLOCK_MONOTONIC, &a);
        json_t *j = json_load_file(argv[1], 0, &e);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!j) { fprintf(stderr, "jansson: %s\n", e.text); return 1; }
        json_decref(j);
        t[i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    }
    qsort(t, n, sizeof(double), cmp);
    printf("{\"version\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f}\n",
           JANSSON_VERSION, t[n / 2], t[0]);
    return 0;
}
'''


def jansson_parse(tmp: str, path: str, runs: int) -> dict | None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return {"error": "no C compiler"}
    src = os.path.join(tmp, "jansson_parse.c")
    exe = os.path.join(tmp, "jansson_parse")
    with open(src, "w") as f:
        f.write(JANSSON_C)
    r = subprocess.run([cc, "-O2", "-o", exe, src, "-ljansson"], capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": "cc -ljansson failed: " + r.stderr.strip()[:200]}
    r = subprocess.run([exe, path, str(runs)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[:200]}
    result = json.loads(r.stdout)
    # A fresh process parsing once, as the sidecar's first token is: its heap is new, so it
    # pays the page faults for the whole tree, which the repeated parses above reuse.
    cold = []
    for _ in range(runs):
        r = subprocess.run([exe, path, "1"], capture_output=True, text=True, timeout=300)
        if r.returncode == 0:
            cold.append(json.loads(r.stdout)["median_ms"])
    if cold:
        result["cold_median_ms"] = statistics.median(cold)
    return result


def fig5(bench: "TokenSession") -> None:
    import msal
    n = bench.p["big_runs"]
    log(f"figure 5: first token from the {bench.accounts + 1:,}-account cache, {n} runs each")
    md = []

    def deserialize():               # MSAL's deserialize, in this process
        s = time.perf_counter()
        with open(bench.big, encoding="utf-8") as f:
            msal.SerializableTokenCache().deserialize(f.read())
        md.append(time.perf_counter() - s)
    runs = alternate_fresh(bench, bench.big, n, each=deserialize)
    st, mt = runs.sidecar_times, runs.msal_times
    snet, mnet = runs.sidecar_requests, runs.msal_requests
    sfail = [describe_reply(r) for r in runs.sidecar_replies if "result" not in r]
    mfail = [res.get("error") for res in runs.msal_results if not res.get("ok")]
    jn = bench.p["jansson_runs"]
    jr = jansson_parse(bench.tmp, bench.big, jn)
    bench.jansson = jr
    s, m, d = statistics.median(st), statistics.median(mt), statistics.median(md)
    size = f"{bench.big_size / 1e6:.1f} MB"
    bench.add(f"5a. first token from the {bench.accounts + 1:,}-account cache ({size}): fresh "
              f"process → silent reply, median of {n} (MSAL: the script)",
              ms(s) + (f" ({len(sfail)} failed: {sfail[0]})" if sfail else ""),
              ms(m) + (f" ({len(mfail)} failed: {mfail[0]})" if mfail else ""),
              ratio(m, s), f"{net(snet, n)} · {net(mnet, n)}")
    bench.plot(f"5a. first token from the {bench.accounts + 1:,}-account cache ({size}), median",
               s, m, note="time; lower is better")
    bench.add("5b. MSAL: read + `SerializableTokenCache.deserialize` of that file, "
              f"median of {n}", "—", ms(d), "—", "0 · 0")
    bench.add("5e. first token from that cache ÷ MSAL's read + deserialize (5a ÷ 5b; target ≤ 4x)",
              ratio(s, d), "—", "—", "—")
    if jr and "median_ms" in jr:
        j = jr["median_ms"] / 1e3
        one = getattr(bench, "fresh_sidecar_median", None)   # figure 1's, unless --only skipped it
        extra = s - one if one else None
        growth = (f"; {ratio(extra, j)} (first token − 1-account first token = {ms(extra)})"
                  if extra is not None else "")
        bench.add(f"5c. ÷ jansson {jr['version']}'s own parse of that file (`json_load_file`, "
                  f"repeated in one process, median of {jn}: {ms(j)}; target ≤ 1.2x)",
                  f"{ratio(s, j)} (first token){growth}", f"{ratio(d, j)} (deserialize)", "—", "—")
        if "cold_median_ms" in jr:
            c = jr["cold_median_ms"] / 1e3
            bench.add(f"5d. ÷ jansson's parse in a fresh process (one parse per process, as "
                      f"the sidecar's first token; median of {jn}: {ms(c)}; target ≤ 1.2x)",
                      f"{ratio(s, c)} (first token)"
                      + (f"; {ratio(extra, c)} (first token − 1-account first token)"
                         if extra is not None else ""), f"{ratio(d, c)} (deserialize)", "—", "—")
    else:
        bench.add("5c. jansson's own parse of that file", "not measured: "
                  + (jr or {}).get("error", "?"), "—", "—", "—")
        bench.notes.append("jansson figure not measured: " + (jr or {}).get("error", "?"))
