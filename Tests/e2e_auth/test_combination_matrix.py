"""The combination matrix (#46 item 6): each door × each backend × each token kind answers a
token of the kind asked, or a refusal by name (-51016 tokenKindNotServed; on the forward
socket its own -51014 for a parameter its table does not name) — never another kind.

Doors: stdio, the agent socket, the forward socket, the `token` and `ssh-cert` verbs, the az
shim, the managed-identity endpoint, azd's endpoint, the kubectl and git helpers. Backends:
the engine's flows against the mock, the broker stand-in (broker "required"), the app identity
(CI federation with clientAssertion). Kinds: bearer, SSH certificate (asked where a door can
ask for one: the JSON-RPC doors and `ssh-cert`; the other doors' protocols only carry bearer
tokens), proof-of-possession (the JSON-RPC doors, `token --pop-*` and `kubectl-credential --pop-claims`: the flows sign with the
sidecar's key, the broker answers its own signed request; the app identity refuses it). One sign-in per backend, every door walked in that one test (kept fast: the doors
share the backend's set-up; the backends are the parameters).
"""
from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import time
import urllib.request

import pytest

import shr_verifier
from auth_e2e import ALICE, CONTOSO_TID
from broker_session import StandInBroker, missing
from test_adapters import Endpoint
from test_azd_auth import AzdEndpoint
from test_federation import APP, CI, issuer  # noqa: F401  (issuer: the fixture)
from test_verbs import verbs  # noqa: F401  (the fixture)

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"
GRAPH = "https://graph.microsoft.com"
SCOPE = GRAPH + "/.default"
BACKENDS = ["flows", "broker", "appIdentity"]


POP_URL = "https://graph.microsoft.com/v1.0/me"


def jwt_claims_token(shr: str) -> str:
    """The access token `at` inside a signed HTTP request."""
    return jwt_claims(shr)["at"]


def jwt_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def ssh_public_key(tmp_path) -> str:
    path = str(tmp_path / "id_rsa")
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", path], check=True, stdin=subprocess.DEVNULL)
    return path


class Backend:
    """One backend signed in, the verbs' configuration file naming it."""

    def __init__(self, name: str, verbs, mock, tmp_path, issuer):
        self.name, self.verbs, self.mock, self.tmp = name, verbs, mock, tmp_path
        self.env: dict = {}
        self.broker = None
        self.broker_kids: set = set()
        common = {"sshCertScope": PAS, "forwardScopes": [SCOPE, "User.Read", PAS]}
        if name == "flows":
            verbs.write_config(**common)
            assert verbs.run("login").returncode == 0
        elif name == "broker":
            absent = missing()
            if absent:
                if os.environ.get("CI"):
                    pytest.fail(f"missing {absent}: scripts/setup.sh installs it")
                pytest.skip(f"missing {absent}")
            self.broker = StandInBroker(tmp_path)
            self.env = {"DBUS_SESSION_BUS_ADDRESS": self.broker.address}
            verbs.write_config(broker="required", **common)
            login = verbs.run("login", env=self.env)
            assert login.returncode == 0, login.stderr
        else:
            ci = CI(verbs, mock, issuer, tmp_path)
            ci.kubernetes()
            verbs.write_config(clientId=APP, authority=f"{mock.url}/{CONTOSO_TID}", clientAssertion={"file": ci.token_file},
                               **common)

    @property
    def process_env(self) -> dict:
        return {**self.verbs.env, **self.env}

    def assert_bearer(self, token: str, door: str) -> None:
        """A bearer token of this backend (never a certificate)."""
        assert token.count(".") == 2 and not token.startswith("ssh-"), (door, token[:20])
        claims = jwt_claims(token)
        if self.name == "flows":
            assert claims.get("upn") == ALICE and "deviceid" not in claims, (door, claims)
        elif self.name == "broker":
            assert claims.get("deviceid"), (door, claims)
        else:
            assert claims.get("idtyp") == "app" and claims.get("appid") == APP, (door, claims)

    def assert_ssh_answer(self, reply: dict, door: str, refusals=(-51016,)) -> None:
        """A certificate from the flows; else the refusal naming the backend. Never a bearer token."""
        if "result" in reply:
            result = reply["result"]
            assert self.name == "flows", (door, self.name, result.get("tokenType"))
            assert result["tokenType"] == "ssh-cert" and result["sshCertificate"]["line"].startswith("ssh-rsa-cert-v01"), door
            return
        error = reply["error"]
        assert error["code"] in refusals, (door, self.name, error)
        if error["code"] == -51016:
            assert self.name != "flows" and error["data"]["backend"] == self.name, (door, error)
            assert error["data"]["tokenKind"] == "sshCertificate", (door, error)

    def assert_pop_answer(self, reply: dict, door: str, refusals=(-51016,)) -> None:
        """A PoP token with its signed HTTP request from the flows (the sidecar's key) and the
        broker (the broker's key: the SHR is its answer); else the refusal naming the backend.
        Never a bearer token."""
        if "result" in reply:
            result = reply["result"]
            assert self.name in ("flows", "broker"), (door, self.name, result.get("tokenType"))
            assert result["tokenType"] == "pop" and result["authorizationHeader"] == "PoP " + result["signedHttpRequest"], door
            payload = shr_verifier.verify(result["signedHttpRequest"], "GET", POP_URL)
            assert payload["at"] == result["accessToken"] and jwt_claims(result["accessToken"])["cnf"]["kid"], door
            if self.name == "broker":
                assert jwt_claims(result["accessToken"])["deviceid"], door  # the broker's token
                self.broker_kids.add(jwt_claims(result["accessToken"])["cnf"]["kid"])
            return
        error = reply["error"]
        assert error["code"] in refusals, (door, self.name, error)
        if error["code"] == -51016:
            assert self.name != "flows" and error["data"]["backend"] == self.name, (door, error)
            assert error["data"]["tokenKind"] == "proofOfPossession", (door, error)

    def stop(self) -> None:
        if self.broker:
            self.broker.stop()


class Lines:
    """NDJSON over a socket or a pair of pipes: one request, its reply."""

    def __init__(self, write, readline):
        self.write, self.readline, self.ids = write, readline, 0

    def call(self, method: str, params: dict) -> dict:
        self.ids += 1
        self.write((json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}) + "\n").encode())
        while True:
            line = self.readline()
            assert line, f"closed before answering {method}"
            message = json.loads(line)
            if message.get("id") == self.ids:
                return message


def over_socket(path: str) -> tuple[Lines, socket.socket]:
    deadline = time.monotonic() + 10
    while not os.path.exists(path):
        assert time.monotonic() < deadline, path
        time.sleep(0.02)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(path)
    reader = s.makefile("rb")
    return Lines(s.sendall, reader.readline), s


def json_rpc_door(backend: Backend, lines: Lines, door: str, public_key: str, refusals=(-51016,), scope=SCOPE) -> None:
    bearer = lines.call("acquireTokenSilent", {"scopes": [scope]})
    assert "result" in bearer, (door, bearer)
    assert bearer["result"]["tokenType"] == "Bearer", door
    backend.assert_bearer(bearer["result"]["accessToken"], door)
    backend.assert_ssh_answer(lines.call("acquireTokenSilent", {"sshCertificate": {"publicKey": public_key}}), door, refusals)
    pop = {"method": "GET", "url": POP_URL}
    backend.assert_pop_answer(lines.call("acquireTokenSilent", {"scopes": [scope], "proofOfPossession": pop}), door, refusals)
    signed = lines.call("signHttpRequest", {"scopes": [scope], **pop})
    backend.assert_pop_answer({"error": signed["error"]} if "error" in signed else {"result": {
        **signed["result"], "accessToken": jwt_claims_token(signed["result"]["signedHttpRequest"])}}, door, refusals)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_every_door_answers_the_kind_asked_or_refuses_it_by_name(backend_name, verbs, mock, issuer, tmp_path):  # noqa: F811
    backend = Backend(backend_name, verbs, mock, tmp_path, issuer)
    key = ssh_public_key(tmp_path)
    public_key = open(key + ".pub").read()
    env = backend.process_env
    started: list[subprocess.Popen] = []
    try:
        # stdio: configured from the configuration file.
        stdio = subprocess.Popen([verbs.binary], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=open(tmp_path / "stdio.log", "wb"))
        started.append(stdio)

        def write(data: bytes) -> None:
            stdio.stdin.write(data)
            stdio.stdin.flush()

        json_rpc_door(backend, Lines(write, stdio.stdout.readline), "stdio", public_key)

        # The agent socket and the forward socket (an agent of its own, the same configuration).
        run = tmp_path / "matrix-agent"
        run.mkdir(mode=0o700)
        agent = subprocess.Popen([verbs.binary, "agent", "--socket", str(run / "agent.sock"), "--forward"], env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "agent.log", "wb"))
        started.append(agent)
        lines, s = over_socket(str(run / "agent.sock"))
        with s:
            assert "result" in lines.call("initialize", {}), "agent socket"
            json_rpc_door(backend, lines, "agent socket", public_key)
        lines, s = over_socket(str(run / "forward.sock"))
        with s:
            assert "result" in lines.call("initialize", {}), "forward socket"
            # The forward table names no sshCertificate parameter: its own refusal, by name.
            # A user's token for exactly what forwardScopes lists (the service grants a user every
            # consented scope for .default, which the forward socket refuses); the app's is .default.
            scope = SCOPE if backend.name == "appIdentity" else "User.Read"
            json_rpc_door(backend, lines, "forward socket", public_key, refusals=(-51014, -51016), scope=scope)

        # The verbs: token, ssh-cert.
        token = verbs.run("token", "--no-agent", "--scope", SCOPE, env=backend.env)
        assert token.returncode == 0, ("token verb", token.stderr)
        backend.assert_bearer(token.stdout.strip(), "token verb")
        pop = verbs.run("token", "--no-agent", "--scope", SCOPE, "--pop-method", "GET", "--pop-url", POP_URL, env=backend.env)
        if backend.name in ("flows", "broker"):
            assert pop.returncode == 0 and pop.stdout.startswith("PoP "), ("token verb --pop-*", pop.stderr)
            backend.assert_pop_answer({"result": {"tokenType": "pop", "authorizationHeader": pop.stdout.strip(),
                                                  "signedHttpRequest": pop.stdout.strip()[4:],
                                                  "accessToken": jwt_claims_token(pop.stdout.strip()[4:])}}, "token verb")
        else:
            assert pop.returncode == 1 and pop.stdout == "", ("token verb --pop-*", pop.stderr)
            assert "does not issue proof-of-possession tokens" in pop.stderr and "(tokenKindNotServed)" in pop.stderr, pop.stderr
        cert = verbs.run("ssh-cert", "--no-agent", "--key", key, "--output-format", "json", env=backend.env)
        if backend.name == "flows":
            assert cert.returncode == 0, cert.stderr
            assert open(key + "-cert.pub").read().startswith("ssh-rsa-cert-v01@openssh.com "), "ssh-cert verb"
        else:
            assert cert.returncode == 1 and cert.stdout == "", ("ssh-cert verb", cert.stderr)
            assert "does not issue SSH certificates" in cert.stderr and "(tokenKindNotServed)" in cert.stderr, cert.stderr
            assert len(cert.stderr.strip().splitlines()) == 1, cert.stderr
            assert not os.path.exists(key + "-cert.pub")

        # The az shim.
        az = tmp_path / "az-bin"
        az.mkdir()
        (az / "az").symlink_to(verbs.binary)
        shim = subprocess.run([str(az / "az"), "account", "get-access-token", "--resource", GRAPH], env=env, capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL, cwd="/")
        assert shim.returncode == 0, ("az shim", shim.stderr)
        answer = json.loads(shim.stdout)
        assert answer["tokenType"] == "Bearer"
        backend.assert_bearer(answer["accessToken"], "az shim")

        # The kubectl and git helpers.
        exec_info = {"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "spec": {"interactive": False}}
        kube = subprocess.run([verbs.binary, "kubectl-credential", "--scope", SCOPE], env={**env, "KUBERNETES_EXEC_INFO": json.dumps(exec_info)},
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert kube.returncode == 0, ("kubectl helper", kube.stderr)
        backend.assert_bearer(json.loads(kube.stdout)["status"]["token"], "kubectl helper")
        # kubectl with an Azure Arc cluster's PoP credential (kubelogin's shape: u = the ARM id).
        arc = subprocess.run([verbs.binary, "kubectl-credential", "--scope", SCOPE, "--pop-claims", "u=/subscriptions/1/arc"],
                             env={**env, "KUBERNETES_EXEC_INFO": json.dumps(exec_info)}, capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
        if backend.name in ("flows", "broker"):
            assert arc.returncode == 0, ("kubectl helper --pop-claims", arc.stderr)
            shr = json.loads(arc.stdout)["status"]["token"]
            assert jwt_claims(shr)["u"] == "/subscriptions/1/arc" and jwt_claims(jwt_claims_token(shr))["cnf"]["kid"], shr[:20]
        else:
            assert arc.returncode == 1 and arc.stdout == "", ("kubectl helper --pop-claims", arc.stderr)
            assert "does not issue proof-of-possession tokens" in arc.stderr, arc.stderr
        git = subprocess.run([verbs.binary, "git-credential", "get"], env=env, capture_output=True, text=True, timeout=30,
                             input="protocol=https\nhost=dev.azure.com\n\n")
        assert git.returncode == 0, ("git helper", git.stderr)
        fields = dict(line.split("=", 1) for line in git.stdout.splitlines() if "=" in line)
        assert fields.get("password"), ("git helper", git.stdout.replace(fields.get("password", ""), "..."))
        assert jwt_claims(fields["password"])  # a bearer JWT (Azure DevOps' scope)
        backend.assert_bearer(fields["password"], "git helper")

        # The managed-identity and azd endpoints.
        verbs.env.update(backend.env)
        mi = Endpoint(verbs)
        started.append(mi.proc)
        status, body = mi.get(f"resource={GRAPH}&api-version=2019-08-01", secret=mi.secret)
        assert status == 200, ("managed-identity endpoint", body)
        assert body["token_type"] == "Bearer"
        backend.assert_bearer(body["access_token"], "managed-identity endpoint")
        azd = AzdEndpoint(verbs)
        started.append(azd.proc)
        status, body = azd.azd([SCOPE])
        assert status == 200 and body["status"] == "success", ("azd endpoint", body)
        backend.assert_bearer(body["token"], "azd endpoint")
    finally:
        for p in started:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        backend.stop()
    if backend.name != "flows":
        # The refusals made no request: no token request for an SSH certificate reached the
        # mock (its ssh-cert grants), nor the broker (its record).
        assert not [r for r in mock.admin.log() if "ssh" in json.dumps(r).lower() and "token" in " ".join(r["endpoints"])]
        if backend.broker:
            assert not [c for c in backend.broker.calls() if "req_cnf" in json.dumps(c)]
    if backend.name == "broker":
        # Every PoP token the broker answered is bound to its one key; the requests carried popParams.
        assert len(backend.broker_kids) == 1, backend.broker_kids
        assert [c for c in backend.broker.calls("acquireTokenSilently") if c["request"]["authParameters"]["popParams"]]
