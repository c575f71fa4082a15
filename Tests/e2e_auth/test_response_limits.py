"""Oversized answers: a hostile HTTP server on 127.0.0.1 sends 200 MB as an OpenID discovery
document (through an authority pointing at it) and as Graph's answer (through graphEndpoint).

Each answer is refused as soon as it passes its limit (1 MiB from the identity service; the
message limit, --max-message-size, from Graph): -51004 with data.name responseTooLarge and
data.limit, the transfer cut short (by Content-Length before the body; by counting the bytes
of a chunked or gzip-encoded body as they arrive), and the process's peak RSS (VmHWM, read
before it exits) stays under 64 MB. (Before the limit: 655 MB, and Graph's 200 MB relayed.)
"""
from __future__ import annotations

import threading
import zlib
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from auth_e2e import QUICK, SIGN_IN

HOSTILE_BYTES = 200 << 20
PIECE = 1 << 16
RSS_CEILING_KB = 64 << 10
IDENTITY_LIMIT = 1 << 20
MESSAGE_LIMIT = 4 << 20  # --max-message-size's default
CUT_SHORT = 64 << 20  # what the server managed to write before the client hung up


@lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """200 MB of JSON-ish text, gzip-encoded (about 200 KB on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = b" " * (1 << 20)
    parts = [packer.compress(b'{"issuer":"')] + [packer.compress(piece) for _ in range(HOSTILE_BYTES >> 20)]
    return b"".join(parts + [packer.flush()])


class HostileServer(ThreadingHTTPServer):
    """Answers every GET with 200 MB in `mode`: "content-length" (announced up front),
    "chunked" (no length), "gzip" (a small gzip body that decodes to 200 MB). Records how many
    bytes each answer got onto the socket before the client went away."""
    daemon_threads = True

    def __init__(self, mode: str):
        super().__init__(("127.0.0.1", 0), HostileHandler)
        self.mode = mode
        self.sent: list[int] = []
        self.done = threading.Event()
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        server: HostileServer = self.server
        server.paths.append(self.path)
        sent = 0
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if server.mode == "gzip":
                body = gzip_bomb()
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for at in range(0, len(body), PIECE):
                    self.wfile.write(body[at:at + PIECE])
                    sent += len(body[at:at + PIECE])
            else:
                chunked = server.mode == "chunked"
                self.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(HOSTILE_BYTES))))
                self.end_headers()
                piece = b'{"issuer":"' + b"A" * (PIECE - 11)
                framed = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
                while sent < HOSTILE_BYTES:
                    self.wfile.write(framed)
                    sent += PIECE
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            server.sent.append(sent)
            server.done.set()
            self.close_connection = True


@pytest.fixture
def hostile(request):
    servers: list[HostileServer] = []

    def _start(mode: str) -> HostileServer:
        server = HostileServer(mode)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield _start
    for server in servers:
        server.shutdown()
        server.server_close()


def peak_rss_kb(p) -> int:
    """VmHWM of the (still running) process, in kB."""
    with open(f"/proc/{p.proc.pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/PID/status")


def check_refused(p, reply: dict, server: HostileServer, limit: int, cut_by_length: bool) -> None:
    rss = peak_rss_kb(p)
    print(f"peak RSS {rss} kB ({server.mode}, limit {limit})")
    assert "error" in reply, f"expected an error, got a result of {len(str(reply))} characters"
    error = reply["error"]
    assert error["code"] == -51004, error
    assert error["data"]["name"] == "responseTooLarge", error
    assert error["data"]["limit"] == limit, error
    assert str(limit) in error["message"], error
    assert rss < RSS_CEILING_KB, f"peak RSS {rss} kB"
    assert server.done.wait(QUICK), "the hostile answer is still being written"
    print(f"the server wrote {max(server.sent)} bytes before the client hung up")
    if cut_by_length:
        assert max(server.sent) < CUT_SHORT, f"the server wrote {max(server.sent)} bytes before the client hung up"
    assert p.ok("ping", {}) == {}  # still serving


@pytest.mark.parametrize("mode", ["content-length", "chunked", "gzip"])
def test_a_huge_discovery_document_is_refused_at_1_mib(launch, hostile, mode):
    server = hostile(mode)
    p = launch(authority=f"{server.url}/hostile/v2.0", authorityType="oidc", knownAuthorities=[])
    reply = p.call("acquireToken", {"scopes": ["openid"], "flow": "deviceCode"}, SIGN_IN)
    assert server.paths and server.paths[0] == "/hostile/v2.0/.well-known/openid-configuration", server.paths
    check_refused(p, reply, server, IDENTITY_LIMIT, cut_by_length=mode != "gzip")


@pytest.mark.parametrize("mode", ["content-length", "chunked"])
def test_a_huge_graph_answer_is_refused_at_the_message_limit(launch, hostile, mode):
    server = hostile(mode)
    p = launch(graphEndpoint=server.url + "/")
    p.sign_in()
    reply = p.call("callGraph", {"path": "/me"}, SIGN_IN)
    assert server.paths == ["/v1.0/me"], server.paths
    check_refused(p, reply, server, MESSAGE_LIMIT, cut_by_length=True)


def test_the_graph_limit_follows_max_message_size(launch, hostile):
    server = hostile("chunked")
    p = launch("--max-message-size", str(2 << 20), graphEndpoint=server.url + "/")
    p.sign_in()
    reply = p.call("callGraph", {"path": "/me"}, SIGN_IN)
    check_refused(p, reply, server, 2 << 20, cut_by_length=True)
