#!/usr/bin/env python3
"""Benchmark the token path of auth-sidecar side by side with MSAL for Python.

One run, against the bundled mock identity platform (Tests/mock_idp), on the same cache
file for both tools, alternating them where it makes sense. Prints a machine line and a
Markdown table (figure | auth-sidecar | MSAL for Python | ratio | network requests); see
benchmarks/README.md ("token_bench.py") for what each figure means.

  1. fresh process -> cached acquireTokenSilent reply (median), and its network requests
  2. the same with the identity service unreachable (mock stopped): success or failure
  3. cached silent tokens per second (sidecar: pipelined on one pipe; MSAL: in-process loop)
  4. silent latency with 10,001 accounts vs 1 account
  5. first token from the 10,001-account cache (+ MSAL's deserialize, + jansson's own parse)
  6. 8 processes want the same expired token at the same moment: refresh-token grants
  7. 100 concurrent silent calls on an expired token in one process: refresh-token grants
  8. idle RSS of the sidecar, and RSS after 1M pipelined silent requests

Usage: python3 benchmarks/token_bench.py [--binary PATH] [--quick] [--keep]

Needs Python 3.9+, msal (1.39.0 was used), cryptography (for the mock), and cc + the jansson
headers for the jansson figure (skipped, and said so, when they are missing). Progress goes
to stderr; stdout carries only the machine line and the table.
"""
from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import platform
import random
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MOCK_DIR = os.path.join(REPO, "Tests", "mock_idp")
BROWSER = os.path.join(MOCK_DIR, "scripted_browser.py")
sys.path.insert(0, MOCK_DIR)
sys.path.insert(0, os.path.join(REPO, "Tests", "e2e_auth"))

from connect_proxy import DefaultPort  # noqa: E402  (https://localhost routed to the mock)
from mock_idp.testing import AdminClient, start_mock, stop_mock  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import cpu_model  # noqa: E402  (the engine benchmark's machine line)

DEFAULT_BINARY = os.environ.get("AUTH_SIDECAR_BIN") or os.path.join(
    REPO, ".build", "release", "auth-sidecar")
CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
CONTOSO_TID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
ALICE = "alice@contoso.com"
SCOPES = ["User.Read"]
REPLY_TIMEOUT = 60.0

# (default, --quick)
PROFILES = {
    "fresh_runs": (20, 5),          # figure 1, per tool
    "offline_runs": (5, 2),         # figure 2, per tool
    "throughput_count": (20_000, 5_000),  # figure 3, requests per sidecar round / MSAL loop
    "rounds": (3, 1),               # figure 3, alternating rounds per tool
    "latency_count": (300, 50),     # figure 4, lock-step requests per tool and cache
    "big_runs": (5, 2),             # figure 5, fresh processes per tool
    "jansson_runs": (11, 5),        # figure 5
    "rss_count": (1_000_000, 100_000),  # figure 8
    "rss_time_limit": (120.0, 8.0),     # figure 8, seconds; stop sending when reached
    "rss_window": (10_000, 2_000),      # figure 8, most requests outstanding at once
}

SILENT = b'{"jsonrpc":"2.0","method":"acquireTokenSilent","params":{"scopes":["User.Read"]},"id":%d}\n'

CHILDREN: list[subprocess.Popen] = []   # every process we start; killed at the end


def log(msg: str) -> None:
    print(f"[token_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes and pipes

def reap(proc: subprocess.Popen, timeout: float = 60.0) -> tuple[int, int]:
    """Wait with wait4; return (exit code, ru_maxrss KiB). Kills after `timeout`."""
    if proc.returncode is not None:
        return proc.returncode, getattr(proc, "maxrss", 0)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            proc.maxrss = ru.ru_maxrss
            return proc.returncode, ru.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            deadline += 30
        time.sleep(0.002)


def vmrss_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of /proc/PID/status in KiB: VmRSS (now) or VmHWM (peak since exec).

    (wait4's ru_maxrss is no use for the peak: Linux carries the parent's high-water mark
    into a child across fork and exec, so it reports this benchmark's own size.)"""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class LineReader:
    """NDJSON lines from a pipe, with deadlines."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = b""
        self.lines: list[bytes] = []

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no reply before the deadline")
        r, _, _ = select.select([self.fd], [], [], left)
        if not r:
            return
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError("the process closed its stdout")
        self.buf += chunk
        if b"\n" in chunk:
            *done, self.buf = self.buf.split(b"\n")
            self.lines.extend(line for line in done if line.strip())

    def line(self, deadline: float) -> bytes:
        while not self.lines:
            self._fill(deadline)
        return self.lines.pop(0)


class Sidecar:
    """One auth-sidecar process, configured at start (--config), NDJSON."""

    def __init__(self, bench: "Bench", cache: str):
        self.proc = subprocess.Popen(
            [bench.binary, "--config", bench.config_file(cache), "--client-id", CLIENT_ID],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=bench.stderr_file,
            env=bench.child_env, bufsize=0)
        CHILDREN.append(self.proc)
        self.reader = LineReader(self.proc.stdout.fileno())
        self.ids = 1_000_000_000
        self.pending: dict = {}      # replies read while waiting for another id

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)

    def reply(self, rid: int, timeout: float = REPLY_TIMEOUT) -> dict:
        if rid in self.pending:
            return self.pending.pop(rid)
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.reader.line(deadline))
            if isinstance(msg, dict) and "id" in msg:
                if msg["id"] == rid:
                    return msg
                self.pending[msg["id"]] = msg

    def call(self, method: str, params: dict | None = None, timeout: float = REPLY_TIMEOUT) -> dict:
        self.ids += 1
        self.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params or {},
                               "id": self.ids}).encode() + b"\n")
        return self.reply(self.ids, timeout)

    def silent(self, timeout: float = REPLY_TIMEOUT) -> dict:
        return self.call("acquireTokenSilent", {"scopes": SCOPES}, timeout)

    def close(self) -> tuple[int, int]:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        code, rss = reap(self.proc)
        self.proc.stdout.close()
        return code, rss


def describe_reply(r: dict) -> str:
    if "result" in r:
        return "ok (fromCache)" if r["result"].get("fromCache") else "ok (refreshed)"
    e = r.get("error", {})
    return f"{e.get('code')} {(e.get('data') or {}).get('name', e.get('message', ''))}"


# ---------------------------------------------------------------- MSAL for Python

MSAL_SCRIPT = r'''
import json, sys, time
t0 = time.perf_counter()
cfg = json.loads(sys.argv[1])
out = {"ok": False}
try:
    import msal, requests
    cache = msal.SerializableTokenCache()
    t1 = time.perf_counter()
    with open(cfg["cache"], encoding="utf-8") as f:
        cache.deserialize(f.read())
    out["deserialize_ms"] = (time.perf_counter() - t1) * 1e3
    session = requests.Session()
    session.verify = cfg["ca"]
    app = msal.PublicClientApplication(cfg["client_id"], authority=cfg["authority"],
                                       instance_discovery=False, http_client=session,
                                       token_cache=cache)
    accounts = app.get_accounts(username=cfg["username"])
    if cfg.get("barrier"):
        print("ready", flush=True)
        sys.stdin.readline()
    result = app.acquire_token_silent(cfg["scopes"], account=accounts[0]) if accounts else None
    if result and "access_token" in result:
        out = dict(out, ok=True, source=result.get("token_source"))
    else:
        out["error"] = "no token: %r" % ((result or {}).get("error") if result else "None")
    if cache.has_state_changed:   # persist like a real script would (atomic replace)
        tmp = cfg["cache"] + ".msal-%d.tmp" % __import__("os").getpid()
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(cache.serialize())
        __import__("os").replace(tmp, cfg["cache"])
except Exception as e:  # noqa: BLE001
    out["error"] = "%s: %s" % (type(e).__name__, str(e)[:160])
out["script_ms"] = (time.perf_counter() - t0) * 1e3
print(json.dumps(out), flush=True)
'''


class MsalScript:
    """A python3 process running MSAL_SCRIPT on the cache file."""

    def __init__(self, bench: "Bench", cache: str, barrier: bool = False):
        cfg = {"cache": cache, "ca": bench.ca_file, "client_id": CLIENT_ID,
               "authority": bench.authority, "username": ALICE,
               "scopes": SCOPES, "barrier": barrier}
        self.proc = subprocess.Popen([sys.executable, bench.msal_script, json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=bench.stderr_file, env=bench.child_env, bufsize=0)
        CHILDREN.append(self.proc)
        self.reader = LineReader(self.proc.stdout.fileno())

    def result(self, timeout: float = REPLY_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            line = self.reader.line(deadline)
            if line.startswith(b"{"):
                return json.loads(line)

    def close(self) -> tuple[int, int]:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        r = reap(self.proc)
        self.proc.stdout.close()
        return r


def msal_app(bench: "Bench", cache_path: str):
    import msal
    import requests
    cache = msal.SerializableTokenCache()
    with open(cache_path, encoding="utf-8") as f:
        cache.deserialize(f.read())
    session = requests.Session()
    session.verify = bench.ca_file
    app = msal.PublicClientApplication(CLIENT_ID, authority=bench.authority,
                                       instance_discovery=False, http_client=session,
                                       token_cache=cache)
    accounts = app.get_accounts(username=ALICE)
    if not accounts:
        raise RuntimeError(f"MSAL finds no account {ALICE} in {cache_path}")
    return app, accounts[0]


# ---------------------------------------------------------------- the cache file

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path: str, doc: dict) -> None:
    tmp = path + ".bench.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def real_home(doc: dict) -> str:
    for acc in doc.get("Account", {}).values():
        if acc.get("username", "").lower() == ALICE:
            return acc["home_account_id"]
    raise RuntimeError(f"no account {ALICE} in the cache")


def expire_access_tokens(path: str) -> None:
    """Make the signed-in account's access tokens expire in 60 s: expired for both tools
    (each treats a token with less than 5 minutes left as expired)."""
    doc = read_json(path)
    home = real_home(doc)
    soon = str(int(time.time()) + 60)
    n = 0
    for at in doc.get("AccessToken", {}).values():
        if at.get("home_account_id") == home:
            at["expires_on"] = soon
            at["extended_expires_on"] = soon
            at.pop("refresh_on", None)
            n += 1
    if not n:
        raise RuntimeError("no access token to expire")
    write_json(path, doc)


def valid_token_left(path: str) -> bool:
    doc = read_json(path)
    home = real_home(doc)
    now = time.time()
    return any(at.get("home_account_id") == home and int(at.get("expires_on", 0)) > now + 900
               for at in doc.get("AccessToken", {}).values())


def fake_jwt(rng: random.Random, claims: dict, sig_len: int) -> str:
    header = b64url(json.dumps({"typ": "JWT", "alg": "RS256", "kid": "bench"}).encode())
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(rng.randbytes(sig_len * 3 // 4 + 3))[:sig_len]
    return f"{header}.{payload}.{sig}"


def add_synthetic_accounts(src: str, dst: str, n: int, url: str) -> int:
    """Write `dst`: the cache `src` plus `n` synthetic accounts, each with an Account, an
    AccessToken, a RefreshToken and an IdToken (both tokens JWT-shaped with decodable claims,
    compact: about 3 KB per account in all, 30 MB for 10,001; the fields other than the
    secrets alone take ~2 KB per account) in MSAL's cross-SDK format, shaped like the real account's entries (same client,
    environment, realm kind, scopes). The real account's entries come last in every section,
    so a linear scan pays for all the others. Returns the file size."""
    doc = read_json(src)
    home = real_home(doc)
    rng = random.Random(20261122)
    tmpl = {}
    for section in ("Account", "AccessToken", "RefreshToken", "IdToken"):
        entries = [e for e in doc.get(section, {}).values() if e.get("home_account_id") == home]
        if not entries:
            raise RuntimeError(f"the signed-in account has no {section} entry to copy")
        tmpl[section] = entries[0]
    now = int(time.time())
    synth = {s: {} for s in tmpl}
    for i in range(n):
        uid = "%08x-%04x-4%03x-8%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                                 rng.getrandbits(12), rng.getrandbits(12),
                                                 rng.getrandbits(48))
        tid = CONTOSO_TID
        h = f"{uid}.{tid}"
        user = f"user{i:05d}@contoso.com"
        name = f"Synthetic User {i:05d}"
        acc = dict(tmpl["Account"], home_account_id=h, local_account_id=uid, username=user)
        if "name" in acc:
            acc["name"] = name
        if "client_info" in acc:
            acc["client_info"] = b64url(json.dumps({"uid": uid, "utid": tid}).encode())
        env, realm = acc["environment"], acc["realm"]
        synth["Account"][f"{h}-{env}-{realm}".lower()] = acc

        at = dict(tmpl["AccessToken"], home_account_id=h)
        at["secret"] = fake_jwt(rng, {
            "aud": "https://graph.microsoft.com", "iss": f"{url}/{tid}/v2.0", "exp": now + 3600,
            "oid": uid, "tid": tid, "upn": user, "scp": "User.Read",
            "uti": b64url(rng.randbytes(12))}, 43)
        synth["AccessToken"]["-".join([h, at["environment"], "accesstoken", at["client_id"],
                                       at["realm"], at["target"]]).lower()] = at

        rt = dict(tmpl["RefreshToken"], home_account_id=h)
        rt["secret"] = "0.MOCK." + b64url(rng.randbytes(36))
        synth["RefreshToken"]["-".join([h, rt["environment"], "refreshtoken", rt["client_id"],
                                        rt.get("family_id") or "", rt.get("target", "")]).lower()] = rt

        it = dict(tmpl["IdToken"], home_account_id=h)
        it["secret"] = fake_jwt(rng, {
            "aud": CLIENT_ID, "iss": f"{url}/{tid}/v2.0", "exp": now + 3600, "name": name,
            "oid": uid, "tid": tid, "preferred_username": user}, 43)
        synth["IdToken"]["-".join([h, it["environment"], "idtoken", it["client_id"],
                                   it["realm"], ""]).lower()] = it
    for section, entries in synth.items():
        real = doc.get(section, {})
        entries.update(real)          # the real entries last
        doc[section] = entries
    write_json(dst, doc)
    return os.path.getsize(dst)


# ---------------------------------------------------------------- jansson

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


# ---------------------------------------------------------------- formatting

def ms(seconds: float) -> str:
    v = seconds * 1e3
    return f"{v:,.0f} ms" if v >= 100 else f"{v:.1f} ms" if v >= 10 else f"{v:.2f} ms"


def us_or_ms(seconds: float) -> str:
    return ms(seconds) if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def ratio(x: float | None, y: float | None) -> str:
    if not x or not y:
        return "—"
    r = x / y
    return f"{r:,.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def counts_delta(before: dict, after: dict) -> dict:
    return {k: after.get(k, 0) - before.get(k, 0) for k in after
            if after.get(k, 0) != before.get(k, 0)}


def net(delta: dict | None, per: int = 1) -> str:
    """`3 (openid-configuration 1, token:refresh_token 2)`: total requests (keys without ':'),
    broken down by endpoint, using the finer `token:grant` keys where present."""
    if delta is None:
        return "— (service down)"
    total = sum(v for k, v in delta.items() if ":" not in k)
    parts = []
    for k in sorted(delta):
        if ":" in k:
            parts.append((k, delta[k]))
        elif not any(s.startswith(k + ":") for s in delta):
            parts.append((k, delta[k]))

    def num(v):
        v = v / per
        return f"{v:g}" if v == int(v) else f"{v:.2f}"
    detail = ", ".join(f"{k} {num(v)}" for k, v in parts)
    return f"{num(total)}{'/run' if per > 1 else ''}" + (f" ({detail})" if detail else "")


# ---------------------------------------------------------------- the benchmark

class Bench:
    def __init__(self, a: argparse.Namespace):
        self.a = a
        self.binary = os.path.abspath(a.binary)
        self.p = {k: v[1 if a.quick else 0] for k, v in PROFILES.items()}
        if a.rss_count:
            self.p["rss_count"] = a.rss_count
        if a.runs:
            self.p["fresh_runs"] = a.runs
        self.tmp = tempfile.mkdtemp(prefix="token-bench-")
        self.mock = None
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.notes: list[str] = []
        self.stderr_file = open(os.path.join(self.tmp, "children-stderr.log"), "ab")
        self.cache = os.path.join(self.tmp, "cache", "cache.json")
        self.big = os.path.join(self.tmp, "cache", "cache-10001.json")
        os.makedirs(os.path.dirname(self.cache), mode=0o700)
        self.msal_script = os.path.join(self.tmp, "msal_silent.py")
        with open(self.msal_script, "w") as f:
            f.write(MSAL_SCRIPT)
        self._configs: dict[str, str] = {}

    # -- setup
    def start_mock(self) -> None:
        state = os.path.join(self.tmp, "mock-idp")
        os.makedirs(state)
        self.url, self.ca_file, self.mock = start_mock(state)
        CHILDREN.append(self.mock)
        self.admin = AdminClient(self.url, self.ca_file)
        # Both tools at https://localhost (port 443, the mock behind a CONNECT proxy): on the
        # default port the cache environment is the bare host, as MSAL for Python writes it
        # (on another port the sidecar's is host:port and MSAL's drops the port).
        self.default_port = DefaultPort(self.url.split("//", 1)[1], no_proxy="127.0.0.1")
        self.authority = self.default_port.url + "/organizations"
        home = os.path.join(self.tmp, "home")
        os.makedirs(home)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIPTED_BROWSER_")}
        env.update({
            "SSL_CERT_FILE": self.ca_file, "REQUESTS_CA_BUNDLE": self.ca_file,
            "CURL_CA_BUNDLE": self.ca_file, "SCRIPTED_BROWSER_CA": self.ca_file,
            "SCRIPTED_BROWSER_COOKIES": os.path.join(self.tmp, "browser-cookies.txt"),
            "BROWSER": BROWSER, "HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "AUTH_SIDECAR_POLICY_FILE": os.path.join(self.tmp, "no-such-policy.json"),
        })
        env.update(self.default_port.env)  # https to 127.0.0.1 direct, to localhost:443 proxied
        self.child_env = env
        # MSAL for Python in this process (figures 3, 4, 7): requests prefers these variables
        # over Session.verify.
        for k in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", *self.default_port.env):
            os.environ[k] = env[k]

    def config_file(self, cache: str) -> str:
        if cache not in self._configs:
            path = os.path.join(self.tmp, f"config-{len(self._configs)}.json")
            with open(path, "w") as f:
                json.dump({"clientId": CLIENT_ID, "authority": self.authority,
                           "knownAuthorities": [self.default_port.host], "scopes": SCOPES,
                           "cache": {"path": cache}}, f)
            self._configs[cache] = path
        return self._configs[cache]

    def sign_in(self) -> None:
        log("signing in alice@contoso.com with the sidecar through the mock's scripted browser")
        sc = Sidecar(self, self.cache)
        try:
            r = sc.call("acquireToken", {"scopes": SCOPES, "loginHint": ALICE}, timeout=60)
            if "result" not in r:
                raise RuntimeError(f"sign-in failed: {r}")
            r = sc.call("getCurrentAccount")
            acc = (r.get("result") or {}).get("account") or {}
            if acc.get("username") != ALICE:
                raise RuntimeError(f"the signed-in account is not current: {r}")
        finally:
            sc.close()
        # both tools find the token in the file, from the cache
        sc = Sidecar(self, self.cache)
        try:
            r = sc.silent()
        finally:
            sc.close()
        if not r.get("result", {}).get("fromCache"):
            raise RuntimeError(f"the sidecar does not serve the cached token: {r}")
        m = MsalScript(self, self.cache)
        res = m.result()
        m.close()
        if not res.get("ok") or res.get("source") != "cache":
            raise RuntimeError(f"MSAL for Python does not serve the cached token: {res}")

    def counts(self) -> dict:
        return self.admin.counts()

    def add(self, figure, sidecar, msal_, rat, network) -> None:
        self.rows.append((figure, sidecar, msal_, rat, network))

    # -- figure 1
    def sidecar_fresh(self, cache: str) -> tuple[float, dict]:
        t0 = time.perf_counter()
        sc = Sidecar(self, cache)
        sc.write(SILENT % 1)
        try:
            r = sc.reply(1)
            t1 = time.perf_counter()
        finally:
            sc.close()
        return t1 - t0, r

    def msal_fresh(self, cache: str) -> tuple[float, dict, int]:
        t0 = time.perf_counter()
        m = MsalScript(self, cache)
        try:
            res = m.result()
            t1 = time.perf_counter()
        finally:
            _, rss = m.close()
        return t1 - t0, res, rss

    def fig1(self) -> None:
        n = self.p["fresh_runs"]
        log(f"figure 1: fresh process → cached silent token, {n} runs each, alternating")
        self.sidecar_fresh(self.cache)      # warm-up (page cache), not counted
        self.msal_fresh(self.cache)
        st, mt, sfail, mfail, rss = [], [], [], [], []
        snet, mnet = {}, {}
        for _ in range(n):
            b = self.counts()
            t, r = self.sidecar_fresh(self.cache)
            a = self.counts()
            for k, v in counts_delta(b, a).items():
                snet[k] = snet.get(k, 0) + v
            st.append(t)
            if not r.get("result", {}).get("fromCache"):
                sfail.append(describe_reply(r))
            b = self.counts()
            t, res, maxrss = self.msal_fresh(self.cache)
            a = self.counts()
            for k, v in counts_delta(b, a).items():
                mnet[k] = mnet.get(k, 0) + v
            mt.append(t)
            rss.append(maxrss)
            if not res.get("ok") or res.get("source") != "cache":
                mfail.append(res.get("error") or res.get("source"))
        self.fresh_sidecar_median = statistics.median(st)
        self.msal_script_rss = statistics.median(rss)
        s = ms(statistics.median(st)) + (f" ({len(sfail)} not from cache: {sfail[0]})" if sfail else "")
        m = ms(statistics.median(mt)) + (f" ({len(mfail)} failed: {mfail[0]})" if mfail else "")
        self.add(f"1. fresh process → cached `acquireTokenSilent` reply, median of {n} "
                 "(MSAL: a script doing the same; target ≤ 6 ms, ≥ 50x, 0 requests)",
                 s, m, ratio(statistics.median(mt), statistics.median(st)),
                 f"{net(snet, n)} · {net(mnet, n)}")

    # -- figure 2 (run last: it stops the mock)
    def fig2(self) -> None:
        n = self.p["offline_runs"]
        if not valid_token_left(self.cache):
            log("figure 2: refreshing the cached token first")
            sc = Sidecar(self, self.cache)
            sc.call("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True})
            sc.close()
        # both serve it from the cache while the service is up
        _, r = self.sidecar_fresh(self.cache)
        _, res, _ = self.msal_fresh(self.cache)
        log(f"figure 2: stopping the mock; fresh process → cached token with the service "
            f"unreachable, {n} runs each (service up just before: sidecar {describe_reply(r)}, "
            f"MSAL {res.get('source') or res.get('error')})")
        stop_mock(self.mock)
        sres, mres, st, mt = [], [], [], []
        for _ in range(n):
            t, r = self.sidecar_fresh(self.cache)
            st.append(t)
            sres.append("ok" if "result" in r else describe_reply(r))
            t, res, _ = self.msal_fresh(self.cache)
            mt.append(t)
            mres.append("ok" if res.get("ok") else (res.get("error") or "failed").split(":")[0])

        def verdict(results, times):
            ok = results.count("ok")
            if ok == len(results):
                return f"succeeds {ok}/{len(results)} ({ms(statistics.median(times))})"
            fails = [x for x in results if x != "ok"]
            return f"fails {len(fails)}/{len(results)}: {fails[0]} (after {ms(statistics.median(times))})"
        self.add("2. valid cached token, identity service unreachable (mock stopped), "
                 f"fresh process, {n} runs each", verdict(sres, st), verdict(mres, mt), "—",
                 net(None))

    # -- figure 3
    def sidecar_throughput(self, cache: str, count: int) -> tuple[float, int]:
        sc = Sidecar(self, cache)
        try:
            r = sc.silent()          # warm-up: start-up and cache load not counted
            if "result" not in r:
                raise RuntimeError(f"warm-up silent failed: {r}")
            rate, errors, _ = self.pipelined(sc, count)
        finally:
            sc.close()
        return rate, errors

    def pipelined(self, sc: Sidecar, count: int, window: int | None = None,
                  time_limit: float | None = None) -> tuple[float, int, int]:
        """Write `count` silent requests (chunks of 2000) from a writer thread while this
        thread counts reply lines. With `window`, at most that many are outstanding; with
        `time_limit`, the writer stops early. Returns (replies/s, error replies, replies)."""
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
        errors = 0
        replies = 0
        hard = time.monotonic() + 900
        try:
            while True:
                if state.get("done") and replies >= state["written"]:
                    break
                if time.monotonic() > hard:
                    raise TimeoutError(f"{replies} replies of {state['written']}")
                r, _, _ = select.select([fd], [], [], 1.0)
                if not r:
                    continue
                data = os.read(fd, 1 << 20)
                if not data:
                    raise EOFError(f"stdout closed after {replies} replies")
                replies += data.count(b"\n")
                errors += data.count(b'"error":{')
                state["replies"] = replies
        finally:
            state["stop"] = True
            w.join(10)
        t1 = time.perf_counter()
        if failure:
            raise RuntimeError(f"writer failed: {failure[0]!r}")
        return replies / (t1 - t0), errors, replies

    def msal_loop(self, app, account, count: int, scopes=SCOPES) -> tuple[float, list[float]]:
        lat = []
        t0 = time.perf_counter()
        for _ in range(count):
            s = time.perf_counter()
            r = app.acquire_token_silent(scopes, account=account)
            lat.append(time.perf_counter() - s)
            if not r or r.get("token_source") != "cache":
                raise RuntimeError(f"MSAL silent did not come from the cache: {r and r.get('error')}")
        return count / (time.perf_counter() - t0), lat

    def fig3(self) -> None:
        count, rounds = self.p["throughput_count"], self.p["rounds"]
        log(f"figure 3: cached silent tokens per second, {count:,} requests, {rounds} rounds each")
        srates, mrates, serr = [], [], 0
        snet, mnet = {}, {}
        for _ in range(rounds):
            b = self.counts()
            rate, errors = self.sidecar_throughput(self.cache, count)
            snet = counts_delta(b, self.counts())
            srates.append(rate)
            serr += errors
            b = self.counts()
            app, acc = msal_app(self, self.cache)
            rate, _ = self.msal_loop(app, acc, count)
            mnet = counts_delta(b, self.counts())
            mrates.append(rate)
        s, m = statistics.median(srates), statistics.median(mrates)
        self.add(f"3. cached silent tokens per second (sidecar: {count:,} pipelined on one pipe; "
                 f"MSAL: in-process loop; median of {rounds}; target ≥ 2x)",
                 f"{s:,.0f} /s" + (f" ({serr} error replies)" if serr else ""), f"{m:,.0f} /s",
                 ratio(s, m), f"{net(snet)} · {net(mnet)} (per round)")

    # -- figure 4
    def sidecar_lockstep(self, cache: str, count: int) -> list[float]:
        sc = Sidecar(self, cache)
        lat = []
        try:
            r = sc.silent()          # warm-up: start-up and cache load not counted
            if "result" not in r:
                raise RuntimeError(f"warm-up silent failed: {r}")
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

    def fig4(self) -> None:
        count = self.p["latency_count"]
        log(f"figure 4: silent latency, 1 vs {self.accounts + 1:,} accounts, {count} requests each")
        res = {}
        nets = {}
        for label, path in (("one", self.cache), ("big", self.big)):
            b = self.counts()
            res[("s", label)] = statistics.median(self.sidecar_lockstep(path, count))
            nets[("s", label)] = counts_delta(b, self.counts())
            b = self.counts()
            app, acc = msal_app(self, path)
            app.acquire_token_silent(SCOPES, account=acc)   # warm-up
            res[("m", label)] = statistics.median(self.msal_loop(app, acc, count)[1])
            nets[("m", label)] = counts_delta(b, self.counts())
            # MSAL's O(1) key lookup needs the scopes to equal the stored target exactly
            doc = read_json(path)
            home = real_home(doc)
            target = next(at["target"] for at in doc["AccessToken"].values()
                          if at["home_account_id"] == home).split()
            del doc
            res[("x", label)] = statistics.median(self.msal_loop(app, acc, count, target)[1])
            del app, acc
        n = f"{self.accounts + 1:,}"
        self.add(f"4a. silent latency, 1 account (sidecar: lock-step in a warm process; MSAL: "
                 f"in-process loop; median of {count})",
                 us_or_ms(res[("s", "one")]), us_or_ms(res[("m", "one")]),
                 ratio(res[("m", "one")], res[("s", "one")]),
                 f"{net(nets[('s', 'one')])} · {net(nets[('m', 'one')])}")
        self.add(f"4b. silent latency, {n} accounts (same)",
                 us_or_ms(res[("s", "big")]), us_or_ms(res[("m", "big")]),
                 ratio(res[("m", "big")], res[("s", "big")]),
                 f"{net(nets[('s', 'big')])} · {net(nets[('m', 'big')])}")
        self.add(f"4c. silent latency growth, {n} ÷ 1 account (target ≤ 1.5x)",
                 ratio(res[("s", "big")], res[("s", "one")]),
                 ratio(res[("m", "big")], res[("m", "one")]), "—", "—")
        self.add(f"4d. MSAL only: scopes equal to the stored target ({' '.join(target)!r}), "
                 f"which takes MSAL's O(1) key lookup; 1 → {n} accounts", "—",
                 f"{us_or_ms(res[('x', 'one')])} → {us_or_ms(res[('x', 'big')])} "
                 f"({ratio(res[('x', 'big')], res[('x', 'one')])})", "—", "0 · 0")

    # -- figure 5
    def fig5(self) -> None:
        import msal
        n = self.p["big_runs"]
        log(f"figure 5: first token from the {self.accounts + 1:,}-account cache, {n} runs each")
        st, mt, md, sfail, mfail = [], [], [], [], []
        snet, mnet = {}, {}
        for _ in range(n):
            b = self.counts()
            t, r = self.sidecar_fresh(self.big)
            for k, v in counts_delta(b, self.counts()).items():
                snet[k] = snet.get(k, 0) + v
            st.append(t)
            if "result" not in r:
                sfail.append(describe_reply(r))
            b = self.counts()
            t, res, _ = self.msal_fresh(self.big)
            for k, v in counts_delta(b, self.counts()).items():
                mnet[k] = mnet.get(k, 0) + v
            mt.append(t)
            if not res.get("ok"):
                mfail.append(res.get("error"))
            s = time.perf_counter()       # MSAL's deserialize, in this process
            with open(self.big, encoding="utf-8") as f:
                msal.SerializableTokenCache().deserialize(f.read())
            md.append(time.perf_counter() - s)
        jn = self.p["jansson_runs"]
        jr = jansson_parse(self.tmp, self.big, jn)
        self.jansson = jr
        s, m, d = statistics.median(st), statistics.median(mt), statistics.median(md)
        size = f"{self.big_size / 1e6:.1f} MB"
        self.add(f"5a. first token from the {self.accounts + 1:,}-account cache ({size}): fresh "
                 f"process → silent reply, median of {n} (MSAL: the script)",
                 ms(s) + (f" ({len(sfail)} failed: {sfail[0]})" if sfail else ""),
                 ms(m) + (f" ({len(mfail)} failed: {mfail[0]})" if mfail else ""),
                 ratio(m, s), f"{net(snet, n)} · {net(mnet, n)}")
        self.add("5b. MSAL: read + `SerializableTokenCache.deserialize` of that file, "
                 f"median of {n}", "—", ms(d), "—", "0 · 0")
        if jr and "median_ms" in jr:
            j = jr["median_ms"] / 1e3
            extra = s - getattr(self, "fresh_sidecar_median", 0)
            self.add(f"5c. ÷ jansson {jr['version']}'s own parse of that file (`json_load_file`, "
                     f"repeated in one process, median of {jn}: {ms(j)}; target ≤ 1.2x)",
                     f"{ratio(s, j)} (first token); {ratio(extra, j)} (first token − 1-account "
                     f"first token = {ms(extra)})", f"{ratio(d, j)} (deserialize)", "—", "—")
            if "cold_median_ms" in jr:
                c = jr["cold_median_ms"] / 1e3
                self.add(f"5d. ÷ jansson's parse in a fresh process (one parse per process, as "
                         f"the sidecar's first token; median of {jn}: {ms(c)}; target ≤ 1.2x)",
                         f"{ratio(s, c)} (first token); {ratio(extra, c)} (first token − 1-account "
                         f"first token)", f"{ratio(d, c)} (deserialize)", "—", "—")
        else:
            self.add("5c. jansson's own parse of that file", "not measured: "
                     + (jr or {}).get("error", "?"), "—", "—", "—")
            self.notes.append("jansson figure not measured: " + (jr or {}).get("error", "?"))

    # -- figure 6
    def fig6(self) -> None:
        k = 8
        log(f"figure 6: {k} processes want the same expired token at once")
        expire_access_tokens(self.cache)
        b = self.counts()
        procs = [Sidecar(self, self.cache) for _ in range(k)]
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
        sd = counts_delta(b, self.counts())
        expire_access_tokens(self.cache)
        b = self.counts()
        ms_ = [MsalScript(self, self.cache, barrier=True) for _ in range(k)]
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
        md = counts_delta(b, self.counts())
        ok_s = sum(1 for x in results if x.startswith("ok"))
        ok_m = sum(1 for x in mres if x in ("identity_provider", "cache"))
        self.add(f"6. {k} processes want the same expired token at the same moment: "
                 "refresh-token grants (target 1)",
                 f"{sd.get('token:refresh_token', 0)} ({ok_s}/{k} got a token)",
                 f"{md.get('token:refresh_token', 0)} ({ok_m}/{k} got a token; {k} script "
                 "processes, SerializableTokenCache, no lock)", "—", f"{net(sd)} · {net(md)}")
        if ok_s < k:
            self.notes.append("figure 6, sidecar replies: " + ", ".join(results))

    # -- figure 7
    def fig7(self) -> None:
        k = 100
        log(f"figure 7: {k} concurrent silent calls on an expired token, one process")
        expire_access_tokens(self.cache)
        b = self.counts()
        sc = Sidecar(self, self.cache)
        results = []
        try:
            if "result" not in sc.call("ping"):
                raise RuntimeError("ping failed")
            sc.write(b"".join(SILENT % i for i in range(k)))
            for i in range(k):
                results.append(describe_reply(sc.reply(i)))
        finally:
            sc.close()
        sd = counts_delta(b, self.counts())
        expire_access_tokens(self.cache)
        b = self.counts()
        app, acc = msal_app(self, self.cache)
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
        md = counts_delta(b, self.counts())
        ok_s = sum(1 for x in results if x.startswith("ok"))
        self.add(f"7. {k} concurrent silent calls on an expired token, one process "
                 f"(sidecar: {k} pipelined at once; MSAL: {k} threads, one app): "
                 "refresh-token grants (target 1)",
                 f"{sd.get('token:refresh_token', 0)} ({ok_s}/{k} got a token)",
                 f"{md.get('token:refresh_token', 0)} ({sum(mres)}/{k} got a token)", "—",
                 f"{net(sd)} · {net(md)}")

    # -- figure 8
    def fig8(self) -> None:
        count, limit = self.p["rss_count"], self.p["rss_time_limit"]
        window = self.p["rss_window"]
        log(f"figure 8: RSS idle and after {count:,} pipelined silent requests "
            f"(at most {limit:.0f} s of sending, at most {window:,} outstanding)")
        b = self.counts()
        sc = Sidecar(self, self.cache)
        try:
            r = sc.silent()
            if "result" not in r:
                raise RuntimeError(f"silent failed: {r}")
            time.sleep(0.5)
            idle = vmrss_kib(sc.proc.pid)
            rate, errors, replies = self.pipelined(sc, count, window=window, time_limit=limit)
            after = vmrss_kib(sc.proc.pid)
            peak = vmrss_kib(sc.proc.pid, "VmHWM")
        finally:
            code, _ = sc.close()
        d = counts_delta(b, self.counts())
        self.add("8a. idle RSS of the sidecar (VmRSS after start + one silent reply)",
                 mib(idle), f"script process max RSS: {mib(self.msal_script_rss)}"
                 if getattr(self, "msal_script_rss", 0) else "—", "—", net(d) + " (8a and 8b together)")
        short = replies < count
        what = f"{replies:,} pipelined silent requests" + (
            f" (time limit {limit:.0f} s reached before {count:,})" if short else "")
        self.add(f"8b. RSS after {what}, at most {window:,} outstanding: VmRSS before closing stdin; "
                 "peak (VmHWM) (target ≤ 30 MB)",
                 f"{mib(after)}; peak {mib(peak)} ({rate:,.0f} /s"
                 + (f", {errors:,} error replies" if errors else "") + ")", "—", "—",
                 "(in 8a)")
        if short:
            self.notes.append(f"figure 8: only {replies:,} of {count:,} requests were sent within "
                              f"the {limit:.0f} s limit (at {rate:,.0f} /s); --rss-time-limit "
                              "raises it")
        if code != 0:
            self.notes.append(f"figure 8: the sidecar exited {code} at end of input")

    # -- main
    def run(self) -> int:
        import msal
        version = subprocess.run([self.binary, "--version"], capture_output=True, text=True,
                                 timeout=10, stdin=subprocess.DEVNULL).stdout.strip() or "?"
        self.accounts = self.a.accounts
        print(f"auth-sidecar {version} ({self.binary}) vs MSAL for Python {msal.__version__} "
              f"(Python {platform.python_version()}) — {cpu_model()}, {os.cpu_count()} CPUs, "
              f"{platform.system()} {platform.release()}, {datetime.date.today().isoformat()}"
              + (" — --quick" if self.a.quick else ""), flush=True)
        t_start = time.monotonic()
        self.start_mock()
        self.sign_in()
        self.big_size = add_synthetic_accounts(self.cache, self.big, self.accounts, self.url)
        log(f"{self.accounts + 1:,}-account cache: {self.big_size / 1e6:.1f} MB")
        figures = [self.fig1, self.fig3, self.fig4, self.fig5, self.fig8, self.fig6, self.fig7,
                   self.fig2]     # figure 2 stops the mock: last
        for fig in figures:
            try:
                fig()
            except Exception as e:  # noqa: BLE001 -- report the figure as not measured
                name = fig.__name__.replace("fig", "figure ")
                log(f"{name} failed: {e!r}")
                self.notes.append(f"{name} not measured: {type(e).__name__}: {e}")
        self.rows.sort(key=lambda r: (int(re.match(r"\d+", r[0]).group()), r[0]))
        print()
        print("| figure | auth-sidecar | MSAL for Python | ratio | network requests (sidecar · MSAL) |")
        print("|---|---|---|---|---|")
        for row in self.rows:
            print("| " + " | ".join(row) + " |")
        print()
        print("ratio: MSAL ÷ sidecar for times, sidecar ÷ MSAL for rates (> 1: the sidecar is "
              f"better). Total time {time.monotonic() - t_start:.0f} s.")
        for n in self.notes:
            print(f"- {n}")
        return 0

    def cleanup(self) -> None:
        for p in CHILDREN:
            if p.poll() is None:
                try:
                    p.kill()
                except OSError:
                    pass
            try:
                p.wait(5)
            except Exception:  # noqa: BLE001
                pass
        if self.mock is not None:
            try:
                stop_mock(self.mock)
            except Exception:  # noqa: BLE001
                pass
        self.stderr_file.close()
        if self.a.keep:
            log(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY,
                    help="the auth-sidecar executable (default $AUTH_SIDECAR_BIN, else "
                         ".build/release/auth-sidecar)")
    ap.add_argument("--quick", action="store_true", help="fewer runs and requests (< 1 minute)")
    ap.add_argument("--runs", type=int, default=0, help="figure 1 runs per tool (default 20, quick 5)")
    ap.add_argument("--accounts", type=int, default=10_000,
                    help="synthetic accounts added for figures 4-5 (default 10000)")
    ap.add_argument("--rss-count", type=int, default=0,
                    help="figure 8 requests (default 1000000, quick 100000)")
    ap.add_argument("--rss-time-limit", type=float, default=0,
                    help="figure 8: stop sending after this many seconds (default 120, quick 8)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (caches, logs)")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        print(f"no executable at {a.binary} (build with `swift build -c release` or pass --binary)",
              file=sys.stderr)
        return 2
    try:
        import msal  # noqa: F401
        import requests  # noqa: F401
    except ImportError as e:
        print(f"{e}: pip install msal==1.39.0", file=sys.stderr)
        return 2
    bench = Bench(a)
    if a.rss_time_limit:
        bench.p["rss_time_limit"] = a.rss_time_limit
    try:
        return bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
