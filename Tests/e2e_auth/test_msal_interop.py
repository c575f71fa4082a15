"""MSAL interop: the cache file is shared with MSAL for Python (msal==1.39.0, unmodified).

* A cache MSAL for Python wrote (signed in against the mock, serialized to a file) serves
  our acquireTokenSilent without any call to the token endpoint.
* A cache we wrote serves MSAL for Python's acquire_token_silent without any token call.
"""
from __future__ import annotations

import os
import webbrowser

import pytest

from auth_e2e import ALICE, CLIENT_ID, SCOPES, make_browser_wrapper, set_browser_action

msal = pytest.importorskip("msal")
requests = pytest.importorskip("requests")
authcode = pytest.importorskip("msal.oauth2cli.authcode")


@pytest.fixture
def msal_env(monkeypatch, mock, tmp_path):
    """MSAL for Python in this process: the mock's CA, the scripted browser as $BROWSER."""
    monkeypatch.setenv("BROWSER", make_browser_wrapper(tmp_path))
    set_browser_action(tmp_path, "complete")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", mock.ca_file)
    monkeypatch.setenv("SSL_CERT_FILE", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_CA", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_COOKIES", str(tmp_path / "msal-cookies.txt"))
    monkeypatch.setattr(webbrowser, "_tryorder", None)   # re-read $BROWSER
    # MSAL binds its loopback listener to 0.0.0.0 inside containers; keep it on 127.0.0.1.
    monkeypatch.setattr(authcode, "_is_inside_docker", lambda: False)


def msal_app(mock, cache):
    session = requests.Session()
    session.verify = mock.ca_file
    return msal.PublicClientApplication(
        CLIENT_ID, authority=mock.url + "/organizations", instance_discovery=False,
        http_client=session, token_cache=cache)


def test_msal_python_cache_serves_our_silent_request(launch, mock, msal_env, tmp_path):
    cache = msal.SerializableTokenCache()
    app = msal_app(mock, cache)
    result = app.acquire_token_interactive(SCOPES, login_hint=ALICE, timeout=20)
    assert "access_token" in result, result
    path = tmp_path / "msal" / "cache.json"
    path.parent.mkdir()
    path.write_text(cache.serialize())
    os.chmod(path, 0o600)

    before = mock.admin.counts()
    p = launch(cache=str(path))
    accounts = p.ok("getAccounts")["accounts"]
    assert [a["username"] for a in accounts] == [ALICE], accounts
    msal_account = app.get_accounts()[0]
    assert accounts[0]["homeAccountId"] == msal_account["home_account_id"]
    assert p.ok("getCurrentAccount")["account"]["username"] == ALICE  # the only account

    r = p.silent()
    assert r["fromCache"] is True, r
    assert r["accessToken"] == result["access_token"]
    r = p.silent(account={"username": ALICE})
    assert r["fromCache"] is True and r["accessToken"] == result["access_token"], r
    after = mock.admin.counts()
    assert {k: v for k, v in after.items() if k.startswith("token")} == \
        {k: v for k, v in before.items() if k.startswith("token")}, (before, after)


def test_our_cache_serves_msal_python_silent(launch, mock, msal_env, tmp_path):
    path = str(tmp_path / "ours" / "cache.json")
    p = launch(cache=path)
    ours = p.sign_in()
    rest, code = p.finish()
    assert code == 0, (code, rest)

    cache = msal.SerializableTokenCache()
    with open(path, encoding="utf-8") as f:
        cache.deserialize(f.read())
    app = msal_app(mock, cache)
    before = mock.admin.counts()
    accounts = app.get_accounts()
    assert ALICE in [a["username"] for a in accounts], accounts
    alice = next(a for a in accounts if a["username"] == ALICE)
    assert alice["home_account_id"] == ours["account"]["homeAccountId"]
    result = app.acquire_token_silent(SCOPES, account=alice)
    assert result is not None and "access_token" in result, result
    assert result["token_source"] == "cache", result
    assert result["access_token"] == ours["accessToken"]
    after = mock.admin.counts()
    assert after.get("token", 0) == before.get("token", 0), (before, after)

    # MSAL's refresh path also works from our refresh token.
    refreshed = app.acquire_token_silent(SCOPES, account=alice, force_refresh=True)
    assert refreshed and "access_token" in refreshed, refreshed
    assert refreshed["token_source"] == "identity_provider"
    assert mock.admin.count("token:refresh_token") == 1
