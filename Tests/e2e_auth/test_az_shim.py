"""The `az` entry point (the binary started as `az`, or `auth-sidecar az ...`) with its real
client, azure-identity's AzureCliCredential (and DefaultAzureCredential's CLI step), and its
output compared field by field with Azure CLI's recorded shapes (Tests/e2e_auth/fixtures/az/,
from azure-cli 2.91.0's source and the real az's messages).
"""
from __future__ import annotations

import base64
import datetime
import json
import os
import re
import subprocess
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from auth_e2e import ALICE, CONTOSO_TID
from test_adapters import claims, expires_with
from test_verbs import Verbs, graph_me, verbs  # noqa: F401 (fixture)

GRAPH_DEFAULT = "https://graph.microsoft.com/.default"
FIXTURES = Path(__file__).parent / "fixtures" / "az"


def fixture(name: str):
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def az(verbs: Verbs, tmp_path) -> Path:
    """A directory holding `az`, a link to the binary, as install.sh makes it."""
    shim = tmp_path / "az-shim" / "bin"
    shim.mkdir(parents=True)
    (shim / "az").symlink_to(verbs.binary)
    return shim


def run_az(verbs: Verbs, az: Path, *args, env=None, cwd="/bin") -> subprocess.CompletedProcess:
    """`az ARGS` as azure-identity runs it: from /bin, stdin closed."""
    return subprocess.run([str(az / "az"), *args], env={**verbs.env, "AZURE_CORE_NO_COLOR": "true", **(env or {})},
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, cwd=cwd)


@pytest.fixture
def on_path(verbs: Verbs, az: Path, monkeypatch):
    """This process's environment as the verbs', the `az` link first on PATH (what a user does
    where they want it)."""
    for key, value in verbs.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{az}:{os.environ['PATH']}")


def test_get_access_token_prints_azs_json(verbs, mock, az):
    verbs.ok("login")
    zone = "Asia/Kolkata"  # not UTC, so a local-time mistake shows
    p = run_az(verbs, az, "account", "get-access-token", "--output", "json", "--resource", "https://graph.microsoft.com",
               env={"TZ": zone})
    assert p.returncode == 0 and p.stderr == "", p.stderr
    shape = fixture("get-access-token.json")
    out = json.loads(p.stdout)
    assert list(out) == shape["keys"], out.keys()  # az's keys, sorted as it prints them
    for key, kind in shape["types"].items():
        assert type(out[key]).__name__ == kind, (key, out[key])
    assert re.fullmatch(shape["expiresOnPattern"], out["expiresOn"])
    local = datetime.datetime.fromtimestamp(out["expires_on"], ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert out["expiresOn"] == local and expires_with(out["accessToken"], out["expires_on"])
    assert out["tokenType"] == "Bearer" and out["tenant"] == out["subscription"] == CONTOSO_TID
    assert claims(out["accessToken"])["aud"] == "https://graph.microsoft.com"
    assert graph_me(mock, out["accessToken"]).json()["userPrincipalName"] == ALICE
    # the text itself: json.dumps(indent=2, sort_keys=True) + "\n", as knack prints it
    assert p.stdout == json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # `auth-sidecar az ...` is the same entry point
    same = subprocess.run([verbs.binary, "az", "account", "get-access-token", "--resource", "https://graph.microsoft.com"],
                          env=verbs.env, capture_output=True, text=True, timeout=30)
    assert same.returncode == 0 and json.loads(same.stdout)["accessToken"] == out["accessToken"]


def test_scopes_resource_types_tenant_query_and_tsv(verbs, mock, az):
    verbs.ok("login")
    by_type = json.loads(run_az(verbs, az, "account", "get-access-token", "--resource-type", "ms-graph").stdout)
    # az keeps the resource's trailing slash: https://graph.microsoft.com//.default
    assert claims(by_type["accessToken"])["aud"].rstrip("/") == "https://graph.microsoft.com"
    scoped = run_az(verbs, az, "account", "get-access-token", "--scope", GRAPH_DEFAULT, "-o=json")
    assert scoped.returncode == 0 and claims(json.loads(scoped.stdout)["accessToken"])["scp"]
    tenant = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com", "--tenant", CONTOSO_TID)
    out = json.loads(tenant.stdout)
    assert out["tenant"] == CONTOSO_TID and "subscription" not in out  # az: no subscription with --tenant
    assert claims(out["accessToken"])["tid"] == CONTOSO_TID
    plain = json.loads(run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com").stdout)
    token = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com",
                   "--query", "accessToken", "-o", "tsv")
    assert token.returncode == 0 and token.stdout == plain["accessToken"] + "\n"
    quoted = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com", "--query", "accessToken")
    assert quoted.stdout == json.dumps(plain["accessToken"]) + "\n"
    expires = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com",
                     "--query", "expires_on", "--output", "tsv")
    assert re.fullmatch(r"\d{10}\n", expires.stdout)
    pair = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com",
                  "--query", "[tokenType, expiresOn]", "-o", "tsv")
    # knack's tsv prints a list result one item per line
    assert re.fullmatch(r"Bearer\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.000000\n", pair.stdout), pair.stdout
    row = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com", "-o", "tsv")
    # knack's tsv: the values in key order (accessToken, expiresOn, expires_on, subscription, tenant, tokenType)
    values = row.stdout.rstrip("\n").split("\t")
    assert values[3:] == [CONTOSO_TID, CONTOSO_TID, "Bearer"] and len(values) == 6, values
    assert values[2] == str(int(values[2])) and values[1] == datetime.datetime.fromtimestamp(int(values[2])).strftime(
        "%Y-%m-%d %H:%M:%S.%f")


def test_account_show_is_a_tenant_level_account(verbs, mock, az):
    verbs.ok("login")
    p = run_az(verbs, az, "account", "show", "-o=json")  # as Terraform's azurerm provider runs it
    assert p.returncode == 0, p.stderr
    shown = json.loads(p.stdout)
    expected = fixture("account-show-tenant-level.json")
    assert list(shown) == list(expected["account"])
    for key, value in expected["account"].items():
        if key in ("id", "tenantId"):
            assert shown[key] == CONTOSO_TID
        elif key == "user":
            assert shown["user"] == {"name": ALICE, "type": "user"}
        else:
            assert shown[key] == value, key
    assert p.stdout == json.dumps(shown, indent=2, sort_keys=True) + "\n"
    assert run_az(verbs, az, "account", "show", "--query", "user.name", "-o", "tsv").stdout == ALICE + "\n"
    assert run_az(verbs, az, "account", "show", "--query", "isDefault", "-o", "tsv").stdout == "true\n"
    assert run_az(verbs, az, "account", "show", "--subscription", CONTOSO_TID).returncode == 0
    other = run_az(verbs, az, "account", "show", "--subscription", "00000000-0000-0000-0000-000000000000")
    assert other.returncode == 1 and other.stderr.startswith("ERROR: Subscription '00000000-0000-0000-0000-000000000000' not found.")


def test_nobody_signed_in_is_azs_please_run_az_login(verbs, az):
    messages = fixture("messages.json")
    for args in (["account", "get-access-token", "--output", "json", "--resource", "https://graph.microsoft.com"],
                 ["account", "show", "-o=json"]):
        p = run_az(verbs, az, *args)
        assert p.returncode == messages["notLoggedIn"]["status"] and p.stdout == ""
        assert p.stderr.splitlines()[0] == messages["notLoggedIn"]["stderr"].rstrip("\n")
        assert "auth-sidecar login" in p.stderr


@pytest.mark.parametrize("args, needle", [
    (["account", "get-access-token", "--bogus"], "unrecognized arguments: --bogus"),
    (["account", "get-access-token", "--resource-type", "bogus"], "'bogus' is not a valid value for '--resource-type'"),
    (["account", "get-access-token", "--query", "length(@)"], "--query"),
    (["account", "get-access-token", "--output", "yaml"], "--output"),
    (["account", "get-access-token", "--resource"], "expected one argument"),
    (["login"], "real Azure CLI"),
    (["group", "list"], "real Azure CLI"),
    ([], "real Azure CLI"),
])
def test_usage_errors_and_other_commands_exit_2(verbs, az, args, needle):
    p = run_az(verbs, az, *args)
    assert p.returncode == 2 and p.stdout == "" and needle in p.stderr and p.stderr.startswith("ERROR: "), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_azure_cli_credential_gets_the_users_token(verbs, mock, on_path):
    from azure.identity import AzureCliCredential
    verbs.ok("login")
    token = AzureCliCredential().get_token(GRAPH_DEFAULT)
    assert graph_me(mock, token.token).json()["userPrincipalName"] == ALICE
    assert expires_with(token.token, token.expires_on)
    assert claims(token.token)["tid"] == CONTOSO_TID
    tenant = AzureCliCredential().get_token(GRAPH_DEFAULT, tenant_id=CONTOSO_TID)
    assert claims(tenant.token)["tid"] == CONTOSO_TID
    pinned = AzureCliCredential(tenant_id=CONTOSO_TID).get_token_info(GRAPH_DEFAULT)
    assert graph_me(mock, pinned.token).status == 200

    async def from_asyncio():
        from azure.identity.aio import AzureCliCredential as AsyncAzureCliCredential
        async with AsyncAzureCliCredential() as credential:
            return await credential.get_token(GRAPH_DEFAULT)

    import asyncio
    assert graph_me(mock, asyncio.run(from_asyncio()).token).status == 200  # the aio credential spawns az too


def test_default_azure_credential_uses_the_cli_step(verbs, mock, on_path):
    from azure.identity import DefaultAzureCredential
    verbs.ok("login")
    excluded = {f"exclude_{name}_credential": True for name in (
        "environment", "workload_identity", "managed_identity", "shared_token_cache", "visual_studio_code",
        "azure_powershell", "azure_developer_cli", "interactive_browser")}
    token = DefaultAzureCredential(**excluded).get_token(GRAPH_DEFAULT)
    assert graph_me(mock, token.token).json()["userPrincipalName"] == ALICE


def test_azure_cli_credential_without_a_sign_in_is_unavailable(verbs, on_path):
    from azure.identity import AzureCliCredential, CredentialUnavailableError
    with pytest.raises(CredentialUnavailableError, match="az login"):
        AzureCliCredential().get_token(GRAPH_DEFAULT)


def test_claims_challenge_gets_a_token_for_those_claims(verbs, mock, az):
    verbs.ok("login")
    first = json.loads(run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com").stdout)
    challenge = base64.b64encode(json.dumps({"access_token": {"nbf": {"essential": True, "value": str(int(time.time()))}}})
                                 .encode()).decode()
    p = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com",
               "--claims-challenge", challenge)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["accessToken"] != first["accessToken"]  # not the cached token: acquired for the claims
    bad = run_az(verbs, az, "account", "get-access-token", "--claims-challenge", "%%%")
    assert bad.returncode == 2 and "--claims-challenge" in bad.stderr


def test_no_refresh_token_is_ever_printed(verbs, mock, az):
    verbs.ok("login")
    cache = json.loads(Path(verbs.cache).read_text())
    refresh_tokens = [entry["secret"] for entry in cache.get("RefreshToken", {}).values()]
    assert refresh_tokens
    for args in (["account", "get-access-token"], ["account", "show"], ["account", "get-access-token", "-o", "tsv"]):
        p = run_az(verbs, az, *args)
        assert not any(rt in p.stdout + p.stderr for rt in refresh_tokens)


def test_az_passthrough_runs_the_real_az_further_down_path(verbs, az, tmp_path):
    real = tmp_path / "real-az" / "bin"
    real.mkdir(parents=True)
    (real / "az").write_text("#!/bin/sh\nprintf 'real az:'; for a in \"$@\"; do printf ' [%s]' \"$a\"; done; echo; exit 3\n")
    (real / "az").chmod(0o755)
    again = tmp_path / "another-link"
    again.mkdir()
    os.link(verbs.binary, again / "az")  # a hard link to this binary is this binary too: skipped
    path = f"{az}:{again}:{real}:{os.environ['PATH']}"
    refused = run_az(verbs, az, "group", "list", env={"PATH": path})
    assert refused.returncode == 2 and "real Azure CLI" in refused.stderr and refused.stdout == ""
    verbs.write_config(azPassthrough=True)
    passed = run_az(verbs, az, "group", "list", "--query", "[0].name", "-o", "tsv", env={"PATH": path})
    assert passed.returncode == 3 and passed.stdout == "real az: [group] [list] [--query] [[0].name] [-o] [tsv]\n", passed
    # what the shim answers it still answers itself
    assert run_az(verbs, az, "account", "show", env={"PATH": path}).returncode == 1  # nobody signed in: az's answer
    alone = run_az(verbs, az, "login", env={"PATH": f"{az}:{again}"})
    assert alone.returncode == 2 and "found no other az on PATH" in alone.stderr


def test_az_passthrough_to_another_copy_of_the_shim_stops_with_a_clear_error(verbs, az, tmp_path):
    """Issue 35: a second auth-sidecar on PATH (here a wrapper script, as a venv or a package
    may install one) used to be run by the passthrough, which ran the first one again, for ever."""
    wrapper = tmp_path / "wrapper" / "bin"
    wrapper.mkdir(parents=True)
    (wrapper / "az").write_text(f"#!/bin/sh\nexec {verbs.binary} az \"$@\"\n")
    (wrapper / "az").chmod(0o755)
    verbs.write_config(azPassthrough=True)
    started = time.monotonic()
    looped = run_az(verbs, az, "group", "list", env={"PATH": f"{az}:{wrapper}:{os.environ['PATH']}"})
    assert time.monotonic() - started < 10
    assert looped.returncode == 2 and looped.stdout == "", looped
    assert f"was passed by auth-sidecar's shim (azPassthrough) to {wrapper}/az" in looped.stderr, looped.stderr
    assert "not passed on a second time" in looped.stderr and looped.stderr.count("ERROR:") == 1, looped.stderr


@pytest.mark.parametrize("tenant", ["..", ".", "%2e%2e", "a_b", "contoso..com"])
def test_a_tenant_that_is_not_one_is_a_usage_error(verbs, az, tenant):
    p = run_az(verbs, az, "account", "get-access-token", "--tenant", tenant)
    assert p.returncode == 2 and p.stdout == "", p
    assert f"--tenant: '{tenant}' is not a tenant" in p.stderr, p.stderr


def test_output_is_byte_for_byte_the_recorded_real_az(verbs, mock, az):
    """The real az 2.91.0's output (fixtures/az/recorded-2.91.0.json, against this mock), with
    the token, its expiry and the cloud's name put in: the same bytes."""
    recorded = fixture("recorded-2.91.0.json")
    verbs.ok("login")
    runs = {
        "get-access-token": ["account", "get-access-token", "--output", "json", "--resource", "https://graph.microsoft.com"],
        "get-access-token-tenant": ["account", "get-access-token", "--output", "json", "--resource", "https://graph.microsoft.com",
                                    "--tenant", CONTOSO_TID],
        "get-access-token-tsv": ["account", "get-access-token", "--resource", "https://graph.microsoft.com", "-o", "tsv"],
        "account-show": ["account", "show", "-o=json"],
    }
    for name, args in runs.items():
        p = run_az(verbs, az, *args)
        assert p.returncode == recorded[name]["status"], (name, p.stderr)
        expected = recorded[name]["stdout"].replace('"environmentName": "Mock"', '"environmentName": "AzureCloud"')
        if name.startswith("get-access-token"):
            token = re.search(r"eyJ[\w-]+\.[\w-]+\.[\w-]+", p.stdout).group(0)
            expires_on = re.search(r"\b1\d{9}\b", p.stdout).group(0)
            expires = datetime.datetime.fromtimestamp(int(expires_on)).strftime("%Y-%m-%d %H:%M:%S.%f")
            expected = (expected.replace("ACCESS_TOKEN", token).replace("1795645558", expires_on)
                        .replace("2026-11-25 22:25:58.000000", expires))
        assert p.stdout == expected, name


def test_a_revoked_sign_in_is_an_az_login_answer(verbs, mock, az, on_path):
    """The refresh token revoked: az's shape of an interactive-authentication failure (the
    service's AADSTS text, exit 1), which names the sign-in here; azure-identity raises
    ClientAuthenticationError (AADSTS in the text), as it does for the real az."""
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import AzureCliCredential
    verbs.ok("login")
    mock.admin.revoke(username=ALICE)
    p = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com")
    assert p.returncode == 1 and p.stdout == "" and p.stderr.startswith("ERROR: "), p.stderr
    assert "auth-sidecar login" in p.stderr and "AADSTS" in p.stderr and len(p.stderr.splitlines()) == 2, p.stderr
    with pytest.raises(ClientAuthenticationError) as raised:
        AzureCliCredential().get_token(GRAPH_DEFAULT)
    assert "auth-sidecar login" in str(raised.value)
