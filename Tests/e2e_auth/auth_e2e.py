"""Helpers for the auth end-to-end suite (the process/pipe layer is Tests/e2e/sidecar.py)."""
from __future__ import annotations

import itertools
import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from typing import Any

import sidecar as sc

HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "mock", "scripted_browser.py")
CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
CONTOSO_TID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
ALICE = "alice@contoso.com"
BOB = "bob@contoso.com"
SCOPES = ["User.Read"]

# Deadlines (seconds) for replies.
QUICK = 10.0
SIGN_IN = 20.0


@dataclass
class Mock:
    url: str
    ca_file: str
    process: Any
    admin: Any

    @property
    def host(self) -> str:
        return self.url.split("//", 1)[1]

    def counts(self) -> dict:
        c = self.admin.counts()
        return {k: v for k, v in c.items() if k.startswith("token") or k in ("devicecode", "authorize")}


class AuthSidecar(sc.Sidecar):
    """One auth-sidecar process; NDJSON; request ids are allocated automatically."""

    _ids = itertools.count(1)

    @classmethod
    def start(cls, binary, mock, tmp_path, args, env=None, browser_action="complete",
              stderr_path=None) -> "AuthSidecar":
        e = process_env(mock, tmp_path, browser_action, env)
        p = cls([binary, *args], framing=sc.NDJSON, env=e, stderr_path=stderr_path)
        p.mock = mock
        p.tmp_path = tmp_path
        return p

    def set_browser_action(self, action: str) -> None:
        set_browser_action(self.tmp_path, action)

    def config_for(self, cache=None, **config) -> dict:
        params = {"clientId": CLIENT_ID, "authority": self.mock.url + "/organizations",
                  "knownAuthorities": ["127.0.0.1"]}
        if cache is not None:
            params["cache"] = {"path": cache} if isinstance(cache, str) else cache
        # These tests read and share the cache file as MSAL's JSON: plaintext, chosen
        # explicitly (a test of the key store passes cacheProtection itself).
        if params.get("cache", {}).get("persistence") != "memory" and "encryption" not in params.get("cache", {}):
            params.setdefault("cacheProtection", "plaintext")
        params.update(config)
        return params

    def initialize(self, cache=None, **config) -> dict:
        self.cache_path = cache
        return sc.assert_result(self.call("initialize", self.config_for(cache, **config)))

    def next_id(self) -> int:
        return next(self._ids)

    def call(self, method: str, params: Any = None, timeout: float = QUICK) -> dict:
        """Send a request and wait for its reply (the whole response object)."""
        rid = self.next_id()
        self.send(sc.req(method, {} if params is None else params, rid))
        return self.wait_for(rid, timeout)

    def submit(self, method: str, params: Any = None) -> int:
        """Send a request without waiting; returns its id."""
        rid = self.next_id()
        self.send(sc.req(method, {} if params is None else params, rid))
        return rid

    def ok(self, method: str, params: Any = None, timeout: float = QUICK) -> Any:
        return sc.assert_result(self.call(method, params, timeout))

    def error(self, method: str, params: Any, code: int, timeout: float = QUICK, name: str | None = None) -> dict:
        return sc.assert_error(self.call(method, params, timeout), code, name=name)

    # ---- flows -----------------------------------------------------------
    def sign_in(self, timeout: float = SIGN_IN, **params) -> dict:
        """Interactive acquireToken through the scripted browser."""
        params.setdefault("scopes", SCOPES)
        return self.ok("acquireToken", params, timeout)

    def silent(self, timeout: float = QUICK, **params) -> dict:
        params.setdefault("scopes", SCOPES)
        return self.ok("acquireTokenSilent", params, timeout)

    def wait_notification(self, method: str, timeout: float = QUICK) -> dict:
        """The next notification `method` (other messages stay queued)."""
        for i, m in enumerate(self.inbox):
            if isinstance(m, dict) and m.get("method") == method and "id" not in m:
                del self.inbox[i]
                return m
        deadline = time.monotonic() + timeout
        while True:
            m = self._take(deadline)
            if m is None:
                raise sc.ReadTimeout(f"stdout closed before a {method} notification; stderr: {self.stderr_tail()!r}")
            if isinstance(m, dict) and m.get("method") == method and "id" not in m:
                return m
            self.inbox.append(m)

    def device_sign_in(self, username: str, timeout: float = SIGN_IN, **params) -> dict:
        """acquireToken flow deviceCode, approved as `username` through the mock's control."""
        params.setdefault("scopes", SCOPES)
        params["flow"] = "deviceCode"
        rid = self.submit("acquireToken", params)
        n = self.wait_notification("deviceCode")
        assert n["params"]["requestId"] == rid, n
        self.mock.admin.device("approve", n["params"]["userCode"], username=username)
        return sc.assert_result(self.wait_for(rid, timeout))


def process_env(mock, tmp_path, browser_action: str = "complete", env=None) -> dict:
    """The environment of a process (sidecar, verb or agent) under test: the mock's CA, the
    scripted browser as $BROWSER (doing `browser_action`), HOME and XDG_CACHE_HOME in
    tmp_path, no policy file, and an agent socket of the test's own (so an agent the user runs
    is never used); `env` on top."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SCRIPTED_BROWSER_") and k != "AUTH_SIDECAR_NO_AGENT"}
    set_browser_action(tmp_path, browser_action)
    e.update({
        "SSL_CERT_FILE": mock.ca_file,
        "BROWSER": make_browser_wrapper(tmp_path),
        "SCRIPTED_BROWSER_CA": mock.ca_file,
        "SCRIPTED_BROWSER_COOKIES": str(tmp_path / "browser-cookies.txt"),
        "SCRIPTED_BROWSER_LOG": str(tmp_path / "browser.log"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "HOME": str(tmp_path / "home"),
        "AUTH_SIDECAR_POLICY_FILE": str(tmp_path / "no-such-policy.json"),
        "AUTH_SIDECAR_SOCK": str(tmp_path / "agent" / "agent.sock"),
    })
    os.makedirs(e["HOME"], exist_ok=True)
    e.update(env or {})
    return e


def make_browser_wrapper(tmp_path) -> str:
    """$BROWSER: the scripted browser, with SCRIPTED_BROWSER_ACTION read from a file at each
    run, so a test can switch between complete / cancel / deny without a restart."""
    path = os.path.join(str(tmp_path), "browser.sh")
    if not os.path.exists(path):
        action_file = os.path.join(str(tmp_path), "browser-action")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n"
                    f"SCRIPTED_BROWSER_ACTION=$(cat '{action_file}' 2>/dev/null || echo complete)\n"
                    "export SCRIPTED_BROWSER_ACTION\n"
                    f"exec '{sys.executable}' '{BROWSER}' \"$@\"\n")
        os.chmod(path, stat.S_IRWXU)
    return path


def set_browser_action(tmp_path, action: str) -> None:
    with open(os.path.join(str(tmp_path), "browser-action"), "w") as f:
        f.write(action)


def browser_runs(tmp_path) -> list[dict]:
    """The scripted browser's log: one {"url", "action", "ok", "detail"} per run."""
    try:
        with open(os.path.join(str(tmp_path), "browser.log")) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def read_cache(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cache_secrets(path: str, kind: str) -> list[str]:
    """Secrets of one section of an MSAL cache file (AccessToken, RefreshToken, IdToken)."""
    return [e["secret"] for e in read_cache(path).get(kind, {}).values()]
