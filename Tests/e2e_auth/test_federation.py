"""Workload identity federation in CI (#37): an app's tokens with a client assertion read fresh
at each exchange, from the CI variables alone (GitHub Actions' token endpoint, a Kubernetes
token file) or the `clientAssertion` key, through every door: `token`, the az shim
(azure-identity's AzureCliCredential), the managed-identity endpoint (ManagedIdentityCredential),
stdio. The CI system is a stand-in issuer on loopback with its own key and JWKS
(mock/mock_idp/workload_issuer.py); the mock checks each assertion as Entra does.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from auth_e2e import CONTOSO_TID, read_cache
from mock_idp.jwtsign import unverified_claims
from mock_idp.workload_issuer import WorkloadIssuer
from test_adapters import Endpoint  # noqa: F401
from test_verbs import RunningAgent, Verbs, verbs  # noqa: F401 (fixture)

APP = "5e1f0000-0000-4000-8000-00000000ab01"
ARM = "https://management.azure.com/.default"
FAILURE = 1


@pytest.fixture
def issuer():
    stand_in = WorkloadIssuer(lifetime=60).start()
    yield stand_in
    stand_in.stop()


class CI:
    """A CI job's environment: no configuration file, the CI variables only."""

    def __init__(self, verbs: Verbs, mock, issuer: WorkloadIssuer, tmp_path):
        self.verbs, self.mock, self.issuer = verbs, mock, issuer
        os.remove(verbs.config_file)
        self.token_file = str(tmp_path / "ci" / "azure-identity-token")
        os.makedirs(os.path.dirname(self.token_file), exist_ok=True)
        self.env = {"AZURE_CLIENT_ID": APP, "AZURE_TENANT_ID": CONTOSO_TID, "AZURE_AUTHORITY_HOST": mock.url,
                    "ACTIONS_ID_TOKEN_REQUEST_URL": issuer.actions_url,
                    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": issuer.request_token}
        mock.admin.federation(client_id=APP, issuer=issuer.url, subject=issuer.subject, roles=["Contributor"])

    def kubernetes(self) -> None:
        """A pod's variables instead: the token file, no GitHub variables."""
        for name in ("ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"):
            self.env.pop(name)
        self.env["AZURE_FEDERATED_TOKEN_FILE"] = self.token_file
        self.issuer.write_token_file(self.token_file)

    def run(self, *args, **kw) -> subprocess.CompletedProcess:
        return self.verbs.run(*args, env={**self.env, **kw.pop("env", {})}, **kw)

    def token(self, scope=ARM) -> str:
        p = self.run("token", "--scope", scope)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    def exchanges(self) -> list[dict]:
        return self.mock.admin.log("token:client_credentials")


@pytest.fixture
def ci(verbs, mock, issuer, tmp_path) -> CI:
    return CI(verbs, mock, issuer, tmp_path)


def app_claims(token: str) -> dict:
    claims = unverified_claims(token)
    assert claims["appid"] == claims["azp"] == APP and claims["idtyp"] == "app", claims
    assert "scp" not in claims and claims["tid"] == CONTOSO_TID
    return claims


def test_github_actions_variables_alone_give_an_app_token_once(ci):
    token = ci.token()
    claims = app_claims(token)
    assert claims["aud"] == "https://management.azure.com" and claims["roles"] == ["Contributor"]
    [exchange] = ci.exchanges()
    assert exchange["status"] == 200 and exchange["form"]["grant_type"] == "client_credentials"
    assertion = unverified_claims(exchange["form"]["client_assertion"])
    assert assertion["iss"] == ci.issuer.url and assertion["aud"] == "api://AzureADTokenExchange"
    assert len(ci.issuer.minted) == 1 and ci.issuer.minted[0][1] == "api://AzureADTokenExchange"
    # cached: no exchange, no new assertion, the same token (a fresh process each time)
    assert ci.token() == token and ci.token() == token
    assert len(ci.exchanges()) == 1 and len(ci.issuer.minted) == 1
    assert "refresh_token" not in json.dumps(ci.exchanges())


@pytest.mark.time_limit(60)
def test_processes_at_once_share_one_exchange(ci):
    """Eight steps of a job ask at the same moment, no agent, the first start (no cache
    directory yet): the refresh lock lets one exchange."""
    procs = [subprocess.Popen([ci.verbs.binary, "token", "--scope", ARM], env={**ci.verbs.env, **ci.env},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
             for _ in range(8)]
    outputs = [p.communicate(timeout=30) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert len({out.strip() for out, _ in outputs}) == 1
    assert len(ci.exchanges()) == 1 and len(ci.issuer.minted) == 1


def test_the_agent_serves_the_app_token(ci):
    path = os.path.join(ci.verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(ci.verbs.binary, path, {**ci.verbs.env, **ci.env}, ci.verbs.tmp / "agent.log")
    try:
        token = ci.token()
        app_claims(token)
        assert ci.token() == token and agent.connections == 2
        report = json.loads(ci.run("status", "--output", "json").stdout)
        assert report["engine"] == "agent" and report["clientAssertion"]["source"] == "GitHub Actions"
    finally:
        agent.close()
    assert len(ci.exchanges()) == 1
    assert "eyJ" not in (ci.verbs.tmp / "agent.log").read_text()


def test_a_job_longer_than_the_assertion_gets_fresh_assertions(ci):
    ci.issuer.lifetime = 4          # each assertion lives 4 s
    ci.mock.admin.config(access_token_lifetime=302)   # an app token is due for renewal after 2 s
    started, tokens = time.time(), []
    while time.time() - started < 10:
        tokens.append(ci.token())
        time.sleep(1.2)
    exchanges = ci.exchanges()
    assert all(e["status"] == 200 for e in exchanges), exchanges
    assertions = [e["form"]["client_assertion"] for e in exchanges]
    assert len(assertions) >= 3 and len(set(assertions)) == len(assertions)
    expiries = [unverified_claims(a)["exp"] for a in assertions]
    assert max(e["time"] for e in exchanges) > expiries[0] + 1, "the job did not outlive the first assertion"
    assert all(e["time"] < exp for e, exp in zip(exchanges, expiries))   # each one fresh when sent
    assert len(set(tokens)) == len(assertions)    # between exchanges, the cached token served


def test_the_rotated_token_file_is_read_again(ci):
    ci.kubernetes()
    ci.mock.admin.config(access_token_lifetime=301)
    ci.token()
    rotated = ci.issuer.write_token_file(ci.token_file)
    time.sleep(1.2)
    ci.token()
    first, second = [e["form"]["client_assertion"] for e in ci.exchanges()]
    assert second == rotated and first != rotated
    assert ci.issuer.minted == []     # the file only: the Actions endpoint was not asked


def test_an_expired_assertion_with_no_fresh_source_fails_once_and_clearly(ci):
    ci.kubernetes()
    ci.issuer.write_token_file(ci.token_file, lifetime=1)
    time.sleep(1.5)
    p = ci.run("token", "--scope", ARM)
    assert p.returncode != 0 and p.stdout == ""
    assert "AADSTS700024" in p.stderr and f"file {ci.token_file}" in p.stderr, p.stderr
    assert "expired" in p.stderr
    assert len(ci.exchanges()) == 1       # no retry loop
    with open(ci.token_file) as f:
        assert f.read().strip() not in p.stderr
    # `status` shows the failure (its own try fails the same way) and the assertion's expiry
    status = ci.run("status", "--output", "json")
    assert status.returncode != 0 and "a sign-in cannot help" in status.stderr and "login" not in status.stderr
    report = json.loads(status.stdout)
    assert report["signedIn"] is False and "AADSTS700024" in report["lastRefreshError"]["message"]
    assert report["clientAssertion"]["source"] == f"file {ci.token_file}"
    assert report["clientAssertion"]["expiresOn"] < time.time()


def test_status_names_the_source_and_the_assertions_expiry(ci):
    ci.token()
    p = ci.run("status", "--output", "json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["signedIn"] is True
    assertion = report["clientAssertion"]
    assert assertion["source"] == "GitHub Actions" and assertion["expiresOn"] > time.time()
    assert report["configuration"]["clientAssertion"] == {"githubActions": {"audience": "api://AzureADTokenExchange"}}
    text = ci.run("status").stdout
    assert "assertion:" in text and "GitHub Actions, current one expires in" in text
    for log in (p.stdout, text):
        assert "eyJ" not in log     # no assertion, no token


def test_the_cache_holds_app_tokens_as_msal_python_does(ci, tmp_path):
    cache = str(tmp_path / "cache" / "app.json")
    ci.verbs.write_config(clientId=APP, authority=f"{ci.mock.url}/{CONTOSO_TID}", cache={"path": cache},
                          clientAssertion={"file": ci.token_file}, scopes=[ARM])
    ci.issuer.write_token_file(ci.token_file)
    p = ci.verbs.run("token")
    assert p.returncode == 0, p.stderr
    document = read_cache(cache)
    [entry] = document["AccessToken"].values()
    assert entry["home_account_id"] is None and entry["client_id"] == APP and entry["realm"] == CONTOSO_TID
    assert entry["target"] == ARM and entry["secret"] == p.stdout.strip()
    assert not document.get("RefreshToken") and not document.get("Account") and not document.get("IdToken")
    # MSAL for Python finds it as its own app token: a ConfidentialClientApplication's cache hit
    import msal
    token_cache = msal.SerializableTokenCache()
    token_cache.deserialize(open(cache).read())
    found = list(token_cache.search(msal.TokenCache.CredentialType.ACCESS_TOKEN,
                                    query={"client_id": APP, "realm": CONTOSO_TID, "home_account_id": None, "environment": entry["environment"]}, target=[ARM]))
    assert [t["secret"] for t in found] == [entry["secret"]]


def test_user_sign_in_is_refused_in_app_mode(ci):
    p = ci.run("login")
    assert p.returncode != 0 and "signs in as the app" in p.stderr and APP in p.stderr, p.stderr
    assert ci.exchanges() == []


def test_az_shim_answers_as_the_service_principal(ci, tmp_path):
    shim = tmp_path / "az-shim"
    shim.mkdir()
    (shim / "az").symlink_to(ci.verbs.binary)
    env = {**ci.verbs.env, **ci.env, "AZURE_CORE_NO_COLOR": "true"}

    def az(*args):
        p = subprocess.run([str(shim / "az"), *args], env=env, capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL, cwd="/bin")
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    shown = az("account", "show", "--output", "json")
    assert shown["user"] == {"name": APP, "type": "servicePrincipal"}
    assert shown["tenantId"] == shown["id"] == CONTOSO_TID
    token = az("account", "get-access-token", "--resource", "https://management.azure.com")
    assert app_claims(token["accessToken"])["aud"] == "https://management.azure.com" and token["tenant"] == CONTOSO_TID
    by_scope = az("account", "get-access-token", "--scope", "https://vault.azure.net/.default", "--tenant", CONTOSO_TID)
    assert app_claims(by_scope["accessToken"])["aud"] == "https://vault.azure.net" and by_scope["tenant"] == CONTOSO_TID
    assert len(ci.exchanges()) == 2

    # azure-identity's AzureCliCredential, the shim first on PATH (a fresh process: its own environment)
    script = ("from azure.identity import AzureCliCredential\n"
              "t = AzureCliCredential().get_token('https://management.azure.com/.default')\n"
              "print(t.token)\n")
    p = subprocess.run([sys.executable, "-c", script], env={**env, "PATH": f"{shim}:{os.environ['PATH']}"},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == token["accessToken"]


def test_managed_identity_credential_gets_the_apps_token(ci, monkeypatch):
    from azure.identity import ManagedIdentityCredential
    ci.verbs.env.update(ci.env)
    mi = Endpoint(ci.verbs)
    try:
        monkeypatch.setenv("IDENTITY_ENDPOINT", mi.url)
        monkeypatch.setenv("IDENTITY_HEADER", mi.secret)
        token = ManagedIdentityCredential().get_token("https://storage.azure.com/.default")
        assert app_claims(token.token)["aud"] == "https://storage.azure.com"
    finally:
        mi.stop()


def test_stdio_serves_app_tokens_and_refuses_interactive_methods(ci, launch, tmp_path):
    ci.issuer.write_token_file(ci.token_file)
    p = launch(env=ci.env, initialize=False)
    p.initialize(cache=str(tmp_path / "cache" / "stdio.json"), clientId=APP,
                 authority=f"{ci.mock.url}/{CONTOSO_TID}", clientAssertion={"file": ci.token_file})
    result = p.silent(scopes=["https://graph.microsoft.com/.default"])
    assert app_claims(result["accessToken"])["aud"] == "https://graph.microsoft.com"
    assert result["account"]["username"] == APP and result["account"]["homeAccountId"] == ""
    for flow in ("browser", "deviceCode"):
        error = p.call("acquireToken", {"scopes": [ARM], "flow": flow})["error"]
        assert "signs in as the app" in error["message"] and APP in error["message"], error
    bad = p.call("initialize", {"clientId": APP, "clientAssertion": {"file": "x", "command": ["y"]}})["error"]
    assert bad["code"] == -32602 and "one source" in bad["message"]
