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
