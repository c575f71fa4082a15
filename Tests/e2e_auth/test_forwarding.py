"""Agent forwarding over a real OpenSSH: the laptop's agent (`agent --forward`) signs in and
keeps the refresh token; a second local user, the "remote", reaches it through
`ssh -R <remote agent.sock>:<laptop forward.sock>` and gets access tokens for the
`forwardScopes` only, with every mode (the `token` verb, the Python client, git's credential
helper, the stdio mode).

The test starts its own sshd on 127.0.0.1 (own host key and configuration), creates the
remote user (removed afterwards) and its key. Every byte the forward socket returns passes
through a tap that records it, so "no refresh token crosses" is checked on the wire. Needs
root (useradd, sshd); skipped otherwise."""
from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, cache_secrets, process_env, read_cache

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_CLIENT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "clients", "python", "src")
DEVOPS = "499b84ac-1321-427f-aa17-267ca6975798/.default"
# The remote user's Python: the system's (the test's own may sit in a directory only root enters).
REMOTE_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "python3"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the test adds a local user and runs sshd"),
    pytest.mark.skipif(not (shutil.which("sshd") or os.path.exists("/usr/sbin/sshd")) or not shutil.which("ssh"),
                       reason="needs OpenSSH (Debian openssh-server, openssh-client; scripts/setup.sh)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


class Tap:
    """A Unix socket relaying to the forward socket and recording every byte it returns."""

    def __init__(self, path: str, target: str):
        self.path, self.target = path, target
        self.returned = bytearray()
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(path)
        self.server.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source, destination, record):
        try:
            while chunk := source.recv(65536):
                if record:
                    with self.lock:
                        self.returned += chunk
                destination.sendall(chunk)
        except OSError:
            pass
        try:  # a half-close passes on as one (the stdio relay ends its input so, then reads the replies)
            destination.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def bytes(self) -> bytes:
        with self.lock:
            return bytes(self.returned)

    def close(self):
        self.server.close()


class Forwarding:
    """The laptop (this user: agent, tap, sshd) and the remote (a new user, over ssh -R)."""

    def __init__(self, binary, mock, tmp_path, approval=None):
        self.mock, self.tmp_path = mock, tmp_path
        # Everything the remote user must reach lives under a world-traversable directory.
        self.shared = tempfile.mkdtemp(prefix="asfwd-")
        os.chmod(self.shared, 0o755)
        self.user = "asfwd%d" % (os.getpid() % 100000)
        subprocess.run(["userdel", "-r", self.user], capture_output=True)
        self.home = os.path.join(self.shared, "home")
        subprocess.run(["useradd", "-M", "-d", self.home, "-s", "/bin/sh", "-p", "*", self.user], check=True)
        entry = pwd.getpwnam(self.user)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        os.makedirs(self.home + "/.ssh", mode=0o700)
        self.runtime = os.path.join(self.shared, "run")
        os.makedirs(self.runtime + "/auth-sidecar", mode=0o700)
        os.chmod(self.runtime, 0o700)
        self.remote_socket = self.runtime + "/auth-sidecar/agent.sock"
        self.binary = os.path.join(self.shared, "auth-sidecar")
        shutil.copy(binary, self.binary)
        os.chmod(self.binary, 0o755)
        shutil.copytree(PYTHON_CLIENT, os.path.join(self.shared, "pyclient"))
        for root, dirs, files in os.walk(self.shared):
            for name in dirs + files:
                path = os.path.join(root, name)
                if path.startswith(self.home) or path.startswith(self.runtime):
                    os.chown(path, self.uid, self.gid)
                elif not os.path.islink(path):
                    os.chmod(path, 0o755)
        for path in (self.home, self.runtime):
            os.chown(path, self.uid, self.gid)
        # The laptop's agent: signs in with the mock; forwards User.Read and Azure DevOps only.
        # (Under the shared directory, so a test can open it up to the other user.)
        self.laptop = os.path.join(self.shared, "laptop")
        os.mkdir(self.laptop, 0o700)
        self.cache = str(tmp_path / "cache" / "cache.json")
        config = {"clientId": CLIENT_ID, "authority": mock.url + "/organizations",
                  "cache": {"path": self.cache}, "cacheProtection": "plaintext", "scopes": ["User.Read"],
                  "forwardScopes": ["User.Read", DEVOPS], "graphEndpoint": mock.url + "/"}
        if approval is not None:
            config["forwardApproval"] = approval
        (tmp_path / "laptop-config.json").write_text(json.dumps(config))
        self.agent_socket = os.path.join(self.laptop, "agent.sock")
        self.forward_socket = os.path.join(self.laptop, "forward.sock")
        self.env = process_env(mock, tmp_path, env={"AUTH_SIDECAR_SOCK": self.agent_socket})
        self.agent_log = tmp_path / "agent.log"
        self.agent = subprocess.Popen(
            [binary, "agent", "--socket", self.agent_socket, "--forward", "--config", str(tmp_path / "laptop-config.json")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.agent_log, "wb"), env=self.env)
        wait_for(lambda: "forward socket listening" in self.log(), "the agent")
        self.tap = Tap(os.path.join(self.laptop, "tap.sock"), self.forward_socket)
        self.sshd = self.ssh_tunnel = None
        self.tunnels = []
        self._start_ssh()

    def _start_ssh(self):
        d = self.tmp_path / "ssh"
        d.mkdir(mode=0o700)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key")], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "user_key")], check=True)
        keys = self.home + "/.ssh/authorized_keys"
        shutil.copy(str(d / "user_key.pub"), keys)
        os.chown(keys, self.uid, self.gid)
        os.chmod(keys, 0o600)
        os.chown(self.home + "/.ssh", self.uid, self.gid)
        port = free_port()
        (d / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
            "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            f"AllowUsers {self.user}\nStrictModes no\nAllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n"
            "LogLevel ERROR\n")
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(d / "sshd_config")],
                                     stdout=subprocess.DEVNULL, stderr=open(self.tmp_path / "sshd.log", "wb"))

        def listening():
            assert self.sshd.poll() is None, (self.tmp_path / "sshd.log").read_text()
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0
        wait_for(listening, "sshd")
        self.ssh_dir, self.ssh_port = d, port
        # The user's command: ssh -R <remote agent.sock>:<laptop forward.sock> (the tap in front of it).
        self.ssh_tunnel = self.forward(self.tap.path, self.remote_socket)

    def forward(self, local: str, remote: str) -> subprocess.Popen:
        """`ssh -N -R REMOTE:LOCAL` to the remote user, once the remote socket is there."""
        log = self.tmp_path / ("ssh-%d.log" % time.monotonic_ns())
        d = self.ssh_dir
        tunnel = subprocess.Popen(
            ["ssh", "-F", "/dev/null", "-N", "-i", str(d / "user_key"), "-p", str(self.ssh_port),
             "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={d}/known_hosts",
             "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
             "-R", f"{remote}:{local}", f"{self.user}@127.0.0.1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
        self.tunnels.append(tunnel)

        def forwarded():
            assert tunnel.poll() is None, log.read_text() + (self.tmp_path / "sshd.log").read_text()
            return os.path.exists(remote)
        wait_for(forwarded, "the forwarded socket on the remote")
        return tunnel

    def log(self) -> str:
        return self.agent_log.read_text(errors="replace")

    def remote(self, *argv, input=None, env=None) -> subprocess.CompletedProcess:
        """A command as the remote user, with the remote's usual environment (its own HOME and
        XDG_RUNTIME_DIR; nothing of the laptop's)."""
        e = {"PATH": "/usr/bin:/bin", "HOME": self.home, "XDG_RUNTIME_DIR": self.runtime, "LANG": "C.UTF-8",
             **(env or {})}
        return subprocess.run(list(argv), input=input, capture_output=True, text=True, env=e, cwd=self.home,
                              user=self.uid, group=self.gid, extra_groups=[], timeout=30)

    def sign_in_on_the_laptop(self):
        self.laptop_call("acquireToken", {"loginHint": ALICE, "scopes": ["User.Read"]})

    def laptop_call(self, method, params):
        """One request on the laptop's own agent socket; its result."""
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.agent_socket)
        f = s.makefile("rwb")
        f.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode() + b"\n")
        f.flush()
        reply = json.loads(f.readline())
        s.close()
        assert "result" in reply, reply
        return reply["result"]

    def close(self):
        for p in (*self.tunnels, self.sshd, self.agent):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        self.tap.close()
        for _ in range(50):  # the user's processes (sshd's session) may take a moment to go
            subprocess.run(["pkill", "-KILL", "-u", self.user], capture_output=True)
            if subprocess.run(["userdel", "-f", self.user], capture_output=True).returncode in (0, 6):
                break
            time.sleep(0.1)
        shutil.rmtree(self.shared, ignore_errors=True)


@pytest.fixture
def forwarding(sidecar_bin, mock, tmp_path):
    made = []

    def _make(**kwargs):
        f = Forwarding(sidecar_bin, mock, tmp_path, **kwargs)
        made.append(f)
        return f

    yield _make
    for f in made:
        f.close()


def test_the_remote_gets_access_tokens_from_the_laptop_and_nothing_more(forwarding):
    f = forwarding()
    f.sign_in_on_the_laptop()
    [refresh_token] = cache_secrets(f.cache, "RefreshToken")
    [id_token] = cache_secrets(f.cache, "IdToken")

    # The token verb, with the remote's default agent path ($XDG_RUNTIME_DIR/auth-sidecar/agent.sock).
    token = f.remote(f.binary, "token", "--scope", "User.Read")
    assert token.returncode == 0, token.stderr
    access_token = token.stdout.strip()
    assert access_token.count(".") == 2

    # The Python client, on the same socket.
    script = ("import json, auth_sidecar\n"
              "with auth_sidecar.SidecarClient(initialize=True) as c:\n"
              "    r = c.acquire_token_silent(['User.Read'])\n"
              "    print(json.dumps({'token': r.access_token, 'accounts': len(c.get_accounts())}))\n")
    py = f.remote(REMOTE_PYTHON, "-c", script,
                  env={"PYTHONPATH": os.path.join(f.shared, "pyclient"), "AUTH_SIDECAR_SOCK": f.remote_socket})
    assert py.returncode == 0, py.stderr
    assert json.loads(py.stdout) == {"token": access_token, "accounts": 1}

    # git's credential helper (Azure DevOps, a forwarded scope).
    git = f.remote("git", "-c", "credential.helper=", "-c", f"credential.helper=!'{f.binary}' git-credential",
                   "credential", "fill", input="protocol=https\nhost=dev.azure.com\npath=org/repo\n\n")
    assert git.returncode == 0, git.stderr
    fields = dict(line.split("=", 1) for line in git.stdout.splitlines() if "=" in line)
    assert fields["username"] == ALICE and fields["password"].count(".") == 2

    # The stdio mode relays to the forwarded agent too.
    stdio = f.remote(f.binary, input='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
                     '{"jsonrpc":"2.0","id":2,"method":"getCurrentAccount"}\n')
    replies = [json.loads(line) for line in stdio.stdout.splitlines()]
    assert replies[0]["result"]["agent"]["forwarded"] is True
    assert replies[1]["result"]["account"]["username"] == ALICE
    assert "idTokenClaims" not in replies[1]["result"]["account"]

    # status says where the agent is.
    status = f.remote(f.binary, "status")
    assert status.returncode == 0, status.stderr
    assert "forwarded agent (tokens for its forwardScopes only)" in status.stdout
    assert "forwarded agent from" not in status.stdout

    # What the forwarded agent refuses, each with a clear error.
    logout = f.remote(f.binary, "logout")
    assert logout.returncode != 0 and "signout is not allowed through a forwarded agent" in logout.stderr
    login = f.remote(f.binary, "login", "--scope", "User.Read")
    assert login.returncode != 0 and "forwardApproval" in login.stderr and "refused" in login.stderr
    mail = f.remote(f.binary, "token", "--scope", "Mail.Read")
    assert mail.returncode != 0 and "Mail.Read" in mail.stderr and "forwardScopes" in mail.stderr

    # On the wire: never a refresh token (the first, or the one a refresh for Azure DevOps
    # brought), never a raw ID token.
    wire = f.tap.bytes()
    assert access_token.encode() in wire
    secrets = {refresh_token, id_token, *cache_secrets(f.cache, "RefreshToken"), *cache_secrets(f.cache, "IdToken")}
    assert not [s for s in secrets if s.encode() in wire]
    # The laptop logged the tokens handed out (each peer's scopes at once the first time in a
    # minute, repeats counted in one line a minute; never the token).
    log = f.log()
    handed = [line for line in log.splitlines() if "token handed out through the forward socket" in line]
    # the scopes of the token that left (granted, then the .default asked)
    assert any("scopes=User.Read" in line for line in handed) and any(DEVOPS in line for line in handed), log
    assert access_token not in log and not [s for s in secrets if s in log]
    # The account is still signed in on the laptop: the remote's signout changed nothing.
    assert len(cache_secrets(f.cache, "RefreshToken")) == 1 and "Removed" not in log


def test_the_laptop_sees_forwarded_sessions_and_other_users_stay_out(forwarding, sidecar_bin):
    f = forwarding()
    # A session held open on the remote side (through ssh, the tap and the forward socket).
    held = socket.socket(socket.AF_UNIX)
    held.connect(f.remote_socket)
    held.sendall(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert b'"result"' in held.recv(4096)
    status = subprocess.run([sidecar_bin, "status"], capture_output=True, text=True, env=f.env, timeout=30)
    assert "1 forwarded session on " + f.forward_socket in status.stdout, status.stdout + status.stderr
    held.close()
    # Forwarding the main socket instead works as before, with a warning on the laptop.
    main = f.runtime + "/auth-sidecar/main.sock"
    f.forward(f.agent_socket, main)
    through = f.remote(REMOTE_PYTHON, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                       "s.sendall(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\\n'); print(s.recv(100))", main)
    assert '"result"' in through.stdout, through
    wait_for(lambda: "comes through ssh" in f.log(), "the warning")
    # Through ssh, the main socket runs no command and opens no file the remote names: a key
    # command, a key file or another cache path is refused, in initialize and in the relay's preamble.
    ran = os.path.join(f.shared, "ran-by-the-agent")
    for settings in ({"cache": {"path": f.cache, "encryption": {"keyCommand": ["/bin/touch", ran]}}, "cacheProtection": "keyCommand"},
                     {"cache": {"path": "/tmp/elsewhere.json"}}, {"forwardApproval": ["/bin/true"]},
                     {"clientAssertion": {"command": ["/bin/touch", ran]}}, {"clientAssertion": {"file": f.cache}}):
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientId": CLIENT_ID, **settings}})
        out = f.remote(REMOTE_PYTHON, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                       "s.sendall(sys.argv[2].encode() + b'\\n'); print(s.recv(4000).decode())", main, hello)
        reply = json.loads(out.stdout)
        assert reply["error"]["data"]["name"] == "forwardConfigurationRefused", reply
        assert reply["error"]["data"]["member"] == next(iter(settings)), reply
    relayed = f.remote(f.binary, "--cache", "/tmp/elsewhere.json", input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                       env={"AUTH_SIDECAR_SOCK": main})
    assert "forwardConfigurationRefused" in relayed.stdout + relayed.stderr, relayed
    assert not os.path.exists(ran)
    # The laptop agent's SO_PEERCRED rule still refuses the other user on both of its sockets,
    # even with the directory and the sockets opened up (the last line of defence).
    os.chmod(f.laptop, 0o755)
    for path in (f.agent_socket, f.forward_socket):
        os.chmod(path, 0o666)
        probe = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1]); "
                 "s.sendall(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\\n'); print(repr(s.recv(100)))")
        out = f.remote(REMOTE_PYTHON, "-c", probe, path)
        assert out.stdout.strip() in ("b''", ""), out
    assert f.log().count("refused a connection from another user") == 2


def test_a_sign_in_from_the_remote_runs_on_the_laptop_once_approved(forwarding, tmp_path):
    asked = tmp_path / "asked.txt"
    approve = tmp_path / "approve.sh"
    approve.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > '{asked}'\nexit 0\n")
    approve.chmod(0o700)
    f = forwarding(approval=[str(approve)])
    login = f.remote(f.binary, "login", "--scope", "User.Read", "--login-hint", ALICE)
    assert login.returncode == 0, login.stderr + f.log()
    question = asked.read_text()
    assert "forwarded session" in question and "User.Read" in question and "pid" in question
    assert cache_secrets(f.cache, "RefreshToken"), "the laptop keeps the sign-in"
    [refresh_token] = cache_secrets(f.cache, "RefreshToken")
    assert refresh_token.encode() not in f.tap.bytes()


def test_no_token_beyond_forward_scopes_crosses_ssh_whatever_the_remote_asks(forwarding):
    f = forwarding()
    # The laptop signs in for a broader token (User.Read and Mail.Read): the cache's superset
    # lookup would find it for a request naming no resource, or for User.Read.
    broad = f.laptop_call("acquireToken", {"loginHint": ALICE, "scopes": ["User.Read", "Mail.Read"]})
    assert "Mail.Read" in broad["scopes"]
    asks = [{}, {"scopes": []}, {"scopes": [""]}, {"scopes": ["openid"]}, {"scopes": ["profile"]},
            {"scopes": ["offline_access"]}, {"scopes": ["User.Read"]}]
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}]
    lines += [{"jsonrpc": "2.0", "id": i + 1, "method": "acquireTokenSilent", "params": p} for i, p in enumerate(asks)]
    lines += [{"jsonrpc": "2.0", "id": 100, "method": "acquireTokenSilent",
               "params": {"scopes": ["User.Read"], "authority": f.mock.url + "/guest-tenant"}},
              {"jsonrpc": "2.0", "id": 101, "method": "callGraph", "params": {"path": "/me", "scopes": []}},
              {"jsonrpc": "2.0", "id": 102, "method": "initialize", "params": {}}]
    stdio = f.remote(f.binary, input="".join(json.dumps(m) + "\n" for m in lines))
    replies = {r["id"]: r for r in map(json.loads, stdio.stdout.splitlines())}
    hello = replies[0]["result"]
    assert set(hello["configuration"]) == {"clientId", "authority", "scopes"}, hello
    assert hello["forward"]["scopes"] == ["User.Read", DEVOPS] and hello["agent"] == {"forwarded": True}
    assert f.cache not in stdio.stdout
    assert socket.gethostname() not in json.dumps(hello)  # (not the whole output: a short host name may be in a token's base64)
    for i in range(1, len(asks) + 1):
        assert replies[i]["result"]["scopes"] == ["User.Read"], replies[i]
    assert replies[100]["error"]["data"]["name"] == "forwardConfigurationRefused"
    assert replies[100]["error"]["data"]["member"] == "authority"
    assert replies[101].get("result", {}).get("status") == 200, replies[101]
    # Nothing of the broader token crossed (the tap records every byte the forward socket returned).
    wire = f.tap.bytes()
    broad_tokens = [e["secret"] for e in read_cache(f.cache).get("AccessToken", {}).values() if "Mail.Read" in e["target"]]
    assert broad["accessToken"].encode() not in wire and not [t for t in broad_tokens if t.encode() in wire]
    assert b"Mail.Read" not in wire
    # The laptop's log names the scopes of every token that left, and no guest realm was added.
    handed = [line for line in f.log().splitlines() if "token handed out through the forward socket" in line]
    assert handed and all("scopes=User.Read" in line for line in handed), handed  # summarized: once per peer and scopes a minute
    assert not [e for e in read_cache(f.cache).get("AccessToken", {}).values() if e["realm"] == "guest-tenant"]
