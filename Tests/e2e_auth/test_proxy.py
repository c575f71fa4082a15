"""Proxies: the sidecar's HTTPS traffic honours the standard proxy variables (libcurl reads
`https_proxy` and `no_proxy`), tunnelling through an HTTP CONNECT proxy on loopback."""
from __future__ import annotations

import select
import socket
import socketserver
import threading

import pytest

import sidecar as sc
from auth_e2e import SCOPES


class ConnectProxy(socketserver.ThreadingTCPServer):
    """A minimal HTTP CONNECT proxy on 127.0.0.1 that records every tunnel it opens."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.targets: list[str] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.server_address[1]


class _Tunnel(socketserver.BaseRequestHandler):
    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, target, _ = line.split(" ", 2)
        if method != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        with self.server.lock:
            self.server.targets.append(target)
        host, port = target.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        pair = {self.request: upstream, upstream: self.request}
        try:
            while True:
                readable, _, _ = select.select(list(pair), [], [], 30)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        finally:
            upstream.close()


@pytest.fixture
def proxy():
    server = ConnectProxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _proxy_env(proxy_url: str, no_proxy: str = "") -> dict:
    return {"https_proxy": proxy_url, "HTTPS_PROXY": proxy_url, "no_proxy": no_proxy, "NO_PROXY": no_proxy,
            "http_proxy": "", "HTTP_PROXY": "", "all_proxy": "", "ALL_PROXY": ""}


def test_token_requests_go_through_the_proxy(launch, mock, proxy):
    p = launch(env=_proxy_env(proxy.url))
    p.sign_in()
    before = len(proxy.targets)
    r = p.silent(forceRefresh=True)  # a token call: no browser involved
    assert not r["fromCache"]
    assert len(proxy.targets) > before, "the refresh did not go through the proxy"
    assert proxy.targets[-1] == mock.host, proxy.targets


def test_no_proxy_bypasses_the_proxy(launch, mock, proxy):
    p = launch(env=_proxy_env(proxy.url, no_proxy="127.0.0.1,localhost"))
    p.sign_in()
    p.silent(forceRefresh=True)
    assert proxy.targets == [], proxy.targets  # neither the sidecar nor the browser used it


def test_an_unreachable_proxy_is_a_network_error(launch, mock):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]
    p = launch(env=_proxy_env(dead), initialize=False)
    p.initialize(cache=str(p.tmp_path / "cache.json"))
    # Discovery is the first HTTPS call of any flow: it fails through the dead proxy.
    e = p.error("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"}, -51001, name="networkError")
    assert "network" in e["message"], e
