"""token_bench.py figures 3 and 4: cached silent tokens per second (the sidecar pipelined on
one pipe, MSAL in a loop in this process), and silent latency on 1 vs 10,001 accounts."""
from __future__ import annotations

import select
import statistics
import threading
import time
from typing import TYPE_CHECKING

from .cachefile import read_json, real_home
from .harness import log
from .mock import SCOPES, SILENT, Sidecar, msal_app
from .report import counts_delta, net, ratio, us_or_ms

if TYPE_CHECKING:
    from .token_session import TokenSession


def sidecar_throughput(bench: "TokenSession", cache: str, count: int) -> tuple[float, int]:
    sc = Sidecar(bench, cache)
    try:
        sc.warm_up()
        rate, errors, _ = pipelined(sc, count)
    finally:
        sc.close()
    return rate, errors


def pipelined(sc: Sidecar, count: int, window: int | None = None,
          time_limit: float | None = None) -> tuple[float, int, int]:
    """Write `count` silent requests (ids 0 to count - 1, chunks of 2000) from a writer thread
    while this thread reads and checks the replies (`ReplyChecker`). With `window`, at most
    that many are outstanding; with `time_limit`, the writer stops early. Returns (replies/s,
    bad replies: an error, no token or an unexpected id; replies)."""
    if sc.reader.buf or sc.reader.lines:
        raise RuntimeError("replies left over from before the pipelined requests")
    chunk = 2000
    state = {"written": 0, "replies": 0, "stop": False}
    failure: list[BaseException] = []
    t0 = time.perf_counter()
    deadline_send = time.monotonic() + time_limit if time_limit else None

    def writer():
        try:
            i = 0
            while i < count and not state["stop"]:
                if deadline_send and time.monotonic() > deadline_send:
                    break
                if window:
                    while state["written"] - state["replies"] > window and not state["stop"]:
                        time.sleep(0.0005)
                k = min(chunk, count - i)
                sc.write(b"".join(SILENT % j for j in range(i, i + k)))
                i += k
                state["written"] = i
        except BaseException as e:  # noqa: BLE001
            failure.append(e)
        finally:
            state["done"] = True

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    fd = sc.proc.stdout.fileno()
    checker = ReplyChecker(count)
    hard = time.monotonic() + 900
    try:
        while True:
            if state.get("done") and checker.replies >= state["written"]:
                break
            if time.monotonic() > hard:
                raise TimeoutError(f"{checker.replies} replies of {state['written']}")
            r, _, _ = select.select([fd], [], [], 1.0)
            if not r:
                continue
            if not checker.read_from(sc.proc.stdout):
                raise EOFError(f"stdout closed after {checker.replies} replies")
            state["replies"] = checker.replies
    finally:
        state["stop"] = True
        w.join(10)
    t1 = time.perf_counter()
    if failure:
        raise RuntimeError(f"writer failed: {failure[0]!r}")
    if checker.bad:
        log(f"bad replies ({checker.errors}), the first: {checker.bad[0][:300]!r}")
    return checker.replies / (t1 - t0), checker.errors, checker.replies


class ReplyChecker:
    """Reads pipelined silent replies into one buffer used again for every read (a fresh 1 MB
    `os.read` per read page-faulted about one page per reply, and made this reader slower than
    the sidecar), and checks each reply: it starts with `{"jsonrpc":"2.0","id":N,` where N is a
    request's id seen for the first time, followed by `"result":{"accessToken":"`; anything else
    counts in `errors`."""

    PREFIX = b'{"jsonrpc":"2.0","id":'
    TOKEN = b',"result":{"accessToken":"'

    def __init__(self, count: int):
        self.buf = bytearray(1 << 20)
        self.view = memoryview(self.buf)
        self.kept = 0                    # bytes of an unfinished reply at the start of buf
        self.seen = bytearray(count)     # 1 per id answered
        self.replies = 0
        self.errors = 0
        self.bad: list[bytes] = []       # the first few bad replies, for the log

    def read_from(self, f) -> bool:
        """One read from the raw file `f` and the check of every reply it completes; False at
        end of output."""
        buf, seen, prefix, token = self.buf, self.seen, self.PREFIX, self.TOKEN
        if self.kept == len(buf):
            raise RuntimeError("a reply longer than 1 MB")
        n = f.readinto(self.view[self.kept:])
        if not n:
            return False
        end = self.kept + n
        start = 0
        find, startswith = buf.find, buf.startswith
        while (newline := find(b"\n", start, end)) >= 0:
            self.replies += 1
            comma = find(b",", start + len(prefix), newline)
            good = startswith(prefix, start) and comma > 0 and startswith(token, comma)
            if good:
                try:
                    rid = int(buf[start + len(prefix):comma])
                    good = rid >= 0 and not seen[rid]
                    if good:
                        seen[rid] = 1
                except (ValueError, IndexError):
                    good = False
            if not good:
                self.errors += 1
                if len(self.bad) < 3:
                    self.bad.append(bytes(buf[start:newline]))
            start = newline + 1
        self.kept = end - start
        buf[:self.kept] = buf[start:end]
        return True


def msal_loop(app, account, count: int, scopes=SCOPES) -> tuple[float, list[float]]:
    lat = []
    t0 = time.perf_counter()
    for _ in range(count):
        s = time.perf_counter()
        r = app.acquire_token_silent(scopes, account=account)
        lat.append(time.perf_counter() - s)
        if not r or r.get("token_source") != "cache":
            raise RuntimeError(f"MSAL silent did not come from the cache: {r and r.get('error')}")
    return count / (time.perf_counter() - t0), lat


def fig3(bench: "TokenSession") -> None:
    count, rounds = bench.p["throughput_count"], bench.p["rounds"]
    log(f"figure 3: cached silent tokens per second, {count:,} requests, {rounds} rounds each")
    srates, mrates, serr = [], [], 0
    snet, mnet = {}, {}
    for _ in range(rounds):
        b = bench.counts()
        rate, errors = sidecar_throughput(bench, bench.cache, count)
        snet = counts_delta(b, bench.counts())
        srates.append(rate)
        serr += errors
        b = bench.counts()
        app, acc = msal_app(bench, bench.cache)
        rate, _ = msal_loop(app, acc, count)
        mnet = counts_delta(b, bench.counts())
        mrates.append(rate)
    s, m = statistics.median(srates), statistics.median(mrates)
    bench.add(f"3. cached silent tokens per second (sidecar: {count:,} pipelined on one pipe; "
              f"MSAL: in-process loop; median of {rounds}; target ≥ 2x)",
              f"{s:,.0f} /s" + (f" ({serr} error replies)" if serr else ""), f"{m:,.0f} /s",
              ratio(s, m), f"{net(snet)} · {net(mnet)} (per round)")
    bench.plot("3. cached silent tokens per second, median", s, m,
               texts=[f"{s:,.0f} /s", f"{m:,.0f} /s"], note="higher is better")


def sidecar_lockstep(bench: "TokenSession", cache: str, count: int) -> list[float]:
    sc = Sidecar(bench, cache)
    lat = []
    try:
        sc.warm_up()
        for i in range(count):
            s = time.perf_counter()
            sc.write(SILENT % i)
            r = sc.reply(i)
            lat.append(time.perf_counter() - s)
            if "result" not in r:
                raise RuntimeError(f"silent failed: {r}")
    finally:
        sc.close()
    return lat


def fig4(bench: "TokenSession") -> None:
    count = bench.p["latency_count"]
    log(f"figure 4: silent latency, 1 vs {bench.accounts + 1:,} accounts, {count} requests each")
    res = {}
    nets = {}
    for label, path in (("one", bench.cache), ("big", bench.big)):
        b = bench.counts()
        res[("s", label)] = statistics.median(sidecar_lockstep(bench, path, count))
        nets[("s", label)] = counts_delta(b, bench.counts())
        b = bench.counts()
        app, acc = msal_app(bench, path)
        app.acquire_token_silent(SCOPES, account=acc)   # warm-up
        res[("m", label)] = statistics.median(msal_loop(app, acc, count)[1])
        nets[("m", label)] = counts_delta(b, bench.counts())
        # MSAL's O(1) key lookup needs the scopes to equal the stored target exactly
        doc = read_json(path)
        home = real_home(doc)
        target = next(at["target"] for at in doc["AccessToken"].values()
                      if at["home_account_id"] == home).split()
        del doc
        res[("x", label)] = statistics.median(msal_loop(app, acc, count, target)[1])
        del app, acc
    n = f"{bench.accounts + 1:,}"
    bench.add(f"4a. silent latency, 1 account (sidecar: lock-step in a warm process; MSAL: "
              f"in-process loop; median of {count})",
              us_or_ms(res[("s", "one")]), us_or_ms(res[("m", "one")]),
              ratio(res[("m", "one")], res[("s", "one")]),
              f"{net(nets[('s', 'one')])} · {net(nets[('m', 'one')])}")
    bench.add(f"4b. silent latency, {n} accounts (same)",
              us_or_ms(res[("s", "big")]), us_or_ms(res[("m", "big")]),
              ratio(res[("m", "big")], res[("s", "big")]),
              f"{net(nets[('s', 'big')])} · {net(nets[('m', 'big')])}")
    bench.add(f"4c. silent latency growth, {n} ÷ 1 account (target ≤ 1.5x)",
              ratio(res[("s", "big")], res[("s", "one")]),
              ratio(res[("m", "big")], res[("m", "one")]), "—", "—")
    bench.plot("4a. silent latency, 1 account, median", res[("s", "one")], res[("m", "one")],
               note="lower is better")
    bench.plot(f"4b. silent latency, {n} accounts, median", res[("s", "big")],
               res[("m", "big")], note="lower is better")
    bench.plot(f"4c. silent latency growth, {n} ÷ 1 account",
               res[("s", "big")] / res[("s", "one")], res[("m", "big")] / res[("m", "one")],
               texts=[ratio(res[("s", "big")], res[("s", "one")]),
                      ratio(res[("m", "big")], res[("m", "one")])], note="lower is better")
    bench.add(f"4d. MSAL only: scopes equal to the stored target ({' '.join(target)!r}), "
              f"which takes MSAL's O(1) key lookup; 1 → {n} accounts", "—",
              f"{us_or_ms(res[('x', 'one')])} → {us_or_ms(res[('x', 'big')])} "
              f"({ratio(res[('x', 'big')], res[('x', 'one')])})", "—", "0 · 0")
