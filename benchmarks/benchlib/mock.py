"""The set-up the token benchmarks share (token_bench.py, verbs_bench.py, agent_bench.py):
the bundled mock identity platform (mock) in a temp dir, alice signed in with the
sidecar through the mock's scripted browser, and the two tools on that cache: a sidecar
process (`Sidecar`) and MSAL for Python, in a fresh script process (`MsalScript`) or in this
process (`msal_app`). Every process started is in CHILDREN, killed by `MockSession.cleanup`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .harness import REPO, LineReader, log, reap
from .report import add_counts, counts_delta

MOCK_DIR = os.path.join(REPO, "mock")
BROWSER = os.path.join(MOCK_DIR, "scripted_browser.py")
sys.path.insert(0, MOCK_DIR)
sys.path.insert(0, os.path.join(REPO, "Tests", "e2e_auth"))

from connect_proxy import DefaultPort  # noqa: E402  (https://localhost routed to the mock)
from mock_idp.testing import AdminClient, start_mock, stop_mock  # noqa: E402

CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
CONTOSO_TID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
ALICE = "alice@contoso.com"
SCOPES = ["User.Read"]
REPLY_TIMEOUT = 60.0
SILENT = b'{"jsonrpc":"2.0","method":"acquireTokenSilent","params":{"scopes":["User.Read"]},"id":%d}\n'

CHILDREN: list[subprocess.Popen] = []   # every process we start; killed at the end


class Child:
    """A process we started with pipes to its stdin and stdout."""
    proc: subprocess.Popen

    def close(self) -> tuple[int, int]:
        """Close its stdin (end of input) and wait: (exit code, ru_maxrss KiB)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        code, rss = reap(self.proc)
        self.proc.stdout.close()
        return code, rss


class Sidecar(Child):
    """One auth-sidecar process, configured at start (--config), NDJSON."""

    def __init__(self, session: "MockSession", cache: str):
        self.proc = subprocess.Popen(
            [session.binary, "--config", session.config_file(cache), "--client-id", CLIENT_ID],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=session.stderr_file,
            env=session.child_env, bufsize=0)
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

    def warm_up(self) -> None:
        """One silent request, so that start-up and the cache load are not counted after it."""
        r = self.silent()
        if "result" not in r:
            raise RuntimeError(f"warm-up silent failed: {r}")


def describe_reply(r: dict) -> str:
    if "result" in r:
        return "ok (fromCache)" if r["result"].get("fromCache") else "ok (refreshed)"
    e = r.get("error", {})
    return f"{e.get('code')} {(e.get('data') or {}).get('name', e.get('message', ''))}"


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


class MsalScript(Child):
    """A python3 process running MSAL_SCRIPT on the cache file."""

    def __init__(self, session: "MockSession", cache: str, barrier: bool = False):
        cfg = {"cache": cache, "ca": session.ca_file, "client_id": CLIENT_ID,
               "authority": session.authority, "username": ALICE,
               "scopes": SCOPES, "barrier": barrier}
        self.proc = subprocess.Popen([sys.executable, session.msal_script, json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=session.stderr_file, env=session.child_env, bufsize=0)
        CHILDREN.append(self.proc)
        self.reader = LineReader(self.proc.stdout.fileno())

    def result(self, timeout: float = REPLY_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            line = self.reader.line(deadline)
            if line.startswith(b"{"):
                return json.loads(line)


def msal_app(session: "MockSession", cache_path: str):
    """MSAL for Python in this process on the cache file: (app, alice's account)."""
    import msal
    import requests
    cache = msal.SerializableTokenCache()
    with open(cache_path, encoding="utf-8") as f:
        cache.deserialize(f.read())
    http = requests.Session()
    http.verify = session.ca_file
    app = msal.PublicClientApplication(CLIENT_ID, authority=session.authority,
                                       instance_discovery=False, http_client=http,
                                       token_cache=cache)
    accounts = app.get_accounts(username=ALICE)
    if not accounts:
        raise RuntimeError(f"MSAL finds no account {ALICE} in {cache_path}")
    return app, accounts[0]


class MockSession:
    """A temp dir with the mock, the children's environment, configuration files per cache
    file, and alice's cache (`cache`; `big` is where the 10,001-account copy goes)."""

    def __init__(self, binary: str, keep: bool = False):
        self.binary = os.path.abspath(binary)
        self.keep = keep
        self.tmp = tempfile.mkdtemp(prefix="token-bench-")
        self.mock = None
        self.stderr_file = open(os.path.join(self.tmp, "children-stderr.log"), "ab")
        self.cache = os.path.join(self.tmp, "cache", "cache.json")
        self.big = os.path.join(self.tmp, "cache", "cache-10001.json")
        os.makedirs(os.path.dirname(self.cache), mode=0o700)
        self.msal_script = os.path.join(self.tmp, "msal_silent.py")
        with open(self.msal_script, "w") as f:
            f.write(MSAL_SCRIPT)
        self._configs: dict[str, str] = {}

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

    def stop_mock(self) -> None:
        stop_mock(self.mock)

    def config_file(self, cache: str) -> str:
        if cache not in self._configs:
            path = os.path.join(self.tmp, f"config-{len(self._configs)}.json")
            with open(path, "w") as f:
                json.dump({"clientId": CLIENT_ID, "authority": self.authority,
                           "knownAuthorities": [self.default_port.host], "scopes": SCOPES,
                           # plaintext, chosen: MSAL for Python reads the same file
                           "cache": {"path": cache}, "cacheProtection": "plaintext"}, f)
            self._configs[cache] = path
        return self._configs[cache]

    def verb_env(self) -> dict:
        """The children's environment for a verb that reads the default configuration file, as a
        user's shell would: alice's configuration at $XDG_CONFIG_HOME/auth-sidecar/config.json
        (written once), $XDG_RUNTIME_DIR under the temp dir (not made)."""
        config_home = os.path.join(self.tmp, "xdg-config")
        target = os.path.join(config_home, "auth-sidecar", "config.json")
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(self.config_file(self.cache), target)
        return dict(self.child_env, XDG_CONFIG_HOME=config_home, XDG_RUNTIME_DIR=os.path.join(self.tmp, "run"))

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
        """The mock's request counts per endpoint (`GET /_admin/counts`)."""
        return self.admin.counts()

    def counted(self, requests: dict, run):
        """`run()`, the mock's requests it made added to `requests` (per endpoint)."""
        before = self.counts()
        result = run()
        add_counts(requests, counts_delta(before, self.counts()))
        return result

    def sidecar_fresh(self, cache: str) -> tuple[float, dict]:
        """A fresh sidecar: seconds from spawn (the silent request written right after) to
        its reply, and the reply."""
        t0 = time.perf_counter()
        sc = Sidecar(self, cache)
        sc.write(SILENT % 1)
        try:
            line = sc.reader.line(time.monotonic() + REPLY_TIMEOUT)  # its only line: the reply
            t1 = time.perf_counter()
        finally:
            sc.close()
        return t1 - t0, json.loads(line)

    def msal_fresh(self, cache: str) -> tuple[float, dict, int]:
        """A fresh MSAL script: seconds from spawn to its result line, the result, its max RSS."""
        t0 = time.perf_counter()
        m = MsalScript(self, cache)
        try:
            res = m.result()
            t1 = time.perf_counter()
        finally:
            _, rss = m.close()
        return t1 - t0, res, rss

    def cleanup(self) -> None:
        """Kill every child still running, stop the mock, remove the temp dir (unless kept)."""
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
        if self.keep:
            log(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
