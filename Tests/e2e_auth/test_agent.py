"""auth-sidecar agent: one engine on a Unix socket for all of a user's programs.

Stdio processes started by `launch` (AUTH_SIDECAR_SOCK = the test's socket) forward to the
agent when it runs; raw socket clients speak the protocol directly."""
from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env

SCOPES = ["User.Read"]


class Agent:
    def __init__(self, binary, mock, tmp_path, *args, socket_path=None, config=True, log_level="debug", descriptors=None):
        self.path = socket_path or str(tmp_path / "agent" / "agent.sock")
        self.env = process_env(mock, tmp_path)
        argv = [binary, "agent", "--socket", self.path, "--log-level", log_level, *args]
        if config:
            argv += ["--client-id", CLIENT_ID, "--authority", mock.url + "/organizations",
                     "--cache", str(tmp_path / "cache" / "cache.json"), "--cache-protection", "plaintext"]
        self.stderr = open(tmp_path / "agent-stderr.log", "wb")
        limit = None if descriptors is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors,) * 2))
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=self.stderr, env=self.env, preexec_fn=limit)
        self.log_path = tmp_path / "agent-stderr.log"

    def wait_listening(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "agent listening" in self.log_path.read_text(errors="replace"):
                return self
            assert self.process.poll() is None, self.log()
            time.sleep(0.02)
        raise AssertionError("agent did not start: " + self.log())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


@pytest.fixture
def agent(sidecar_bin, mock, tmp_path):
    started = []

    def _start(*args, **kwargs):
        a = Agent(sidecar_bin, mock, tmp_path, *args, **kwargs)
        started.append(a)
        return a

    yield _start
    for a in started:
        a.stop()


class RawClient:
    """A client on the socket itself, NDJSON."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(20)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")

    def send(self, message):
        self.file.write(json.dumps(message).encode() + b"\n")
        self.file.flush()

    def call(self, rid, method, params=None):
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            reply = json.loads(self.file.readline())
            if reply.get("id") == rid:
                return reply

    def close(self):
        self.sock.close()


def test_stdio_processes_share_one_engine_and_one_refresh(agent, launch, mock):
    a = agent().wait_listening()
    mock.admin.config(access_token_lifetime=301)  # due for refresh (5-minute margin) a second later
    first = launch(initialize=False)
    first.initialize(cache=None)  # the agent's configuration (its cache)
    signed_in = first.sign_in(loginHint=ALICE)
    time.sleep(1.2)
    mock.admin.counts__reset()
    processes = [launch(initialize=False) for _ in range(8)]
    for p in processes:
        p.initialize(cache=None)
    results = [None] * len(processes)

    def silent(i):
        results[i] = processes[i].silent()

    threads = [threading.Thread(target=silent, args=(i,)) for i in range(len(processes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tokens = {r["accessToken"] for r in results}
    assert len(tokens) == 1 and signed_in["accessToken"] not in tokens
    assert mock.admin.count("token:refresh_token") == 1, mock.admin.counts()
    assert a.log().count("connection opened") == 9, "every process went through the agent"


def test_socket_is_private_and_one_agent_per_socket(agent, sidecar_bin, mock, tmp_path):
    a = agent().wait_listening()
    directory = os.path.dirname(a.path)
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700
    assert stat.S_ISSOCK(os.lstat(a.path).st_mode) and stat.S_IMODE(os.lstat(a.path).st_mode) == 0o600
    lock = os.lstat(a.path + ".lock").st_ino
    for _ in range(2):  # the refused second leaves the running agent's lock in place
        second = subprocess.run([sidecar_bin, "agent", "--socket", a.path], capture_output=True, text=True,
                                env=a.env, timeout=10)
        assert second.returncode != 0 and "already running" in second.stderr and a.path in second.stderr, second
        assert second.stdout == ""
        assert os.lstat(a.path + ".lock").st_ino == lock
    assert a.process.poll() is None


def test_a_killed_agent_leaves_nothing_that_blocks_the_next(agent):
    first = agent().wait_listening()
    first.process.send_signal(signal.SIGKILL)
    first.process.wait()
    assert os.path.exists(first.path)  # a dead agent's socket
    again = agent().wait_listening()
    client = RawClient(again.path)
    assert "result" in client.call(1, "ping")


@pytest.mark.parametrize("plant", ["symlinked-directory", "foreign-directory", "open-directory", "foreign-file"])
def test_unsafe_socket_paths_are_refused(sidecar_bin, mock, tmp_path, plant):
    base = tmp_path / "planted"
    base.mkdir()
    directory = base / "dir"
    if plant == "symlinked-directory":
        target = base / "elsewhere"
        target.mkdir(mode=0o700)
        directory.symlink_to(target)
    else:
        directory.mkdir(mode=0o700)
        if plant == "foreign-directory":
            os.chown(directory, 65534, 65534)
        elif plant == "open-directory":
            os.chmod(directory, 0o777)
        else:
            (directory / "agent.sock").write_text("not a socket")
            os.chown(directory / "agent.sock", 65534, 65534)
    path = str(directory / "agent.sock")
    run = subprocess.run([sidecar_bin, "agent", "--socket", path], capture_output=True, text=True,
                         env=process_env(mock, tmp_path), timeout=10)
    assert run.returncode != 0 and str(directory) in run.stderr, run
    assert sorted(os.listdir(directory)) == (["agent.sock"] if plant == "foreign-file" else []), "left behind"
    # A stdio process never forwards to such a path either: it serves standalone.
    out = subprocess.run([sidecar_bin], input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                         text=True, env={**process_env(mock, tmp_path), "AUTH_SIDECAR_SOCK": path}, timeout=10)
    assert json.loads(out.stdout)["result"] == {}


def test_another_users_connection_is_refused(agent, tmp_path):
    # A path another user can reach (pytest's own temporary directories are private).
    base = f"/tmp/auth-sidecar-peer-{os.getpid()}-{time.monotonic_ns()}"
    os.mkdir(base, 0o755)
    a = agent(socket_path=base + "/dir/agent.sock").wait_listening()
    # Simulate a misconfigured directory: the uid check is the last line of defence.
    os.chmod(os.path.dirname(a.path), 0o777)
    os.chmod(a.path, 0o666)
    probe = ("import json,os,socket; os.setgid(65534); os.setuid(65534); s=socket.socket(socket.AF_UNIX); "
             f"s.settimeout(5); s.connect({a.path!r}); "
             "s.sendall(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\\n'); print(repr(s.recv(100)))")
    out = subprocess.run(["python3", "-c", probe], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() in ("b''", ""), out
    assert "refused a connection from another user" in a.log()
    client = RawClient(a.path)
    assert "result" in client.call(1, "ping")
    a.stop()
    subprocess.run(["rm", "-rf", base])


def test_garbage_and_vanishing_clients_do_not_disturb_others(agent, launch):
    a = agent().wait_listening()
    steady = RawClient(a.path)
    junk = RawClient(a.path)
    junk.sock.sendall(b"\x00\xff garbage {{{\n" * 50)
    vanishing = RawClient(a.path)
    vanishing.send({"jsonrpc": "2.0", "id": 9, "method": "acquireTokenSilent", "params": {"scopes": SCOPES}})
    vanishing.sock.shutdown(socket.SHUT_RDWR)
    vanishing.close()
    half = RawClient(a.path)
    half.sock.sendall(b'{"jsonrpc":"2.0","id":1,"meth')
    half.close()
    lsp = socket.socket(socket.AF_UNIX)
    lsp.connect(a.path)
    body = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
    lsp.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert b"Content-Length:" in lsp.recv(200)  # framing detected per connection
    for i in range(1, 4):
        assert "result" in steady.call(i, "getAccounts")
    assert a.process.poll() is None


def test_idle_timeout_and_sigterm_remove_the_socket(agent, mock):
    idle = agent("--idle-timeout", "1").wait_listening()
    assert idle.process.wait(timeout=10) == 0
    assert not os.path.exists(idle.path)

    busy = agent().wait_listening()
    client = RawClient(busy.path)
    mock.admin.fault(endpoint="openid-configuration", type="latency", delay_ms=1500, times=1)
    assert "result" in client.call(1, "ping")
    # Alone (the engine's threads are started at the agent's start: a second request could
    # run first and take the slow discovery).
    client.send({"jsonrpc": "2.0", "id": 2, "method": "acquireTokenSilent", "params": {"scopes": SCOPES}})
    time.sleep(0.3)  # the silent request is waiting on the slow discovery
    busy.process.send_signal(signal.SIGTERM)
    reply = json.loads(client.file.readline())
    assert reply["id"] == 2 and ("error" in reply or "result" in reply), reply  # answered, not dropped
    assert busy.process.wait(timeout=15) == 0
    assert not os.path.exists(busy.path)


def test_notifications_go_to_the_connection_that_asked(agent, mock):
    a = agent().wait_listening()
    asking, other = RawClient(a.path), RawClient(a.path)
    asking.send({"jsonrpc": "2.0", "id": 1, "method": "acquireToken",
                 "params": {"scopes": SCOPES, "flow": "deviceCode"}})
    notification = json.loads(asking.file.readline())
    assert notification["method"] == "deviceCode", notification
    mock.admin.devicecode(user_code="latest", action="approve", username=ALICE)
    reply = json.loads(asking.file.readline())
    assert reply["id"] == 1 and reply["result"]["account"]["username"] == ALICE, reply
    # The other connection saw nothing of it, and shares the engine: the token is cached for it.
    other.sock.settimeout(0.3)
    with pytest.raises(socket.timeout):
        other.sock.recv(1)
    other.sock.settimeout(20)
    silent = other.call(2, "acquireTokenSilent", {"scopes": SCOPES})
    assert silent["result"]["fromCache"] is True and silent["result"]["accessToken"] == reply["result"]["accessToken"]


@pytest.mark.parametrize("plant", ["a file", "a socket in an open directory"])
def test_a_stdio_process_says_it_ignores_a_socket_not_the_users_own(sidecar_bin, mock, tmp_path, plant):
    """One rule for every client and mode (README "The agent"): a socket found (not named)
    that is not the user's own is never connected to; one stderr line says so and the
    process serves standalone, as the verbs and the Python and Node clients do."""
    directory = tmp_path / "planted"
    directory.mkdir(mode=0o700)
    path = directory / "agent.sock"
    listener = None
    if plant == "a file":
        path.write_text("not a socket")
    else:
        os.chmod(directory, 0o777)
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.listen(4)
        listener.setblocking(False)
    try:
        out = subprocess.run([sidecar_bin], input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                             text=True, env={**process_env(mock, tmp_path), "AUTH_SIDECAR_SOCK": str(path)}, timeout=10)
        assert json.loads(out.stdout)["result"] == {}, out
        said = [line for line in out.stderr.splitlines() if "ignoring the agent socket" in line]
        assert len(said) == 1 and str(path) in said[0] and "running without the agent" in said[0], out.stderr
        if listener is not None:
            with pytest.raises(BlockingIOError):
                listener.accept()  # nothing ever connected
    finally:
        if listener is not None:
            listener.close()


def test_a_ping_connection_and_a_token_verb_share_one_engine(agent, sidecar_bin, mock, tmp_path):
    """An engine per cache identity: the verb's `browser: "client"` is its session's own option."""
    config = tmp_path / "agent-config.json"
    config.write_text(json.dumps({"knownAuthorities": ["127.0.0.1"]}))
    a = agent("--config", str(config)).wait_listening()
    editor = RawClient(a.path)
    assert "result" in editor.call(1, "initialize", {})
    assert "result" in editor.call(2, "ping")
    signed_in = editor.call(3, "acquireToken", {"loginHint": ALICE, "scopes": SCOPES})
    assert "result" in signed_in, signed_in
    token = subprocess.run([sidecar_bin, "token"], capture_output=True, text=True, timeout=30,
                           env={**a.env, "AUTH_SIDECAR_SOCK": a.path})
    assert token.returncode == 0, token.stderr + a.log()
    assert token.stdout.strip() == signed_in["result"]["accessToken"], "the verb's engine is the editor's: its memory, its token"
    probe = RawClient(a.path)
    assert probe.call(1, "initialize", {})["result"]["agent"]["engines"] == 1
    editor.close()
    probe.close()
