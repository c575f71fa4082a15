#!/usr/bin/env python3
"""The main job: a scripted session through the sidecar against the bundled mock identity
platform, told one line per step; `--verbose` also prints every JSON-RPC exchange.

sign in (browser flow, a scripted browser) -> silent token (from the cache) -> Graph /me
-> sign out -> current account (none, previous = the one signed out).

Usage: demo.py [--verbose] BINARY
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "mock"))
from mock_idp.testing import start_mock, stop_mock  # noqa: E402

CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"  # the mock's registered public client


def shorten(value):
    """Tokens are long: show their first characters only."""
    if isinstance(value, dict):
        return {k: (v[:24] + "...") if k in ("accessToken", "idToken") and isinstance(v, str) else shorten(v)
                for k, v in value.items() if k != "idTokenClaims"}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    return value


class Sidecar:
    def __init__(self, binary, env, verbose):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.next_id = 1
        self.verbose = verbose

    def show(self, line):
        if self.verbose:
            print("    " + line)

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        self.show("--> " + json.dumps(request))
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the sidecar closed its output")
            message = json.loads(line)
            shown = json.dumps(shorten(message))
            if "id" not in message:  # a notification (e.g. deviceCode)
                self.show("<-- (notification) " + shown)
                continue
            self.show("<-- " + shown)
            return message

    def close(self):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "exit"}) + "\n")
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)


def until(epoch):
    """`14:05` (local time) for a token's expiresOn."""
    return datetime.datetime.fromtimestamp(epoch).strftime("%H:%M")


def who(account):
    return f"{account['username']} ({account['name']})" if account.get("name") else account["username"]


# Each step: method, params, and the line that tells its result.
def steps(url, cache):
    config = {"clientId": CLIENT_ID, "authority": f"{url}/common", "knownAuthorities": ["127.0.0.1"],
              "graphEndpoint": f"{url}/", "cache": {"path": cache},
              # The demo's throwaway cache holds the mock's tokens only: plaintext, chosen here so the
              # demo runs on any machine (no keyring needed). Your own cache is encrypted (README,
              # "Where your tokens are kept").
              "cacheProtection": "plaintext"}
    return [
        ("initialize", config, lambda r: f"configured for client {CLIENT_ID} at {url}/common; the demo's cache "
                                         "is plaintext (\"cacheProtection\": \"plaintext\": it holds the mock's tokens only)"),
        ("getCurrentAccount", {}, lambda r: "nobody is signed in yet"
         if r["account"] is None else f"{r['account']['username']} is signed in"),
        ("acquireToken", {"scopes": ["User.Read"]},
         lambda r: f"signed in as {who(r['account'])} in the (scripted) browser, token valid until {until(r['expiresOn'])}"),
        ("acquireTokenSilent", {"scopes": ["User.Read"]},
         lambda r: f"a token again without a browser ({'from the cache' if r['fromCache'] else 'refreshed'}), "
                   f"valid until {until(r['expiresOn'])}"),
        ("callGraph", {"path": "/me"},
         lambda r: f"Graph /me says {r['body']['displayName']} <{r['body']['userPrincipalName']}> (HTTP {r['status']})"),
        ("signout", {}, lambda r: f"signed out {r['account']['username']}"),
        ("getCurrentAccount", {}, lambda r: "nobody is signed in; the previous account was "
         + (r["previousAccount"] or {}).get("username", "nobody")),
        ("shutdown", None, lambda r: "the sidecar shut down"),
    ]


def main(binary, verbose):
    with tempfile.TemporaryDirectory(prefix="auth-sidecar-demo-") as tmp:
        url, ca_file, mock = start_mock(os.path.join(tmp, "mock"))
        print(f"demo: the mock identity platform and Graph are at {url}")
        env = dict(os.environ, SSL_CERT_FILE=ca_file, SCRIPTED_BROWSER_CA=ca_file,
                   BROWSER=os.path.join(ROOT, "mock", "scripted_browser.py"))
        sidecar = Sidecar(binary, env, verbose)
        try:
            for method, params, tell in steps(url, os.path.join(tmp, "cache.json")):
                reply = sidecar.call(method, params)
                if "error" in reply:
                    error = reply["error"]
                    print(f"demo: {method} failed: {error.get('message')} ({error.get('code')})", file=sys.stderr)
                    return 1
                print("demo: " + tell(reply["result"]))
            status = sidecar.close()
            print(f"demo: done (the sidecar exited with status {status}); "
                  + ("" if verbose else "scripts/demo.sh --verbose shows the JSON-RPC exchanges"))
            return status
        finally:
            if sidecar.proc.poll() is None:
                sidecar.proc.kill()
            stop_mock(mock)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    verbose = "--verbose" in arguments
    positional = [a for a in arguments if a != "--verbose"]
    if len(positional) != 1:
        sys.exit("usage: demo.py [--verbose] BINARY")
    sys.exit(main(positional[0], verbose))
