"""MSAL for Python (PyPI msal, pinned), unmodified, against the mock."""

import os
import sys
import time
import webbrowser

import msal
import msal.oauth2cli.authcode as authcode
import pytest
import requests

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROWSER = os.path.join(HERE, "scripted_browser.py")
SCOPES = ["User.Read"]


@pytest.fixture
def browser(monkeypatch, mock, tmp_path):
    """$BROWSER = scripted_browser.py trusting the mock's CA; returns its log file."""
    log = tmp_path / "browser.log"
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", mock.ca_file)
    monkeypatch.setenv("SSL_CERT_FILE", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_CA", mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_LOG", str(log))
    monkeypatch.setenv("SCRIPTED_BROWSER_COOKIES", str(tmp_path / "cookies.txt"))
    monkeypatch.setattr(webbrowser, "_tryorder", None)   # re-read $BROWSER
    # MSAL binds its loopback listener to 0.0.0.0 inside containers; keep it on 127.0.0.1.
    monkeypatch.setattr(authcode, "_is_inside_docker", lambda: False)
    return log


def make_app(mock, authority_path="/organizations", cache=None):
    session = requests.Session()
    session.verify = mock.ca_file
    return msal.PublicClientApplication(
        mock.client_id, authority=mock.url + authority_path, instance_discovery=False,
        http_client=session, token_cache=cache or msal.TokenCache())


def test_interactive_then_silent_then_refresh_then_remove(mock, browser):
    app = make_app(mock)
    result = app.acquire_token_interactive(SCOPES, timeout=20)
    assert "access_token" in result, result
    assert result["id_token_claims"]["preferred_username"] == "alice@contoso.com"
    assert browser.read_text().count('"ok": true') == 1
    accounts = app.get_accounts()
    assert [a["username"] for a in accounts] == ["alice@contoso.com"]
    assert accounts[0]["home_account_id"] == "a11ce000-0000-4000-8000-000000000001." \
        "aaaabbbb-0000-cccc-1111-dddd2222eeee"

    cached = app.acquire_token_silent(SCOPES, account=accounts[0])
    assert cached["token_source"] == "cache"
    assert mock.admin.count("token:refresh_token") == 0
    r = requests.get(mock.url + "/v1.0/me", verify=mock.ca_file,
                     headers={"Authorization": "Bearer " + cached["access_token"]})
    assert r.status_code == 200 and r.json()["userPrincipalName"] == "alice@contoso.com"

    # MSAL treats an access token with < 5 minutes left as expired: a 301 s token is
    # "expired" for MSAL after about one second.
    mock.admin.config(access_token_lifetime=301)
    app.acquire_token_silent(SCOPES, account=accounts[0], force_refresh=True)
    assert mock.admin.count("token:refresh_token") == 1
    time.sleep(1.2)
    refreshed = app.acquire_token_silent(SCOPES, account=accounts[0])
    assert refreshed["token_source"] == "identity_provider"
    assert mock.admin.count("token:refresh_token") == 2

    app.remove_account(accounts[0])
    assert app.get_accounts() == []
    assert app.acquire_token_silent(SCOPES, account=accounts[0]) is None


def test_device_flow(mock, browser):
    mock.admin.config(device_code_interval=1)
    app = make_app(mock)
    flow = app.initiate_device_flow(scopes=SCOPES)
    assert flow["user_code"] and flow["verification_uri"].endswith("/devicelogin")
    assert flow["message"].startswith("To sign in")
    # First poll while pending, then approve: MSAL keeps polling.
    first = app.acquire_token_by_device_flow(flow, exit_condition=lambda f: True)
    assert first["error"] == "authorization_pending"
    mock.admin.device("approve", flow["user_code"], username="bob@contoso.com")
    result = app.acquire_token_by_device_flow(flow)
    assert "access_token" in result, result
    assert app.get_accounts()[0]["username"] == "bob@contoso.com"
    assert mock.admin.count("token:device_code") == 2


def test_device_flow_declined(mock, browser):
    mock.admin.config(device_code_interval=1)
    app = make_app(mock)
    flow = app.initiate_device_flow(scopes=SCOPES)
    mock.admin.device("decline", flow["user_code"])
    result = app.acquire_token_by_device_flow(flow)
    assert result["error"] == "authorization_declined"


def test_b2c_policy_sign_in(mock, browser):
    authority = "/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi"
    app = make_app(mock, authority)
    scope = ["https://fabrikamb2c.onmicrosoft.com/api/demo.read"]
    result = app.acquire_token_interactive(scope, timeout=20)
    assert "access_token" in result, result
    claims = result["id_token_claims"]
    assert claims["tfp"] == "B2C_1_susi"
    assert claims["iss"] == "%s/tfp/%s/B2C_1_susi/v2.0/" % (mock.url, claims["tid"])
    account = app.get_accounts()[0]
    oid_part, tid = account["home_account_id"].split(".")
    assert oid_part == "da7e0000-0000-4000-8000-000000000004-b2c_1_susi"
    assert oid_part.endswith("b2c_1_susi") and tid == claims["tid"]
    again = app.acquire_token_silent(scope, account=account)
    assert again["token_source"] == "cache"
    refreshed = app.acquire_token_silent(scope, account=account, force_refresh=True)
    assert refreshed["token_source"] == "identity_provider"
    app.remove_account(account)
    assert app.get_accounts() == []


def test_sso_with_browser_session_and_prompt_none(mock, browser):
    app = make_app(mock)
    assert "access_token" in app.acquire_token_interactive(SCOPES, login_hint="bob@contoso.com",
                                                           timeout=20)
    other = make_app(mock)   # another app, same browser (cookie jar): SSO with prompt=none
    result = other.acquire_token_interactive(SCOPES, prompt="none", timeout=20)
    assert result["id_token_claims"]["preferred_username"] == "bob@contoso.com"
    authorize = mock.admin.log("authorize")
    assert authorize[-1]["query"]["prompt"] == "none"
    assert authorize[0]["query"]["login_hint"] == "bob@contoso.com"


def test_revoked_refresh_token_gives_invalid_grant(mock, browser):
    app = make_app(mock)
    app.acquire_token_interactive(SCOPES, timeout=20)
    mock.admin.revoke(username="alice@contoso.com")
    result = app.acquire_token_silent_with_error(SCOPES, app.get_accounts()[0], force_refresh=True)
    assert result["error"] == "invalid_grant"
    assert result["error_codes"] == [700082]
    assert result["error_description"].startswith("AADSTS700082:")


def test_cancelled_in_browser(mock, browser, monkeypatch):
    monkeypatch.setenv("SCRIPTED_BROWSER_ACTION", "deny")
    result = make_app(mock).acquire_token_interactive(SCOPES, timeout=20)
    assert result["error"] == "access_denied"
