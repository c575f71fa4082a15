"""A minimal HTTP CONNECT proxy on 127.0.0.1 for the e2e tests: it records every tunnel it
opens and can route a target elsewhere (`routes`), e.g. `localhost:443` to a mock's port, so
a test can use an authority on the default port without binding port 443."""
from __future__ import annotations

import select
import socket
import socketserver
import threading


class ConnectProxy(socketserver.ThreadingTCPServer):
    """A minimal HTTP CONNECT proxy on 127.0.0.1 that records every tunnel it opens."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, routes: dict[str, str] | None = None):
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.targets: list[str] = []
        self.routes = dict(routes or {})
        self.lock = threading.Lock()

    def start(self) -> "ConnectProxy":
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

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
        host, port = self.server.routes.get(target, target).rsplit(":", 1)
        try:
            upstream = socket.create_connection((host, int(port)), timeout=10)
        except OSError:  # nothing listens there (a stopped mock): the client sees a refusal
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
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


def proxy_env(proxy_url: str, no_proxy: str = "") -> dict:
    """The proxy variables (both spellings) sending https through `proxy_url`."""
    return {"https_proxy": proxy_url, "HTTPS_PROXY": proxy_url, "no_proxy": no_proxy, "NO_PROXY": no_proxy,
            "http_proxy": "", "HTTP_PROXY": "", "all_proxy": "", "ALL_PROXY": ""}


class DefaultPort:
    """`https://localhost` (port 443) served by a server on another port of 127.0.0.1 (`target`,
    e.g. a mock's `127.0.0.1:PORT`), through a CONNECT proxy: an authority on the default port,
    whose cache environment is the bare host (`localhost`) as MSAL for Python writes it, without
    binding port 443. `env` sends https through the proxy, except to `no_proxy`."""

    host = "localhost"

    def __init__(self, target: str, no_proxy: str = ""):
        self.proxy = ConnectProxy({"localhost:443": target}).start()
        self.url = "https://" + self.host
        self.env = proxy_env(self.proxy.url, no_proxy)

    def stop(self) -> None:
        self.proxy.stop()
