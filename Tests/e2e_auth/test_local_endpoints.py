"""The local endpoints against a hostile local user: the managed-identity endpoint and the
agent socket (issue 19, items 1, 5, 6, 7). Each runs the real binary and attacks it over real
sockets; each test fails on a binary without the limit it checks."""
from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import threading
import time

import pytest

from test_adapters import Endpoint, endpoint  # noqa: F401 (fixture)
from test_verbs import RunningAgent, Verbs, verbs  # noqa: F401 (fixture)

OK_QUERY = "api-version=2019-08-01&resource=https%3A%2F%2Fgraph.microsoft.com"


def port_of(mi: Endpoint) -> int:
    return int(mi.url.split(":")[2].split("/")[0])


def raw_request(port: int, head: str, timeout: float = 10) -> bytes:
    """One request's whole answer (the endpoint closes every connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
        return answer


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def token_request(port: int, secret: str, query: str = OK_QUERY, host: str | None = None, extra: str = "") -> bytes:
    host = host or f"127.0.0.1:{port}"
    return raw_request(port, f"GET /msi/token?{query} HTTP/1.1\r\nHost: {host}\r\nX-IDENTITY-HEADER: {secret}\r\n{extra}\r\n")


def agent_path(verbs: Verbs) -> str:
    return os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")


def start_agent(verbs: Verbs, name: str) -> RunningAgent:
    """An agent on the verbs' default socket, reading the verbs' configuration file (what runs or
    reads a file as the user comes from the agent's own file: issue 47, finding 5)."""
    return RunningAgent(verbs.binary, agent_path(verbs), verbs.env,
                        verbs.tmp / f"{name}.log")


# ---- 1: a lost engine connection is reopened -------------------------------------------------

def test_managed_identity_reconnects_after_the_agent_restarts_or_is_killed(verbs, endpoint):
    verbs.ok("login")
    first = start_agent(verbs, "agent-1")
    mi = endpoint()
    try:
        assert mi.get(OK_QUERY, mi.secret)[0] == 200
        assert first.connections == 1

        first.close()  # SIGTERM: the agent finishes and closes the endpoint's connection
        second = start_agent(verbs, "agent-2")
        status, body = mi.get(OK_QUERY, mi.secret)
        assert status == 200 and body["access_token"], body
        assert second.connections == 1  # reopened on the running agent

        second.process.kill()  # kill -9: no goodbye
        second.process.wait()
        third = start_agent(verbs, "agent-3")
        assert mi.get(OK_QUERY, mi.secret)[0] == 200
        assert third.connections == 1
        third.process.kill()
        third.process.wait()
        second.log.close()
        third.log.close()

        status, body = mi.get(OK_QUERY, mi.secret)  # no agent now: an engine in the process
        assert status == 200 and body["access_token"], body
    finally:
        code, err = mi.stop()
    assert code == 0 and "engine connection lost; reconnecting" in err and body["access_token"] not in err


def test_managed_identity_answers_one_scope_while_another_scopes_refresh_is_stalled(verbs, endpoint):
    """Requests for different scopes run concurrently (a pool of engine connections): a refresh
    stalled by the service's latency does not hold back the clients of a cached scope."""
    verbs.ok("login")
    mi = endpoint()
    try:
        assert mi.get(OK_QUERY, mi.secret)[0] == 200  # Graph's token, cached
        verbs.mock.admin.counts__reset()
        verbs.mock.admin.fault(endpoint="token", type="latency", delay_ms=4000, times=1)
        stalled: list = []
        # More Storage clients than the endpoint has engine connections: they share one request.
        storage_clients = [threading.Thread(target=lambda: stalled.append(
            mi.get("api-version=2019-08-01&resource=https%3A%2F%2Fstorage.azure.com", mi.secret))) for _ in range(20)]
        for c in storage_clients:
            c.start()
        storage = storage_clients[0]
        time.sleep(0.5)  # the storage refresh is waiting on the token endpoint now
        started = time.monotonic()
        answers = []
        clients = [threading.Thread(target=lambda: answers.append(mi.get(OK_QUERY, mi.secret))) for _ in range(8)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        waited = time.monotonic() - started
        assert [a[0] for a in answers] == [200] * 8
        assert waited < 2.5, f"Graph's clients waited {waited:.2f} s behind the stalled refresh"
        assert storage.is_alive(), "the stalled refresh finished before the others were asked: the test proves nothing"
        for c in storage_clients:
            c.join()
        assert [a[0] for a in stalled] == [200] * 20, stalled
        assert verbs.mock.admin.count("token:refresh_token") == 1, "one refresh for the twenty"
    finally:
        mi.stop()


# ---- 5 and 7: slow-loris, DNS rebinding, web pages, user-assigned identities -------------------

def test_managed_identity_serves_a_real_client_while_100_slow_connections_are_open(verbs, endpoint):
    verbs.ok("login")
    mi = endpoint()
    port = port_of(mi)
    stop = threading.Event()
    slow: list[socket.socket] = []
    for _ in range(100):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"G")
        slow.append(s)

    def trickle():  # one header byte every second on every connection still open
        while not stop.wait(1.0):
            for s in slow:
                try:
                    s.send(b"E")
                except OSError:
                    pass

    threading.Thread(target=trickle, daemon=True).start()
    try:
        started = time.monotonic()
        answer = token_request(port, mi.secret)
        assert status_of(answer) == 200 and b"access_token" in answer, answer[:200]
        assert time.monotonic() - started < 2.0

        # One connection may not hold a slot for long: the whole head must be in within 5 s.
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            started = time.monotonic()
            s.sendall(b"GET /msi/token HTTP/1.1\r\n")
            answer = b""
            while not answer:
                try:
                    s.sendall(b"X")
                except OSError:
                    break
                s.settimeout(0.5)
                try:
                    answer = s.recv(4096)
                except socket.timeout:
                    continue
                except ConnectionResetError:
                    break
            elapsed = time.monotonic() - started
        assert elapsed < 7.0, elapsed
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
    finally:
        stop.set()
        for s in slow:
            s.close()
    assert mi.proc.poll() is None


def test_managed_identity_refuses_rebinding_web_pages_and_user_assigned_identities(verbs, endpoint):
    verbs.ok("login")
    mi = endpoint()
    port = port_of(mi)
    assert status_of(token_request(port, mi.secret)) == 200
    assert status_of(token_request(port, mi.secret, host=f"localhost:{port}")) == 200
    refused = {
        "rebinding host": (token_request(port, mi.secret, host=f"attacker.example:{port}"), 421),
        "no host": (raw_request(port, f"GET /msi/token?{OK_QUERY} HTTP/1.1\r\nX-IDENTITY-HEADER: {mi.secret}\r\n\r\n"), 421),
        "other port": (token_request(port, mi.secret, host=f"127.0.0.1:{port + 1}"), 421),
        "origin": (token_request(port, mi.secret, extra="Origin: https://attacker.example\r\n"), 403),
        "cross-site": (token_request(port, mi.secret, extra="Sec-Fetch-Site: cross-site\r\n"), 403),
        "no api-version": (token_request(port, mi.secret, query="resource=https%3A%2F%2Fgraph.microsoft.com"), 400),
    }
    for parameter in ("client_id=00000000-0000-0000-0000-000000000001", "mi_res_id=%2Fsubscriptions%2Fx", "object_id=abc"):
        refused[parameter] = (token_request(port, mi.secret, query=OK_QUERY + "&" + parameter), 400)
    for case, (answer, expected) in refused.items():
        assert status_of(answer) == expected, (case, answer[:200])
        body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert body["statusCode"] == expected and body["message"] and "access_token" not in body, (case, body)
    assert "user-assigned" in json.loads(token_request(port, mi.secret, query=OK_QUERY + "&client_id=x")
                                         .split(b"\r\n\r\n", 1)[1])["message"]
    assert mi.proc.poll() is None


# ---- 6: the agent at the fd limit and its connection cap ----------------------------------------

def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def initialize(path: str) -> socket.socket:
    """A connection to the agent that has sent initialize and read the answer."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')
    answer = s.makefile("rb").readline()
    assert b'"id":1' in answer, answer
    return s


def logged_agent(verbs: Verbs, tmp_path, name: str, *flags: str, ready: str = "agent listening",
                 preexec_fn=None) -> tuple[subprocess.Popen, "os.PathLike[str]"]:
    """An agent on the verbs' default socket (the verbs' configuration file) logging at info to
    NAME.log, once its log says `ready`; returns it and the log's path."""
    log_path = tmp_path / f"{name}.log"
    with open(log_path, "wb") as log:
        agent = subprocess.Popen(
            [verbs.binary, "agent", "--socket", agent_path(verbs), *flags, "--log-level", "info"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            env=verbs.env, preexec_fn=preexec_fn)
    deadline = time.monotonic() + 10
    while ready not in log_path.read_text(errors="replace"):
        if time.monotonic() > deadline or agent.poll() is not None:
            agent.kill()
            agent.wait()
            raise AssertionError(log_path.read_text(errors="replace"))
        time.sleep(0.02)
    return agent, log_path


def test_agent_rests_at_the_fd_limit_instead_of_spinning(verbs, tmp_path):
    agent, log_path = logged_agent(verbs, tmp_path, "agent-fd",
                                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48)))
    idle: list[socket.socket] = []
    try:
        for _ in range(120):  # more than the agent has descriptors: it keeps a reserve and evicts
            s = socket.socket(socket.AF_UNIX)
            s.setblocking(False)
            try:
                s.connect(agent_path(verbs))
            except (BlockingIOError, OSError):
                s.close()
                continue
            idle.append(s)
        time.sleep(0.5)
        before = cpu_seconds(agent.pid)
        time.sleep(2.0)
        used = cpu_seconds(agent.pid) - before
        assert used < 0.4, f"the agent used {used:.2f} s of CPU in 2 s while out of descriptors"
        log = log_path.read_text(errors="replace")
        assert "closed a waiting or idle connection to make room" in log or "cannot accept a connection" in log, log
        for s in idle:
            s.close()
        idle = []
        time.sleep(0.3)
        client = initialize(agent_path(verbs))  # served again once descriptors are free
        client.close()
        assert agent.poll() is None
    finally:
        for s in idle:
            s.close()
        agent.kill()
        agent.wait()


def test_agent_caps_connections_and_evicts_silent_ones_first(verbs, tmp_path):
    agent, _ = logged_agent(verbs, tmp_path, "agent-cap", "--max-connections", "4")
    sessions: list[socket.socket] = []
    try:
        silent = socket.socket(socket.AF_UNIX)
        silent.settimeout(10)
        silent.connect(agent_path(verbs))
        sessions = [initialize(agent_path(verbs)) for _ in range(3)]
        sessions.append(initialize(agent_path(verbs)))  # the 5th connection: the silent one makes room
        assert silent.recv(100) == b""
        silent.close()

        for s in sessions[1:]:  # the sessions are used; the first stays idle the longest
            s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"getAccounts","params":{}}\n')
            assert b'"id":2' in s.makefile("rb").readline()
        # 4 initialized sessions, none with anything in flight: the idlest makes room (issue 47,
        # finding 9: idle initialized sessions must not lock the socket); its client may reconnect.
        sessions.append(initialize(agent_path(verbs)))
        assert sessions[0].recv(100) == b""
        sessions.pop(0).close()
        for s in sessions:  # the others were not disturbed
            s.sendall(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}\n')
            assert b'"id":3' in s.makefile("rb").readline()
    finally:
        for s in sessions:
            s.close()
        agent.kill()
        agent.wait()


def test_a_flood_on_the_forward_socket_leaves_the_main_socket_alone(verbs, tmp_path):
    """The forward socket (the one `ssh -R` makes reachable from another machine) has its own
    accept loop: its cap and its eviction of silent connections hold, and filling it does not
    take a slot, a thread or an answer from the laptop's own agent socket."""
    forward_path = os.path.join(os.path.dirname(agent_path(verbs)), "forward.sock")
    agent, _ = logged_agent(verbs, tmp_path, "agent-forward-cap", "--forward", "--max-connections", "4",
                            ready="forward socket listening")
    flood: list[socket.socket] = []
    sessions: list[socket.socket] = []
    try:
        for _ in range(40):  # silent connections, ten times the cap: each new one evicts a silent one
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(10)
            s.connect(forward_path)
            flood.append(s)
        time.sleep(0.3)
        evicted = 0
        for s in flood[:-4]:
            s.settimeout(2)
            try:
                evicted += s.recv(100) == b""
            except (socket.timeout, ConnectionResetError):
                pass
        assert evicted >= 36 - 1, f"only {evicted} of 36 older silent connections were closed"
        speakers = []  # forwarded sessions (initialized): served, each new one making room among this peer's own
        for n in range(6):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(10)
            s.connect(forward_path)
            s.sendall(b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}\n')
            answer = json.loads(s.makefile("rb").readline())
            assert answer["id"] == 3, answer
            speakers.append(s)
        flood += speakers
        sessions = [initialize(agent_path(verbs)) for _ in range(4)]  # the main socket: its own four slots
        for s in sessions:
            s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}\n')
            assert b'"id":2' in s.makefile("rb").readline()
        assert agent.poll() is None
    finally:
        for s in flood + sessions:
            s.close()
        agent.kill()
        agent.wait()
