"""Token kinds meet the backends (#46): each backend (the engine's flows against the mock, the
Linux broker's stand-in, the app identity of CI federation) serves the kinds it declares and
refuses the others by name, -51016 tokenKindNotServed with `data.backend` and `data.tokenKind`,
before any request is made (the mock's /_admin/log and the stand-in's record stay empty of
token requests); never another kind in its place.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from test_broker import broker, broker_env, start_broker  # noqa: F401  (fixtures)
from test_federation import APP, CI, issuer  # noqa: F401  (issuer: the fixture)
from test_verbs import verbs  # noqa: F401  (the fixture)
from auth_e2e import CONTOSO_TID

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"


def rsa_key(tmp_path, name="id_rsa") -> str:
    path = str(tmp_path / name)
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", path],
                   check=True, stdin=subprocess.DEVNULL)
    return path


def token_requests(mock) -> list:
    """What reached the mock's token and authorize endpoints (its /_admin/log)."""
    return [r for r in mock.admin.log()
            if any(e.startswith(("token", "authorize", "devicecode")) for e in r["endpoints"])]


def assert_refused(error: dict, backend: str) -> None:
    assert error["code"] == -51016, error
    assert error["data"] == {"name": "tokenKindNotServed", "backend": backend, "tokenKind": "sshCertificate"}, error
    assert "does not issue SSH certificates" in error["message"], error


needs_ssh_keygen = pytest.mark.skipif(
    not subprocess.run(["sh", "-c", "command -v ssh-keygen"], capture_output=True).stdout and not os.environ.get("CI"),
    reason="ssh-keygen is not installed")


@needs_ssh_keygen
@pytest.mark.parametrize("mode", ["required", "auto"])
def test_the_broker_refuses_an_ssh_certificate_before_any_call(verbs, launch, mock, broker, tmp_path, mode):  # noqa: F811
    key = rsa_key(tmp_path)
    env = broker_env(broker)
    p = launch(env=env, cache=str(tmp_path / "stdio" / "cache.json"), broker=mode, sshCertScope=PAS)
    error = p.call("acquireTokenSilent", {"sshCertificate": {"publicKey": open(key + ".pub").read()}})["error"]
    assert_refused(error, "broker")
    error = p.call("acquireToken", {"sshCertificate": {"publicKey": open(key + ".pub").read()}})["error"]
    assert_refused(error, "broker")
    # The verb: one line saying so, no certificate file.
    verbs.write_config(broker=mode, sshCertScope=PAS)
    run = verbs.run("ssh-cert", "--key", key, env=env)
    assert run.returncode == 1 and run.stdout == "", (run.stdout, run.stderr)
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "the Linux identity broker does not issue SSH certificates" in run.stderr, run.stderr
    assert not os.path.exists(key + "-cert.pub")
    # Nothing asked: no token call to the broker (only the engine's own start-up getAccounts
    # and version), no request to the identity service.
    asked = {c["method"] for c in broker.calls()}
    assert asked <= {"getAccounts", "getLinuxBrokerVersion"}, asked
    assert token_requests(mock) == []
    # A bearer token through the same broker still works (the refusal is of the kind only).
    p.sign_in(scopes=["https://graph.microsoft.com/User.Read"])
    bearer = p.silent(scopes=["https://graph.microsoft.com/User.Read"])
    assert bearer["tokenType"] == "Bearer" and "sshCertificate" not in bearer


@needs_ssh_keygen
def test_the_app_identity_refuses_an_ssh_certificate_before_any_request(verbs, launch, mock, issuer, tmp_path):  # noqa: F811
    ci = CI(verbs, mock, issuer, tmp_path)
    ci.kubernetes()
    key = rsa_key(tmp_path)
    p = launch(env=ci.env, initialize=False)
    p.initialize(cache=str(tmp_path / "cache" / "app.json"), clientId=APP,
                 authority=f"{mock.url}/{CONTOSO_TID}", clientAssertion={"file": ci.token_file}, sshCertScope=PAS)
    error = p.call("acquireTokenSilent", {"sshCertificate": {"publicKey": open(key + ".pub").read()}})["error"]
    assert_refused(error, "appIdentity")
    verbs.write_config(clientId=APP, authority=f"{mock.url}/{CONTOSO_TID}", cache={"path": str(tmp_path / "cache" / "app.json")},
                       clientAssertion={"file": ci.token_file}, sshCertScope=PAS)
    run = verbs.run("ssh-cert", "--key", key)
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "the app identity (client assertion) does not issue SSH certificates" in run.stderr, run.stderr
    assert not os.path.exists(key + "-cert.pub")
    assert token_requests(mock) == []
    # Its bearer token is still served, by a client-credentials exchange.
    bearer = p.silent(scopes=["https://graph.microsoft.com/.default"])
    assert bearer["tokenType"] == "Bearer"
    assert len(mock.admin.log("token:client_credentials")) == 1
