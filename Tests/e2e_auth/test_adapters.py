"""The adapters, with the real clients: `token --output az` (parsed by azure-identity's
AzureCliCredential through an `az` shim), `git-credential` (git), `kubectl-credential`
(kubectl against a loopback HTTPS API stand-in), `managed-identity` (azure-identity's
ManagedIdentityCredential). Each verb runs as in test_verbs.py: a real process configured by
the default configuration file, against the mock identity platform.
"""
from __future__ import annotations

import base64
import concurrent.futures
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from zoneinfo import ZoneInfo

import pytest

from auth_e2e import ALICE, CONTOSO_TID
from kube_api import KubeAPI
from test_verbs import FAILURE, SIGN_IN_NEEDED, USAGE, Verbs, graph_me, read_stderr_until, verbs  # noqa: F401 (fixture)

DEVOPS = "499b84ac-1321-427f-aa17-267ca6975798"
AKS = "6dae42f8-4368-4678-94ff-3960e28e3630"
GRAPH_DEFAULT = "https://graph.microsoft.com/.default"


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def helper_input(**attributes) -> str:
    return "".join(f"{k}={v}\n" for k, v in attributes.items()) + "\n"


def expires_with(token: str, expires_on: int) -> bool:
    """The sidecar reckons expiry from `expires_in` when the answer arrives, the service stamps `exp`
    when it signs: the two may fall either side of a second's boundary."""
    return abs(int(expires_on) - claims(token)["exp"]) <= 1


def run_input(verbs: Verbs, args: list[str], text: str | bytes, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([verbs.binary, *args], input=text, env={**verbs.env, **(env or {})}, capture_output=True,
                          timeout=30, text=isinstance(text, str))


# ---- az ---------------------------------------------------------------------------------

def test_az_output_has_azs_fields_and_types(verbs, mock):
    verbs.ok("login")
    zone = "Asia/Kolkata"  # not UTC, so a local-time mistake shows
    out = verbs.ok("token", "--output", "az", "--resource", "https://graph.microsoft.com", env={"TZ": zone})
    az = json.loads(out)
    # az's documented fields (subscription only when one is configured; the sidecar has none)
    assert set(az) == {"accessToken", "expiresOn", "expires_on", "tenant", "tokenType"}, az
    assert isinstance(az["accessToken"], str) and isinstance(az["expires_on"], int) and az["tokenType"] == "Bearer"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", az["expiresOn"]), az["expiresOn"]
    local = datetime.datetime.fromtimestamp(az["expires_on"], ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert az["expiresOn"] == local
    assert 0 < az["expires_on"] - time.time() <= 3700
    assert az["tenant"] == claims(az["accessToken"])["tid"] == CONTOSO_TID
    assert graph_me(mock, az["accessToken"]).json()["userPrincipalName"] == ALICE
    assert json.loads(verbs.ok("token", "--output", "az", "--scope", GRAPH_DEFAULT))["accessToken"] == az["accessToken"]


def test_azure_cli_credential_reads_it_through_an_az_shim(verbs, mock, tmp_path, monkeypatch):
    from azure.identity import AzureCliCredential
    verbs.ok("login")
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    # az account get-access-token --output json --resource R  ->  auth-sidecar token --output az --resource R
    (shim_dir / "az").write_text(
        f"#!{sys.executable}\nimport os, sys\nargs = sys.argv[1:]\n"
        "assert args[:2] == ['account', 'get-access-token'], args\n"
        "resource = args[args.index('--resource') + 1]\n"
        f"os.execve({verbs.binary!r}, [{verbs.binary!r}, 'token', '--output', 'az', '--resource', resource], "
        f"{verbs.env!r})\n")
    (shim_dir / "az").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim_dir}:{os.environ['PATH']}")
    token = AzureCliCredential().get_token(GRAPH_DEFAULT)
    assert graph_me(mock, token.token).status == 200
    assert expires_with(token.token, token.expires_on)


def test_az_output_bad_options(verbs):
    both = verbs.run("token", "--output", "az", "--resource", "https://graph.microsoft.com", "--scope", "User.Read")
    assert both.returncode == USAGE and both.stdout == "" and "--resource" in both.stderr
    signed_out = verbs.run("token", "--output", "az")
    assert signed_out.returncode == SIGN_IN_NEEDED and signed_out.stdout == "" and "auth-sidecar login" in signed_out.stderr


# ---- git --------------------------------------------------------------------------------

class Git:
    """`git credential` with our helper configured (and nothing else: a temp HOME, no system
    config, no prompts)."""

    def __init__(self, verbs: Verbs, helper_url: str = "https://dev.azure.com"):
        self.verbs = verbs
        self.helper = f"!'{verbs.binary}' git-credential"
        self.config = ["-c", "credential.helper=", "-c", f"credential.{helper_url}.helper={self.helper}"] if helper_url else \
            ["-c", "credential.helper=", "-c", f"credential.helper={self.helper}"]
        self.env = {**verbs.env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}

    def run(self, action: str, text: str, *extra) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *self.config, *extra, "credential", action], input=text, env=self.env,
                              capture_output=True, text=True, timeout=30)

    def fill(self, url: str, *extra) -> dict:
        p = self.run("fill", f"url={url}\n\n", *extra)
        assert p.returncode == 0, p.stderr
        return dict(line.split("=", 1) for line in p.stdout.splitlines() if line)


def test_git_credential_fill_reject_and_fill_again(verbs, mock):
    verbs.ok("login")
    git = Git(verbs)
    first = git.fill("https://dev.azure.com/org/repo")
    assert first["username"] == ALICE and first["host"] == "dev.azure.com"
    assert claims(first["password"])["aud"] == DEVOPS
    assert first["password"] == verbs.ok("token", "--scope", f"{DEVOPS}/.default").strip()
    if "password_expiry_utc" in first:  # passed through by git >= 2.41
        assert expires_with(first["password"], first["password_expiry_utc"])
    direct = run_input(verbs, ["git-credential", "get"], helper_input(protocol="https", host="dev.azure.com", path="org/repo"))
    assert direct.returncode == 0 and direct.stderr == ""
    answer = dict(line.split("=", 1) for line in direct.stdout.splitlines())
    assert list(answer) == ["username", "password", "password_expiry_utc"] and direct.stdout.endswith("\n")
    assert answer["username"] == ALICE and answer["password"] == first["password"]
    assert expires_with(first["password"], answer["password_expiry_utc"])
    refreshes = mock.admin.count("token:refresh_token")
    assert git.fill("https://dev.azure.com/org/repo")["password"] == first["password"]  # from the cache
    assert mock.admin.count("token:refresh_token") == refreshes

    rejected = git.run("reject", helper_input(protocol="https", host="dev.azure.com", path="org/repo",
                                             username=first["username"], password=first["password"]))
    assert rejected.returncode == 0, rejected.stderr
    assert mock.admin.count("token:refresh_token") == refreshes + 1
    fresh = git.fill("https://dev.azure.com/org/repo")
    assert fresh["password"] != first["password"] and claims(fresh["password"])["aud"] == DEVOPS
    assert mock.admin.count("token:refresh_token") == refreshes + 1  # the fresh one, from the cache
    approved = git.run("approve", helper_input(protocol="https", host="dev.azure.com", username=ALICE,
                                              password=fresh["password"]))
    assert approved.returncode == 0 and approved.stdout == ""


def test_git_other_hosts_fall_through_to_the_next_helper(verbs, mock):
    verbs.ok("login")
    everywhere = Git(verbs, helper_url="")
    fallback = "!f() { echo username=next-helper; echo password=not-ours; }; f"
    counts = mock.counts()
    for url in ("https://github.com/org/repo", "http://dev.azure.com/org/repo", "https://dev.azure.com.evil.example/x",
                "https://visualstudio.com/x"):
        answer = everywhere.fill(url, "-c", f"credential.helper={fallback}")
        assert answer["username"] == "next-helper" and answer["password"] == "not-ours", (url, answer)
    assert mock.counts() == counts  # no token was even asked for
    ours = everywhere.fill("https://contoso.visualstudio.com/DefaultCollection/_git/repo", "-c", f"credential.helper={fallback}")
    assert claims(ours["password"])["aud"] == DEVOPS and ours["username"] == ALICE
    alone = everywhere.run("fill", "url=https://github.com/org/repo\n\n")
    assert alone.returncode != 0 and "password=" not in alone.stdout


@pytest.mark.parametrize("args, text, status, needle", [
    (["get"], "protocol=https\nhost=dev.azure.com\nthis is garbage\n\n", FAILURE, "line 3"),
    (["get"], "=novalue\n\n", FAILURE, "line 1"),
    (["get"], "protocol=https\nhost=dev.azure.com\npath=" + "x" * 70_000 + "\n\n", FAILURE, "larger than"),
    (["get"], "host=dev.azure.com\x00evil\nprotocol=https\n\n", FAILURE, "line 1"),
    (["steal"], "protocol=https\nhost=dev.azure.com\n\n", USAGE, "unknown action 'steal'"),
    ([], "", USAGE, "action"),
])
def test_git_credential_bad_input(verbs, args, text, status, needle):
    verbs.ok("login")
    p = run_input(verbs, ["git-credential", *args], text)
    assert p.returncode == status, (p.returncode, p.stderr)
    assert p.stdout == "" and needle in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 or status == USAGE


def test_git_credential_without_a_sign_in_or_fields(verbs, mock):
    get = helper_input(protocol="https", host="dev.azure.com", path="org/repo")
    signed_out = run_input(verbs, ["git-credential", "get"], get)
    assert signed_out.returncode == SIGN_IN_NEEDED and signed_out.stdout == ""
    assert signed_out.stderr.count("\n") == 1 and "auth-sidecar login" in signed_out.stderr
    for text in ("protocol=https\n\n", "host=dev.azure.com\n\n", "", "\n"):  # no host or no protocol: not ours
        p = run_input(verbs, ["git-credential", "get"], text)
        assert (p.returncode, p.stdout, p.stderr) == (0, "", ""), (text, p)
    store = run_input(verbs, ["git-credential", "store"], get)
    assert (store.returncode, store.stdout) == (0, "")


# ---- kubectl ----------------------------------------------------------------------------

@pytest.fixture
def kube_api(tmp_path):
    api = KubeAPI(tmp_path)
    yield api
    api.close()


def kubectl(verbs: Verbs, kubeconfig: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "--request-timeout", "20s", *args], env=verbs.env,
                          capture_output=True, text=True, timeout=40, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("api_version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"])
def test_kubectl_uses_the_exec_credential(verbs, mock, kube_api, tmp_path, api_version):
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", verbs.binary, api_version)
    verbs.ok("login")
    kube_api.accepted_token = verbs.ok("token", "--scope", f"{AKS}/.default").strip()
    assert claims(kube_api.accepted_token)["aud"] == AKS
    version = kubectl(verbs, kubeconfig, "version", "-o", "json")
    assert version.returncode == 0, version.stderr
    assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.32.0-stand-in"
    pods = kubectl(verbs, kubeconfig, "get", "--raw", "/api/v1/namespaces/default/pods")
    assert pods.returncode == 0, pods.stderr
    assert json.loads(pods.stdout)["items"][0]["metadata"]["name"] == "hello"
    assert kube_api.seen and set(kube_api.seen) == {"Bearer " + kube_api.accepted_token}

    direct = verbs.run("kubectl-credential", env={"KUBERNETES_EXEC_INFO": json.dumps(
        {"kind": "ExecCredential", "apiVersion": api_version, "spec": {"interactive": False}})})
    credential = json.loads(direct.stdout)
    assert credential["apiVersion"] == api_version and credential["kind"] == "ExecCredential"
    assert credential["status"]["token"] == kube_api.accepted_token
    expiry = datetime.datetime.strptime(credential["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    assert expires_with(kube_api.accepted_token, expiry.replace(tzinfo=datetime.timezone.utc).timestamp())


def test_kubectl_without_a_sign_in_names_the_login(verbs, kube_api, tmp_path):
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", verbs.binary)
    kube_api.accepted_token = "nothing-matches"
    p = kubectl(verbs, kubeconfig, "version", "-o", "json")
    assert p.returncode != 0 and "auth-sidecar login" in p.stderr, p.stderr
    assert kube_api.seen == []  # no request went out without a credential
    direct = verbs.run("kubectl-credential")
    assert direct.returncode == SIGN_IN_NEEDED and direct.stdout == "" and "auth-sidecar login" in direct.stderr


def test_kubectl_credential_interactive_runs_the_device_code_sign_in(verbs, mock):
    info = {"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "spec": {"interactive": True}}
    proc = verbs.start("kubectl-credential", env={**verbs.env, "KUBERNETES_EXEC_INFO": json.dumps(info)})
    lines = read_stderr_until(proc, lambda line: "/devicelogin" in line)
    mock.admin.device("approve", "latest")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, (lines, err)
    credential = json.loads(out)
    assert claims(credential["status"]["token"])["aud"] == AKS
    assert any("device code" in line for line in lines), lines


@pytest.mark.parametrize("info, needle", [
    ("{not json", "KUBERNETES_EXEC_INFO"),
    ('{"apiVersion": "client.authentication.k8s.io/v9"}', "unsupported apiVersion"),
    ('["a list"]', "KUBERNETES_EXEC_INFO"),
])
def test_kubectl_credential_bad_exec_info(verbs, info, needle):
    verbs.ok("login")
    p = verbs.run("kubectl-credential", env={"KUBERNETES_EXEC_INFO": info})
    assert p.returncode == FAILURE and p.stdout == "" and needle in p.stderr and p.stderr.count("\n") == 1


# ---- managed identity -------------------------------------------------------------------

class Endpoint:
    """A running `auth-sidecar managed-identity`: its stdout is read to its end (the verb
    closes it after the two export lines, so `eval "$(auth-sidecar managed-identity &)"` works)."""

    def __init__(self, verbs: Verbs, *args):
        self.proc = subprocess.Popen([verbs.binary, "managed-identity", *args], env=verbs.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout = self.proc.stdout.read()  # returns at EOF, while the process serves on
        assert self.proc.poll() is None, self.proc.stderr.read()
        lines = self.stdout.splitlines()
        assert len(lines) == 2 and lines[0].startswith("export IDENTITY_ENDPOINT=http://127.0.0.1:"), self.stdout
        self.url = lines[0].split("=", 1)[1]
        assert lines[1].startswith("export IDENTITY_HEADER=")
        self.secret = lines[1].split("=", 1)[1]

    def get(self, query: str, secret: str | None = None, path: str = "/msi/token", method: str = "GET"):
        """(status, JSON body) of one request."""
        url = self.url.replace("/msi/token", path) + "?" + query
        headers = {} if secret is None else {"X-IDENTITY-HEADER": secret}
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers, method=method), timeout=20) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def raw(self, data: bytes) -> bytes:
        port = int(self.url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            return s.recv(65536)

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=10)
        return self.proc.returncode, err


@pytest.fixture
def endpoint(verbs):
    started: list[Endpoint] = []

    def start(*args) -> Endpoint:
        started.append(Endpoint(verbs, *args))
        return started[-1]

    yield start
    for e in started:
        if e.proc.poll() is None:
            e.proc.kill()
            e.proc.wait()


def test_managed_identity_credential_gets_the_users_token(verbs, mock, endpoint, monkeypatch):
    from azure.identity import ManagedIdentityCredential
    verbs.ok("login")
    mi = endpoint()
    assert re.fullmatch(r"[0-9a-f]{64}", mi.secret)
    monkeypatch.setenv("IDENTITY_ENDPOINT", mi.url)
    monkeypatch.setenv("IDENTITY_HEADER", mi.secret)
    token = ManagedIdentityCredential().get_token(GRAPH_DEFAULT)
    assert graph_me(mock, token.token).json()["userPrincipalName"] == ALICE
    assert token.token == verbs.ok("token", "--scope", GRAPH_DEFAULT).strip()
    assert expires_with(token.token, token.expires_on)

    status, body = mi.get("api-version=2019-08-01&resource=" + DEVOPS)
    assert status == 401 and set(body) == {"statusCode", "message"}
    status, body = mi.get("api-version=2019-08-01&resource=" + DEVOPS, mi.secret)
    assert status == 200 and claims(body["access_token"])["aud"] == DEVOPS and body["resource"] == DEVOPS
    assert body["token_type"] == "Bearer" and expires_with(body["access_token"], body["expires_on"])

    # concurrent requests share the one engine connection, one at a time
    resources = ["https://graph.microsoft.com", DEVOPS, AKS, "api://my-api"] * 4
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda r: mi.get("api-version=2019-08-01&resource=" + r, mi.secret), resources))
    for resource, (status, body) in zip(resources, answers):
        assert status == 200, (resource, body)
        assert claims(body["access_token"])["aud"] == resource

    code, err = mi.stop()
    assert code == 0, err
    assert token.token not in err and body["access_token"] not in err
    with pytest.raises(OSError):
        mi.raw(b"GET /msi/token HTTP/1.1\r\n\r\n")  # the port is closed


def test_managed_identity_refuses_a_wrong_header_and_bad_requests(verbs, endpoint, monkeypatch):
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import CredentialUnavailableError, ManagedIdentityCredential
    verbs.ok("login")
    mi = endpoint("--log-level", "info")
    monkeypatch.setenv("IDENTITY_ENDPOINT", mi.url)
    monkeypatch.setenv("IDENTITY_HEADER", mi.secret[:-1] + ("0" if mi.secret[-1] != "0" else "1"))
    with pytest.raises((ClientAuthenticationError, CredentialUnavailableError)) as refused:
        ManagedIdentityCredential().get_token(GRAPH_DEFAULT)
    assert "X-IDENTITY-HEADER" in str(refused.value)

    ok = "api-version=2019-08-01&resource=https%3A%2F%2Fgraph.microsoft.com"
    cases = [
        (mi.get(ok, mi.secret + "x"), 401),
        (mi.get(ok, ""), 401),
        (mi.get(ok, mi.secret, path="/other"), 404),
        (mi.get(ok, mi.secret, method="POST"), 405),
        (mi.get("api-version=2019-08-01", mi.secret), 400),
        (mi.get("api-version=2017-09-01&resource=x", mi.secret), 401),  # 2017's header is `secret`
        (mi.get("api-version=2018-02-01&resource=x", mi.secret), 400),
        (mi.get("resource=%zz", mi.secret), 400),
    ]
    for (status, body), expected in cases:
        assert status == expected and body["statusCode"] == expected and body["message"], (status, body)
        assert "access_token" not in body
    for garbage in (b"garbage\r\n\r\n", b"\x00\xff" * 100, b"GET /msi/token HTTP/1.1\r\nX: " + b"a" * 40_000 + b"\r\n\r\n"):
        try:
            answer = mi.raw(garbage)
        except ConnectionResetError:  # the oversized head: closed with bytes unread
            assert len(garbage) > 16 * 1024
            continue
        expected = b"HTTP/1.1 431 " if len(garbage) > 16 * 1024 else b"HTTP/1.1 400 "
        assert answer.startswith(expected) and b"access_token" not in answer, answer[:100]
    assert mi.proc.poll() is None  # still serving
    assert mi.get(ok, mi.secret)[0] == 200
    code, err = mi.stop()
    assert code == 0 and "managed-identity request refused" in err and mi.secret not in err


def test_managed_identity_without_a_sign_in_names_the_login(verbs, endpoint, monkeypatch):
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import ManagedIdentityCredential
    mi = endpoint()
    status, body = mi.get("api-version=2019-08-01&resource=https%3A%2F%2Fgraph.microsoft.com", mi.secret)
    assert status == 400 and body["statusCode"] == 400 and "auth-sidecar login" in body["message"]
    monkeypatch.setenv("IDENTITY_ENDPOINT", mi.url)
    monkeypatch.setenv("IDENTITY_HEADER", mi.secret)
    with pytest.raises(ClientAuthenticationError) as refused:
        ManagedIdentityCredential().get_token(GRAPH_DEFAULT)
    assert "auth-sidecar login" in str(refused.value)


def test_managed_identity_port_option_and_a_port_in_use(verbs, endpoint):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mi = endpoint("--port", str(port))
    assert mi.url == f"http://127.0.0.1:{port}/msi/token"
    second = verbs.run("managed-identity", "--port", str(port))
    assert second.returncode == FAILURE and second.stdout == "" and f"127.0.0.1:{port}" in second.stderr
    bad = verbs.run("managed-identity", "--port", "70000")
    assert bad.returncode == USAGE and bad.stdout == ""


def test_adapter_verbs_have_help(verbs):
    for verb in ("git-credential", "kubectl-credential", "managed-identity"):
        p = verbs.run(verb, "--help")
        assert p.returncode == 0 and f"auth-sidecar {verb}" in p.stdout
    assert all(v in verbs.run("--help").stdout for v in ("git-credential", "kubectl-credential", "managed-identity"))


def test_managed_identity_renews_a_token_named_revoked(verbs, mock, endpoint):
    """MSAL's revocation (docs/msiv1_token_revocation.md: msal-node >= 3.8.1, Go, .NET, Python):
    after a resource refused a token, the client names it by hex SHA-256 in
    token_sha256_to_refresh and its capabilities in xms_cc; the endpoint renews it instead of
    serving it again until it expires. Another token's hash serves the cached one."""
    import hashlib
    verbs.ok("login")
    mi = endpoint()
    query = "api-version=2019-08-01&resource=https://graph.microsoft.com"
    status, first = mi.get(query, mi.secret)
    assert status == 200
    refreshes = mock.admin.count("token:refresh_token")
    status, again = mi.get(query + "&token_sha256_to_refresh=" + hashlib.sha256(b"another token").hexdigest(), mi.secret)
    assert status == 200 and again["access_token"] == first["access_token"]
    assert mock.admin.count("token:refresh_token") == refreshes
    revoked = hashlib.sha256(first["access_token"].encode()).hexdigest()
    status, renewed = mi.get(query + "&xms_cc=cp1&token_sha256_to_refresh=" + revoked, mi.secret)
    assert status == 200 and renewed["access_token"] != first["access_token"], renewed
    assert mock.admin.count("token:refresh_token") == refreshes + 1
    asked = json.loads(mock.admin.log("token:refresh_token")[-1]["form"]["claims"])
    assert "cp1" in asked["access_token"]["xms_cc"]["values"], asked
    status, later = mi.get(query, mi.secret)
    assert later["access_token"] == renewed["access_token"]  # the renewed one is the cached one now
    for bad in ("&token_sha256_to_refresh=xyz", "&xms_cc=" + "a" * 40):
        status, body = mi.get(query + bad, mi.secret)
        assert status == 400, (bad, body)
    mi.stop()
