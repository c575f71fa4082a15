"""Issue 47's hardening of the agent's sockets (findings 1, 3, 4, 5, 6, 9), each against the real
binary over real sockets and the mock identity platform; each test fails on a binary without the
fix it checks.

The forward socket is reached directly (same user, as a container's bind mount reaches it);
test_forwarding.py covers the same socket through a real `ssh -R`."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env
from test_verbs import Verbs, verbs  # noqa: F401 (fixture)

PATH_STAND_IN = "(a file on the agent's machine)"


class Session:
    """One NDJSON connection to an agent socket."""

    def __init__(self, path: str, timeout: float = 20):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self.next_id = 0

    def call(self, method: str, params=None) -> dict:
        self.next_id += 1
        self.file.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                    "params": {} if params is None else params}).encode() + b"\n")
        self.file.flush()
        while True:
            line = self.file.readline()
            assert line, f"{method}: the connection closed"
            reply = json.loads(line)
            if reply.get("id") == self.next_id or reply.get("id") is None:
                return reply

    def result(self, method: str, params=None) -> dict:
        reply = self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class ForwardingAgent:
    """`auth-sidecar agent --forward` with a configuration file of its own (forwardScopes User.Read)."""

    def __init__(self, binary, mock, tmp_path, *flags, **config):
        directory = tmp_path / "agent"
        directory.mkdir(mode=0o700, exist_ok=True)
        self.path = str(directory / "agent.sock")
        self.forward_path = str(directory / "forward.sock")
        self.cache = str(tmp_path / "cache" / "cache.json")
        settings = {"clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
                    "cache": {"path": self.cache}, "cacheProtection": "plaintext", "scopes": ["User.Read"],
                    "forwardScopes": ["User.Read"], "graphEndpoint": mock.url + "/"}
        settings.update(config)
        self.config = tmp_path / "agent-config.json"
        self.config.write_text(json.dumps(settings))
        self.env = process_env(mock, tmp_path, env={"AUTH_SIDECAR_SOCK": self.path})
        self.log_path = tmp_path / "agent.log"
        self.process = subprocess.Popen(
            [binary, "agent", "--socket", self.path, "--forward", "--config", str(self.config), "--log-level", "info", *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "wb"), env=self.env)
        deadline = time.monotonic() + 15
        while "forward socket listening" not in self.log():
            assert time.monotonic() < deadline and self.process.poll() is None, self.log()
            time.sleep(0.02)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def laptop(self) -> Session:
        return Session(self.path)

    def forward(self) -> Session:
        return Session(self.forward_path)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def forwarding_agent(sidecar_bin, mock, tmp_path):
    started = []

    def _start(*flags, **config):
        a = ForwardingAgent(sidecar_bin, mock, tmp_path, *flags, **config)
        started.append(a)
        return a

    yield _start
    for a in started:
        a.stop()


# ---- 1: callGraph through the forward socket uses a token for exactly the allowed scopes ----

def test_forward_call_graph_never_uses_a_broader_cached_token(forwarding_agent, mock):
    agent = forwarding_agent()
    laptop = agent.laptop()
    broad = laptop.result("acquireToken", {"loginHint": ALICE, "scopes": ["User.Read", "User.Read.All"]})
    assert "User.Read.All" in broad["scopes"]
    # The laptop itself may list the directory with it (the mock's /v1.0/users needs User.Read.All).
    assert laptop.result("callGraph", {"path": "/users", "scopes": ["User.Read", "User.Read.All"]})["status"] == 200

    mock.admin.log__clear()
    remote = agent.forward()
    remote.result("initialize", {})
    for method in ("GET", "DELETE"):
        reply = remote.call("callGraph", {"path": "/users", "method": method, "scopes": ["User.Read"]})
        result = reply.get("result", {})
        assert result.get("status") != 200 and "userPrincipalName" not in json.dumps(result), reply
    # What Graph saw from the remote: never an answer with the directory.
    graph_calls = [r for r in mock.admin.log() if r["path"].startswith("/v1.0/users")]
    assert graph_calls and not [r for r in graph_calls if r["status"] == 200], graph_calls
    # The remote's own /me works, with the fresh User.Read token.
    assert remote.result("callGraph", {"path": "/me", "scopes": ["User.Read"]})["status"] == 200


# ---- 3: the forward socket tells nothing about the laptop --------------------------------

def pretty_os_name() -> str:
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "\0"


def strings(value):
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def first_error(session: Session) -> dict:
    """initialize, then a token request: the first error (a cache that cannot be read fails one of them)."""
    for method, params in (("initialize", {}), ("acquireTokenSilent", {"scopes": ["User.Read"]})):
        reply = session.call(method, params)
        if "error" in reply:
            return reply
    raise AssertionError("no error")


def test_forward_device_information_and_errors_tell_nothing_about_the_laptop(forwarding_agent, tmp_path):
    remote_info = forwarding_agent()
    remote = remote_info.forward()
    remote.result("initialize", {})
    info = remote.result("getDeviceInformation")
    uname = os.uname()
    told = set(strings(info))
    for fact in (socket.gethostname(), uname.nodename, uname.release, pretty_os_name()):
        assert fact not in told, (fact, info)
    extra = info.get("extraDeviceInformation", {})
    assert not {"hostname", "osRelease", "kernelRelease", "browserCommand", "architecture"} & set(extra), info
    assert info["deviceMode"] == "private"
    laptop_info = remote_info.laptop()
    laptop_info.result("initialize", {})
    assert laptop_info.result("getDeviceInformation")["extraDeviceInformation"]["hostname"] == uname.nodename
    remote_info.stop()

    # A cache path that is a directory: the engine refuses it naming the path (-51005).
    secret = tmp_path / "laptop-secret-dir"
    os.makedirs(secret / "cache.json", mode=0o700)
    agent = forwarding_agent(cache={"path": str(secret / "cache.json")})
    here = first_error(agent.laptop())
    assert "laptop-secret-dir" in json.dumps(here), here  # the laptop's own session is told where
    there = first_error(agent.forward())
    assert "laptop-secret-dir" not in json.dumps(there) and str(tmp_path) not in json.dumps(there), there
    assert PATH_STAND_IN in there["error"]["message"], there
    assert there["error"]["code"] == here["error"]["code"]


# ---- 4: a forced-refresh budget per forward session -------------------------------------

def refresh_grants(mock) -> int:
    """Refresh-token grants the mock's token endpoint answered (its /_admin/log)."""
    return sum(1 for r in mock.admin.log() if (r.get("form") or {}).get("grant_type") == "refresh_token")


def test_thirty_forced_refreshes_from_the_forward_socket_make_at_most_two_grants(forwarding_agent, mock):
    agent = forwarding_agent()
    agent.laptop().result("acquireToken", {"loginHint": ALICE, "scopes": ["User.Read"]})
    mock.admin.log__clear()
    remote = agent.forward()
    remote.result("initialize", {})
    tokens = [remote.result("acquireTokenSilent", {"scopes": ["User.Read"], "forceRefresh": True})["accessToken"]
              for _ in range(30)]
    grants = refresh_grants(mock)
    assert 1 <= grants <= 2, f"{grants} refresh-token grants for 30 forced refreshes"
    assert len(set(tokens)) == grants  # the rest were answered with the fresh token
    # The laptop's own forced refreshes are its own (no budget on the main socket).
    laptop = agent.laptop()
    laptop.result("initialize", {})
    laptop.result("acquireTokenSilent", {"scopes": ["User.Read"], "forceRefresh": True})
    assert refresh_grants(mock) == grants + 1


# ---- 5: program-running and file-naming settings come from the configuration file only ----

def test_initialize_on_the_agent_socket_cannot_run_a_program_whatever_the_peer(forwarding_agent, tmp_path, sidecar_bin):
    agent = forwarding_agent()
    ran = tmp_path / "ran-by-the-agent"
    refused = [
        {"cache": {"path": agent.cache, "encryption": {"keyCommand": ["/bin/touch", str(ran)]}}, "cacheProtection": "keyCommand"},
        {"cache": {"path": str(tmp_path / "elsewhere.json")}},
        {"forwardApproval": ["/bin/touch", str(ran)]},
        {"clientAssertion": {"command": ["/bin/touch", str(ran)]}},
        {"clientAssertion": {"file": agent.cache}},
    ]
    # This test's process is a python3, not an ssh: the peer's name must not matter.
    for settings in refused:
        session = agent.laptop()
        reply = session.call("initialize", {"clientId": CLIENT_ID, **settings})
        session.close()
        assert reply.get("error", {}).get("data", {}).get("name") == "forwardConfigurationRefused", (settings, reply)
        assert reply["error"]["data"]["member"] == next(iter(settings)), reply
    # The agent's own settings may be repeated (a verb reads the same file).
    same = agent.laptop()
    assert "result" in same.call("initialize", {"clientId": CLIENT_ID, "cache": {"path": agent.cache},
                                                "cacheProtection": "plaintext"})
    # A stdio relay's start-up line is held to the same rule.
    relayed = subprocess.run([sidecar_bin, "--cache", str(tmp_path / "elsewhere.json")],
                             input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, text=True,
                             env=agent.env, timeout=30)
    assert "forwardConfigurationRefused" in relayed.stdout + relayed.stderr, relayed
    time.sleep(0.3)
    assert not ran.exists()


# ---- 6: ssh-config cannot be made to write another keyword ----------------------------------

def test_ssh_config_refuses_what_would_break_out_of_the_host_block(verbs):  # noqa: F811
    if not shutil.which("ssh-keygen"):
        pytest.skip("needs ssh-keygen")
    verbs.write_config(sshCertScope="https://pas.windows.net/CheckMyAccess/Linux/.default")
    verbs.ok("login")
    injected = verbs.run("ssh-config", "vm\n    ProxyCommand touch x\nHost *")
    assert injected.returncode != 0 and "ProxyCommand" not in injected.stdout, injected
    assert "whitespace or control characters" in injected.stderr, injected.stderr
    for args, what in ((["vm", "--user", "alice smith"], "--user"), (["vm", "--user", "a\tb"], "--user"),
                       (["vm", "--key", '/tmp/k"ey'], "--key"), (["vm", "--key", "/tmp/k\ney"], "--key")):
        p = verbs.run("ssh-config", *args)
        assert p.returncode != 0 and p.stdout == "" and what in p.stderr, (args, p)
    ok = verbs.run("ssh-config", "vm.example")
    assert ok.returncode == 0 and ok.stdout.splitlines()[0] == "Host vm.example", ok


# ---- 9: idle initialized sessions do not lock a socket ----------------------------------------

def initialized(path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')
    buffered = b""
    while b"\n" not in buffered:
        chunk = s.recv(65536)
        assert chunk, "closed before initialize's answer"
        buffered += chunk
    assert b'"id":1' in buffered, buffered
    return s


def served(path: str) -> bool:
    """Whether a new client gets its answer (not tooManyConnections)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(path)
        s.sendall(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}\n')
        line = s.makefile("rb").readline()
        return b'"id":7' in line and b'"result"' in line
    except OSError:
        return False
    finally:
        s.close()


@pytest.mark.time_limit(120)
@pytest.mark.parametrize("socket_name", ["agent.sock", "forward.sock"])
@pytest.mark.parametrize("trickle", [False, True])
def test_seventy_idle_initialized_sessions_do_not_lock_a_socket_capped_at_64(forwarding_agent, socket_name, trickle):
    agent = forwarding_agent("--max-connections", "64")
    path = agent.path if socket_name == "agent.sock" else agent.forward_path
    held: list[socket.socket] = []
    stop = threading.Event()
    try:
        for _ in range(70):
            try:
                held.append(initialized(path))
            except (AssertionError, OSError):
                pass  # refused or evicted while connecting: what the old agent did to the 65th
        if trickle:  # each keeps a request coming, one byte at a time, never complete
            partial = b'{"jsonrpc":"2.0","id":2,"method":"getAccounts","params":{"username":"' + b"x" * 200

            def trickler():
                position = 0
                while not stop.is_set() and position < len(partial):
                    for s in held:
                        try:
                            s.sendall(partial[position:position + 1])
                        except OSError:
                            pass
                    position += 1
                    stop.wait(0.05)
            threading.Thread(target=trickler, daemon=True).start()
            time.sleep(0.5)
        honest = sum(served(path) for _ in range(10))
        assert honest == 10, f"{honest}/10 honest clients served with 70 idle initialized connections"
        assert agent.process.poll() is None
        log = agent.log()
        assert "closed a waiting or idle connection to make room" in log, log[-2000:]
    finally:
        stop.set()
        for s in held:
            s.close()


def test_a_session_with_a_request_in_flight_is_never_evicted(forwarding_agent, mock):
    agent = forwarding_agent("--max-connections", "4")
    busy = []
    for _ in range(4):  # each waits for a device code approval: a request in flight
        s = agent.laptop()
        s.result("initialize", {})
        s.file.write(b'{"jsonrpc":"2.0","id":9,"method":"acquireToken","params":{"flow":"deviceCode","scopes":["User.Read"]}}\n')
        s.file.flush()
        notification = json.loads(s.file.readline())
        assert notification.get("method") == "deviceCode", notification
        busy.append(s)
    extra = socket.socket(socket.AF_UNIX)
    extra.settimeout(10)
    extra.connect(agent.path)
    refusal = json.loads(extra.makefile("rb").readline())
    assert refusal["error"]["data"]["name"] == "tooManyConnections", refusal
    extra.close()
    for s in busy:  # still there
        s.sock.settimeout(0.2)
        with pytest.raises(socket.timeout):
            s.sock.recv(1)
        s.close()
