"""Drive the real auth-sidecar binary over real pipes.

Every read and every write has a deadline; nothing here can hang a test run.
Replies are parsed strictly: stdout must contain protocol messages and nothing
else, in the framing the test expects (NDJSON lines or LSP frames).
"""
from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import signal
import subprocess
import threading
import time
from typing import Any, Iterable

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(REPO, ".build", "release", "auth-sidecar")
DEFAULT_TIMEOUT = 10.0

NDJSON = "ndjson"
LSP = "lsp"
FRAMINGS = (NDJSON, LSP)


def binary_path() -> str:
    return os.environ.get("AUTH_SIDECAR_BIN") or DEFAULT_BINARY


def require_binary() -> str:
    """The binary's path; the test is skipped when it is missing, or fails when env CI is set."""
    import pytest

    path = binary_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        reason = (f"auth-sidecar binary not found at {path} "
                  f"(set AUTH_SIDECAR_BIN or build it with `scripts/build.sh`, the release build)")
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return path


@contextlib.contextmanager
def time_limit(seconds: int, what: str):
    """A per-test backstop (SIGALRM): every read and write here has its own deadline; this
    only guards against a bug in a suite itself."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise TimeoutError(f"{what} exceeded {seconds}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


OPENRPC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "protocol", "openrpc.json")


def protocol_requests(status: str) -> list[str]:
    """Client-to-server requests with this x-status ("implemented" | "planned") in
    protocol/openrpc.json, the single record of what this build answers."""
    with open(OPENRPC, encoding="utf-8") as f:
        methods = json.load(f)["methods"]
    return [m["name"] for m in methods
            if m.get("x-status") == status and m.get("x-kind") == "request"
            and m.get("x-direction") == "clientToServer"]


class ProtocolViolation(AssertionError):
    """stdout carried something that is not a well-formed protocol message."""


class ReadTimeout(AssertionError):
    """The sidecar did not answer within the deadline."""


# --------------------------------------------------------------------------
# Encoding


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def frame(body: bytes | Any, framing: str) -> bytes:
    """Frame one message. `body` is raw bytes (sent as is) or a JSON value."""
    if not isinstance(body, (bytes, bytearray)):
        body = dumps(body)
    body = bytes(body)
    if framing == NDJSON:
        return body + b"\n"
    if framing == LSP:
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    raise ValueError(framing)


def req(method: str, params: Any = None, id: Any = None, *, no_params: bool = False) -> dict:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if not no_params and params is not None:
        msg["params"] = params
    msg["id"] = id
    return msg


def note(method: str, params: Any = None) -> dict:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def id_key(id: Any) -> str:
    """A dict key that keeps 1, 1.0, "1", true and null apart."""
    return json.dumps(id)


# --------------------------------------------------------------------------
# Strict decoding and validation


def strict_loads(data: bytes) -> Any:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtocolViolation(f"reply is not UTF-8: {e}: {bytes(data)[:200]!r}")

    def pairs(p):
        keys = [k for k, _ in p]
        if len(set(keys)) != len(keys):
            raise ProtocolViolation(f"duplicate keys in reply object: {keys}")
        return dict(p)

    def bad_constant(c):
        raise ProtocolViolation(f"non-JSON constant {c} in reply")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=bad_constant)
    except json.JSONDecodeError as e:
        raise ProtocolViolation(f"reply is not JSON: {e}: {text[:300]!r}")


def check_response(msg: Any) -> None:
    """Assert one JSON-RPC 2.0 response object is well-formed."""
    if not isinstance(msg, dict):
        raise ProtocolViolation(f"response is not an object: {msg!r}")
    if msg.get("jsonrpc") != "2.0":
        raise ProtocolViolation(f'response without "jsonrpc":"2.0": {msg!r}')
    if "id" not in msg:
        raise ProtocolViolation(f"response without id: {msg!r}")
    rid = msg["id"]
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, (str, int, float))):
        raise ProtocolViolation(f"response id of a wrong type: {msg!r}")
    if ("result" in msg) == ("error" in msg):
        raise ProtocolViolation(f"response needs exactly one of result/error: {msg!r}")
    extra = set(msg) - {"jsonrpc", "id", "result", "error"}
    if extra:
        raise ProtocolViolation(f"response has unexpected members {sorted(extra)}: {msg!r}")
    if "error" in msg:
        err = msg["error"]
        if not isinstance(err, dict):
            raise ProtocolViolation(f"error is not an object: {msg!r}")
        code = err.get("code")
        if isinstance(code, bool) or not isinstance(code, int):
            raise ProtocolViolation(f"error code is not an integer: {msg!r}")
        if not isinstance(err.get("message"), str):
            raise ProtocolViolation(f"error message is not a string: {msg!r}")
        extra = set(err) - {"code", "message", "data"}
        if extra:
            raise ProtocolViolation(f"error has unexpected members {sorted(extra)}: {msg!r}")
        # Design decision: every error carries data.name.
        data = err.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise ProtocolViolation(f"error without data.name: {msg!r}")


def check_reply(msg: Any) -> None:
    """A reply is a response object or a non-empty array of them."""
    if isinstance(msg, list):
        if not msg:
            raise ProtocolViolation("empty array sent as a batch reply")
        for m in msg:
            check_response(m)
    else:
        check_response(msg)


def split_stream(data: bytes, framing: str) -> list[bytes]:
    """Split a complete stdout capture into message bodies, strictly."""
    bodies: list[bytes] = []
    pos = 0
    while pos < len(data):
        body, pos = _next_body(data, pos, framing, eof=True)
        bodies.append(body)
    return bodies


def _next_body(buf, pos: int, framing: str, eof: bool):
    """Return (body, new_pos) or (None, pos) when more bytes are needed."""
    if framing == NDJSON:
        idx = buf.find(b"\n", pos)
        if idx < 0:
            if eof and pos < len(buf):
                raise ProtocolViolation(f"stdout ends with an unterminated line: {bytes(buf[pos:pos+200])!r}")
            return None, pos
        line = bytes(buf[pos:idx])
        if not line.strip():
            raise ProtocolViolation(f"blank line on stdout at byte {pos}")
        return line, idx + 1
    # LSP
    idx = buf.find(b"\r\n\r\n", pos)
    if idx < 0:
        if eof and pos < len(buf):
            raise ProtocolViolation(f"stdout ends inside an LSP header: {bytes(buf[pos:pos+200])!r}")
        if len(buf) - pos > 4096:
            raise ProtocolViolation(f"no LSP header end on stdout: {bytes(buf[pos:pos+200])!r}")
        return None, pos
    header = bytes(buf[pos:idx]).decode("ascii", "replace")
    length = None
    for line in header.split("\r\n"):
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise ProtocolViolation(f"malformed LSP header line {line!r} on stdout")
        if name.lower() == "content-length":
            v = value.strip()
            if not v.isdigit():
                raise ProtocolViolation(f"bad Content-Length {line!r} on stdout")
            if length is not None:
                raise ProtocolViolation("two Content-Length headers on stdout")
            length = int(v)
    if length is None:
        raise ProtocolViolation(f"LSP header without Content-Length on stdout: {header!r}")
    start = idx + 4
    if len(buf) < start + length:
        if eof:
            raise ProtocolViolation(
                f"stdout ends inside an LSP body (Content-Length {length}, {len(buf) - start} bytes there)")
        return None, pos
    return bytes(buf[start:start + length]), start + length


# --------------------------------------------------------------------------
# The process


class Sidecar:
    def __init__(self, argv: list[str], framing: str = NDJSON, env: dict | None = None,
                 stderr_path: str | None = None, cwd: str | None = None):
        self.argv = argv
        self.framing = framing
        self.stderr_path = stderr_path or os.devnull
        self._stderr_file = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr_file, env=env, cwd=cwd, bufsize=0)
        self._stdin_fd = self.proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._buf = bytearray()
        self._pos = 0
        self._eof = False
        self._cond = threading.Condition()
        self.inbox: collections.deque = collections.deque()
        self.received: list[Any] = []      # every parsed message, in arrival order
        self.raw: list[bytes] = []         # every body, in arrival order
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ---- reading -------------------------------------------------------
    def _read_loop(self) -> None:
        fd = self.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            with self._cond:
                if not chunk:
                    self._eof = True
                    self._cond.notify_all()
                    return
                self._buf += chunk
                self._cond.notify_all()

    def stdout_bytes(self) -> bytes:
        with self._cond:
            return bytes(self._buf)

    def _take(self, deadline: float):
        """Next parsed message, None at EOF; ReadTimeout past the deadline."""
        with self._cond:
            while True:
                body, newpos = _next_body(self._buf, self._pos, self.framing, self._eof)
                if body is not None:
                    self._pos = newpos
                    break
                if self._eof:
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ReadTimeout(
                        f"no complete message within the deadline; unread stdout: "
                        f"{bytes(self._buf[self._pos:self._pos + 300])!r}; stderr tail: {self.stderr_tail()!r}")
                self._cond.wait(left)
        msg = strict_loads(body)
        self.raw.append(body)
        self.received.append(msg)
        return msg

    def next_message(self, timeout: float = DEFAULT_TIMEOUT):
        """The next message not yet consumed (None at EOF)."""
        if self.inbox:
            return self.inbox.popleft()
        return self._take(time.monotonic() + timeout)

    def wait_for(self, id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """The response with this id (other messages stay queued)."""
        key = id_key(id)
        for i, m in enumerate(self.inbox):
            if isinstance(m, dict) and "id" in m and id_key(m["id"]) == key:
                del self.inbox[i]
                return m
        deadline = time.monotonic() + timeout
        while True:
            m = self._take(deadline)
            if m is None:
                raise ReadTimeout(f"stdout closed before the reply to id {key}; "
                                  f"exit={self.proc.poll()} stderr tail: {self.stderr_tail()!r}")
            if isinstance(m, dict) and "id" in m and id_key(m["id"]) == key:
                return m
            self.inbox.append(m)

    def wait_for_batch(self, timeout: float = DEFAULT_TIMEOUT) -> list:
        for i, m in enumerate(self.inbox):
            if isinstance(m, list):
                del self.inbox[i]
                return m
        deadline = time.monotonic() + timeout
        while True:
            m = self._take(deadline)
            if m is None:
                raise ReadTimeout("stdout closed before a batch reply")
            if isinstance(m, list):
                return m
            self.inbox.append(m)

    def expect_silence(self, duration: float = 0.3) -> None:
        """Assert that nothing arrives within `duration` seconds."""
        if self.inbox:
            raise AssertionError(f"unexpected message: {self.inbox[0]!r}")
        try:
            m = self._take(time.monotonic() + duration)
        except ReadTimeout:
            return
        if m is not None:
            raise AssertionError(f"unexpected message: {m!r}")

    # ---- writing -------------------------------------------------------
    def send_raw(self, data: bytes, timeout: float = DEFAULT_TIMEOUT) -> None:
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReadTimeout(f"the sidecar stopped reading stdin ({len(view)} bytes not written)")
            _, w, _ = select.select([], [self._stdin_fd], [], left)
            if not w:
                continue
            try:
                n = os.write(self._stdin_fd, view)
            except BlockingIOError:
                continue
            view = view[n:]

    def send(self, msg: Any, framing: str | None = None) -> None:
        self.send_raw(frame(msg, framing or self.framing))

    def send_many(self, msgs: Iterable[Any], framing: str | None = None) -> None:
        self.send_raw(b"".join(frame(m, framing or self.framing) for m in msgs))

    def request(self, method: str, params: Any = None, id: Any = 1, timeout: float = DEFAULT_TIMEOUT,
                no_params: bool = False) -> dict:
        self.send(req(method, params, id, no_params=no_params))
        return self.wait_for(id, timeout)

    def ping(self, id: Any = "ping", timeout: float = DEFAULT_TIMEOUT) -> dict:
        r = self.request("ping", {}, id, timeout)
        assert r == {"jsonrpc": "2.0", "id": id, "result": {}}, r
        return r

    # ---- ending --------------------------------------------------------
    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise ReadTimeout(f"the sidecar did not exit within {timeout}s; stderr tail: {self.stderr_tail()!r}")

    def drain(self, timeout: float = DEFAULT_TIMEOUT) -> list:
        """Read until stdout closes; return the messages not yet consumed."""
        deadline = time.monotonic() + timeout
        out = list(self.inbox)
        self.inbox.clear()
        while True:
            m = self._take(deadline)
            if m is None:
                return out
            out.append(m)

    def finish(self, timeout: float = DEFAULT_TIMEOUT) -> tuple[list, int]:
        """Close stdin, read to EOF, wait for the exit; (unconsumed messages, exit code)."""
        self.close_stdin()
        msgs = self.drain(timeout)
        return msgs, self.wait_exit(timeout)

    def signal(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.close_stdin()
        self._reader.join(2)
        try:
            self._stderr_file.close()
        except OSError:
            pass

    def stderr_text(self) -> str:
        try:
            self._stderr_file.flush()
        except (OSError, ValueError):
            pass
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stderr_tail(self, n: int = 800) -> str:
        return self.stderr_text()[-n:]


# --------------------------------------------------------------------------
# Assertion helpers


def assert_error(msg: Any, code: int, id: Any = ..., name: str | None = None) -> dict:
    check_response(msg)
    assert "error" in msg, f"expected error {code}, got {msg!r}"
    assert msg["error"]["code"] == code, f"expected error {code}, got {msg!r}"
    if id is not ...:
        assert id_key(msg["id"]) == id_key(id), f"expected id {id!r}, got {msg!r}"
    if name is not None:
        assert msg["error"]["data"]["name"] == name, f"expected data.name {name!r}, got {msg!r}"
    return msg["error"]


def assert_result(msg: Any, id: Any = ..., result: Any = ...) -> Any:
    check_response(msg)
    assert "result" in msg, f"expected a result, got {msg!r}"
    if id is not ...:
        assert id_key(msg["id"]) == id_key(id), f"expected id {id!r}, got {msg!r}"
    if result is not ...:
        assert msg["result"] == result, f"expected result {result!r}, got {msg!r}"
    return msg["result"]
