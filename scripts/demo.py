#!/usr/bin/env python3
"""The main job: a scripted session through the sidecar against the bundled mock identity
platform, printing every JSON-RPC exchange.

sign in (browser flow, a scripted browser) -> silent token (from the cache) -> Graph /me
-> sign out -> current account (none, previous = the one signed out).

Usage: demo.py BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "mock_idp"))
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
    def __init__(self, binary, env):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.next_id = 1

    def call(self, method, params=None, title=""):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        print(f"## {title or method}")
        print("--> " + json.dumps(request))
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the sidecar closed its output")
            message = json.loads(line)
            shown = json.dumps(shorten(message))
            if "id" not in message:  # a notification (e.g. deviceCode)
                print("<-- (notification) " + shown)
                continue
            print("<-- " + shown + "\n")
            return message

    def close(self):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "exit"}) + "\n")
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)


def main(binary):
    with tempfile.TemporaryDirectory(prefix="auth-sidecar-demo-") as tmp:
        url, ca_file, mock = start_mock(os.path.join(tmp, "mock"))
        print(f"# mock identity platform and Graph at {url}\n")
        env = dict(os.environ, SSL_CERT_FILE=ca_file, SCRIPTED_BROWSER_CA=ca_file,
                   BROWSER=os.path.join(ROOT, "Tests", "mock_idp", "scripted_browser.py"))
        sidecar = Sidecar(binary, env)
        try:
            steps = [
                ("initialize", {"clientId": CLIENT_ID, "authority": f"{url}/common", "knownAuthorities": ["127.0.0.1"],
                                "graphEndpoint": f"{url}/", "cache": {"path": os.path.join(tmp, "cache.json")}},
                 "configure the public client"),
                ("getCurrentAccount", {}, "who is signed in? (nobody yet)"),
                ("acquireToken", {"scopes": ["user.read"]}, "sign in: the browser flow (a scripted browser)"),
                ("acquireTokenSilent", {"scopes": ["user.read"]}, "a token silently: from the cache"),
                ("callGraph", {"path": "/me"}, "Microsoft Graph /me with that token"),
                ("signout", {}, "sign out"),
                ("getCurrentAccount", {}, "who is signed in? (nobody; previousAccount tells who was)"),
                ("shutdown", None, "shut down"),
            ]
            for method, params, title in steps:
                reply = sidecar.call(method, params, title)
                if "error" in reply:
                    print(f"demo: {method} failed", file=sys.stderr)
                    return 1
            status = sidecar.close()
            print(f"sidecar exited with status {status}")
            return status
        finally:
            if sidecar.proc.poll() is None:
                sidecar.proc.kill()
            stop_mock(mock)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
