"""Helpers for test suites: start the mock as a subprocess and drive its /_admin/ controls.

    from mock_idp.testing import start_mock, AdminClient
    url, ca_file, process = start_mock(state_dir)
    admin = AdminClient(url, ca_file)
    admin.config(access_token_lifetime=5)
    ...
    stop_mock(process)

Standard library only, so any Python test suite can import it
(``sys.path.insert(0, "<repo>/mock")``).
"""

import json
import os
import selectors
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # mock/


def start_mock(state_dir, extra_args=(), timeout=15.0):
    """Start ``python3 -m mock_idp --port 0`` and wait for its JSON ready line.

    Returns (url, ca_file, process). The process exits when its stdin closes, so it
    never outlives the test run; stop it early with stop_mock(process).
    """
    cmd = [sys.executable, "-m", "mock_idp", "--port", "0", "--state-dir", str(state_dir),
           "--exit-on-stdin-eof", *extra_args]
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process = subprocess.Popen(cmd, cwd=HERE, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            process.kill()
            raise RuntimeError("mock_idp did not print its ready line within %.0fs" % timeout)
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            raise RuntimeError("mock_idp exited early (code %s)" % process.wait())
        line += chunk
    ready = json.loads(line.decode())
    process.ready = ready
    return ready["url"], ready["caFile"], process


def stop_mock(process, timeout=5.0):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout):
        if stream:
            stream.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.body)


def http(method, url, ca_file, data=None, headers=None, form=None, timeout=10.0):
    """One HTTPS (or HTTP) request that does not follow redirects. Returns a Response."""
    headers = dict(headers or {})
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif data is not None:
        body = json.dumps(data).encode()
        headers.setdefault("Content-Type", "application/json")
    context = ssl.create_default_context(cafile=ca_file)
    opener = urllib.request.build_opener(_NoRedirect(), urllib.request.HTTPSHandler(context=context))
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with opener.open(request, timeout=timeout) as resp:
            return Response(resp.status, resp.headers, resp.read())
    except urllib.error.HTTPError as err:
        return Response(err.code, err.headers, err.read())


class AdminClient:
    """Thin client for the /_admin/ controls (see README.md)."""

    def __init__(self, url, ca_file):
        self.url, self.ca_file = url.rstrip("/"), ca_file

    def call(self, name, body=None, method=None):
        resp = http(method or ("POST" if body is not None else "GET"),
                    "%s/_admin/%s" % (self.url, name), self.ca_file, data=body)
        if resp.status != 200:
            raise RuntimeError("admin %s failed: %s %s" % (name, resp.status, resp.text))
        return resp.json()

    def reset(self):
        return self.call("reset", {})

    def config(self, **values):
        return self.call("config", values)

    def counts(self):
        return self.call("counts")

    def count(self, endpoint):
        return self.counts().get(endpoint, 0)

    def fault(self, **fault):
        return self.call("faults", fault)

    def device(self, action="approve", user_code="latest", username=None):
        return self.call("devicecode", {"action": action, "user_code": user_code,
                                        "username": username})

    def advance_clock(self, seconds):
        return self.call("clock", {"advance": seconds})

    def log(self, endpoint=None):
        return self.call("log" + ("?endpoint=" + endpoint if endpoint else ""))["requests"]

    def __getattr__(self, name):
        """admin.revoke(username="x") posts to /_admin/revoke, and so on: admin.issuers(name="c"),
        admin.id_token(tamper="issuer", times=2); "__" stands for "/" (admin.users__delete)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **body: self.call(name.replace("__", "/"), body)
