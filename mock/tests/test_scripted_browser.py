"""scripted_browser.py on its own: complete, deny, cancel, login form, failures."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from flows import pkce

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROWSER = os.path.join(HERE, "scripted_browser.py")


class Loopback:
    """A one-page app redirect listener on 127.0.0.1 recording what it receives."""

    def __init__(self):
        self.received = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.received.append(("GET", dict(parse_qsl(urlsplit(self.path).query))))
                self._ok()

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                outer.received.append(("POST", dict(parse_qsl(body))))
                self._ok()

            def _ok(self):
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.uri = "http://localhost:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def loopback():
    lb = Loopback()
    yield lb
    lb.server.shutdown()
    lb.server.server_close()


def auth_url(mock, loopback, **extra):
    _, challenge = pkce()
    query = {"client_id": mock.client_id, "redirect_uri": loopback.uri, "response_type": "code",
             "scope": "User.Read openid offline_access", "state": "s1",
             "code_challenge": challenge, "code_challenge_method": "S256"}
    query.update(extra)
    return "%s/common/oauth2/v2.0/authorize?%s" % (mock.url, urlencode(query))


def run(mock, url, tmp_path, **env):
    log = tmp_path / "log.jsonl"
    full = dict(os.environ, SCRIPTED_BROWSER_WAIT="1", SCRIPTED_BROWSER_CA=mock.ca_file,
                SCRIPTED_BROWSER_LOG=str(log), **env)
    proc = subprocess.run([sys.executable, BROWSER, url], env=full, capture_output=True,
                          text=True, timeout=30)
    assert proc.stdout == ""
    entry = json.loads(log.read_text().splitlines()[-1]) if log.exists() else None
    return proc, entry


@pytest.mark.parametrize("mode,method", [("query", "GET"), ("form_post", "POST"),
                                         ("fragment", None)])
def test_complete(mock, loopback, tmp_path, mode, method):
    proc, entry = run(mock, auth_url(mock, loopback, response_mode=mode), tmp_path)
    assert proc.returncode == 0 and entry["ok"], proc.stderr
    if method:
        assert loopback.received[0][0] == method
        assert loopback.received[0][1]["state"] == "s1" and "code" in loopback.received[0][1]


def test_login_form(mock, loopback, tmp_path):
    mock.admin.config(login_form=True)
    proc, _ = run(mock, auth_url(mock, loopback), tmp_path,
                  SCRIPTED_BROWSER_USERNAME="bob@contoso.com")
    assert proc.returncode == 0, proc.stderr
    assert mock.admin.log("authorize")[-1]["form"]["login_username"] == "bob@contoso.com"


def test_deny_and_cancel(mock, loopback, tmp_path):
    proc, _ = run(mock, auth_url(mock, loopback), tmp_path, SCRIPTED_BROWSER_ACTION="deny")
    assert proc.returncode == 0
    assert loopback.received[0][1]["error_subcode"] == "cancel"
    assert loopback.received[0][1]["state"] == "s1"
    proc, entry = run(mock, auth_url(mock, loopback), tmp_path, SCRIPTED_BROWSER_ACTION="cancel")
    assert proc.returncode == 0 and entry["detail"].startswith("cancelled")
    assert len(loopback.received) == 1 and mock.admin.count("authorize") == 0


def test_failures_exit_non_zero(mock, loopback, tmp_path):
    proc, entry = run(mock, auth_url(mock, loopback, client_id="nope"), tmp_path)
    assert proc.returncode == 1 and "AADSTS700016" in proc.stderr and not entry["ok"]
    proc, _ = run(mock, auth_url(mock, loopback).replace(loopback.uri.split(":")[-1], "1"),
                  tmp_path)
    assert proc.returncode == 1 and "cannot reach" in proc.stderr
    assert subprocess.run([sys.executable, BROWSER], capture_output=True).returncode == 2


def test_detaches_by_default(mock, loopback, tmp_path):
    env = dict(os.environ, SCRIPTED_BROWSER_CA=mock.ca_file)
    env.pop("SCRIPTED_BROWSER_WAIT", None)
    proc = subprocess.run([sys.executable, BROWSER, auth_url(mock, loopback)], env=env,
                          capture_output=True, timeout=10)
    assert proc.returncode == 0 and proc.stdout == b""
    for _ in range(100):
        if loopback.received:
            break
        threading.Event().wait(0.05)
    assert loopback.received and "code" in loopback.received[0][1]
