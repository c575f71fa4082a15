"""MSAL interop: the cache file is shared with MSAL for Python (msal==1.39.0, unmodified).

* A cache MSAL for Python wrote (signed in against the mock, serialized to a file) serves
  our acquireTokenSilent without any call to the token endpoint.
* A cache we wrote serves MSAL for Python's acquire_token_silent without any token call.

Both at an authority on the default port (`https://localhost/organizations`, the mock behind a
CONNECT proxy, `connect_proxy.DefaultPort`): there the cache environment is the bare host, as
every MSAL writes it. On another port ours is `host:port` while MSAL for Python drops the port
(its tokens would cross ports), so caches are shared on the default port only.
"""
from __future__ import annotations

import os
import webbrowser

import pytest

from auth_e2e import ALICE, CLIENT_ID, SCOPES, make_browser_wrapper, set_browser_action
from connect_proxy import DefaultPort

msal = pytest.importorskip("msal")
requests = pytest.importorskip("requests")
authcode = pytest.importorskip("msal.oauth2cli.authcode")


@pytest.fixture
def default_port(mock):
    served = DefaultPort(mock.host)
    yield served
    served.stop()


@pytest.fixture
def msal_env(monkeypatch, mock, default_port, tmp_path):
    """MSAL for Python in this process: the mock's CA, the scripted browser as $BROWSER, the
    mock at https://localhost (the proxy variables)."""
    for name, value in default_port.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BROWSER", make_browser_wrapper(tmp_path))
    set_browser_action(tmp_path, "complete")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", mock.ca_file)
    monkeypatch.setenv("SSL_CERT_FILE", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_CA", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_COOKIES", str(tmp_path / "msal-cookies.txt"))
    monkeypatch.setattr(webbrowser, "_tryorder", None)   # re-read $BROWSER
    # MSAL binds its loopback listener to 0.0.0.0 inside containers; keep it on 127.0.0.1.
    monkeypatch.setattr(authcode, "_is_inside_docker", lambda: False)


def msal_app(mock, cache, default_port):
    session = requests.Session()
    session.verify = mock.ca_file
    return msal.PublicClientApplication(
        CLIENT_ID, authority=default_port.url + "/organizations", instance_discovery=False,
        http_client=session, token_cache=cache)


def launch_at(launch, default_port, cache):
    """Our process at the same authority as MSAL's."""
    return launch(cache=cache, env=default_port.env, authority=default_port.url + "/organizations",
                  knownAuthorities=[default_port.host])


def test_msal_python_cache_serves_our_silent_request(launch, mock, msal_env, default_port, tmp_path):
    cache = msal.SerializableTokenCache()
    app = msal_app(mock, cache, default_port)
    result = app.acquire_token_interactive(SCOPES, login_hint=ALICE, timeout=20)
    assert "access_token" in result, result
    path = tmp_path / "msal" / "cache.json"
    path.parent.mkdir()
    path.write_text(cache.serialize())
    os.chmod(path, 0o600)

    before = mock.admin.counts()
    p = launch_at(launch, default_port, str(path))
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


def test_our_cache_serves_msal_python_silent(launch, mock, msal_env, default_port, tmp_path):
    path = str(tmp_path / "ours" / "cache.json")
    p = launch_at(launch, default_port, path)
    ours = p.sign_in()
    rest, code = p.finish()
    assert code == 0, (code, rest)

    cache = msal.SerializableTokenCache()
    with open(path, encoding="utf-8") as f:
        cache.deserialize(f.read())
    app = msal_app(mock, cache, default_port)
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
