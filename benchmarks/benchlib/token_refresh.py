"""token_bench.py figures 6 and 7: one refresh for many callers of an expired token (8
processes; 100 concurrent calls in one process)."""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from .cachefile import expire_access_tokens
from .harness import log
from .mock import REPLY_TIMEOUT, SCOPES, SILENT, MsalScript, Sidecar, describe_reply, msal_app
from .report import counts_delta, net

if TYPE_CHECKING:
    from .token_session import TokenSession


def fig6(bench: "TokenSession") -> None:
    k = 8
    log(f"figure 6: {k} processes want the same expired token at once")
    expire_access_tokens(bench.cache)
    b = bench.counts()
    procs = [Sidecar(bench, bench.cache) for _ in range(k)]
    results = []
    try:
        for sc in procs:                       # every process up and reading
            r = sc.call("ping")
            if "result" not in r:
                raise RuntimeError(f"ping failed: {r}")
        for sc in procs:                       # the barrier: write all at once
            sc.write(SILENT % 7)
        for sc in procs:
            results.append(describe_reply(sc.reply(7)))
    finally:
        for sc in procs:
            sc.close()
    sd = counts_delta(b, bench.counts())
    expire_access_tokens(bench.cache)
    b = bench.counts()
    ms_ = [MsalScript(bench, bench.cache, barrier=True) for _ in range(k)]
    mres = []
    try:
        for m in ms_:
            line = m.reader.line(time.monotonic() + REPLY_TIMEOUT)
            if line != b"ready":
                raise RuntimeError(f"MSAL script: {line[:200]!r}")
        for m in ms_:
            m.proc.stdin.write(b"go\n")
        for m in ms_:
            res = m.result()
            mres.append(res.get("source") if res.get("ok") else res.get("error"))
    finally:
        for m in ms_:
            m.close()
    md = counts_delta(b, bench.counts())
    ok_s = sum(1 for x in results if x.startswith("ok"))
    ok_m = sum(1 for x in mres if x in ("identity_provider", "cache"))
    grants_s, grants_m = sd.get("token:refresh_token", 0), md.get("token:refresh_token", 0)
    cell_s, cell_m = f"{grants_s} ({ok_s}/{k} got a token)", f"{grants_m} ({ok_m}/{k} got a token"
    bench.add(f"6. {k} processes want the same expired token at the same moment: "
              "refresh-token grants (target 1)", cell_s,
              f"{cell_m}; {k} script processes, SerializableTokenCache, no lock)", "—",
              f"{net(sd)} · {net(md)}")
    bench.plot(f"6. {k} processes, one expired token: refresh-token grants", grants_s, grants_m,
               texts=[cell_s, cell_m + ")"], note="fewer is better; 1 is the target")
    if ok_s < k:
        bench.notes.append("figure 6, sidecar replies: " + ", ".join(results))


def fig7(bench: "TokenSession") -> None:
    k = 100
    log(f"figure 7: {k} concurrent silent calls on an expired token, one process")
    expire_access_tokens(bench.cache)
    b = bench.counts()
    sc = Sidecar(bench, bench.cache)
    results = []
    try:
        if "result" not in sc.call("ping"):
            raise RuntimeError("ping failed")
        sc.write(b"".join(SILENT % i for i in range(k)))
        for i in range(k):
            results.append(describe_reply(sc.reply(i)))
    finally:
        sc.close()
    sd = counts_delta(b, bench.counts())
    expire_access_tokens(bench.cache)
    b = bench.counts()
    app, acc = msal_app(bench, bench.cache)
    barrier = threading.Barrier(k)
    mres = []

    def worker():
        barrier.wait()
        r = app.acquire_token_silent(SCOPES, account=acc)
        mres.append(bool(r and "access_token" in r))
    threads = [threading.Thread(target=worker) for _ in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    md = counts_delta(b, bench.counts())
    ok_s = sum(1 for x in results if x.startswith("ok"))
    grants_s, grants_m = sd.get("token:refresh_token", 0), md.get("token:refresh_token", 0)
    cell_s = f"{grants_s} ({ok_s}/{k} got a token)"
    cell_m = f"{grants_m} ({sum(mres)}/{k} got a token)"
    bench.add(f"7. {k} concurrent silent calls on an expired token, one process "
              f"(sidecar: {k} pipelined at once; MSAL: {k} threads, one app): "
              "refresh-token grants (target 1)", cell_s, cell_m, "—", f"{net(sd)} · {net(md)}")
    bench.plot(f"7. {k} concurrent calls, one expired token, one process: refresh-token grants",
               grants_s, grants_m, texts=[cell_s, cell_m], note="fewer is better; 1 is the target")
