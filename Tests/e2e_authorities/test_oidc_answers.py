"""A generic OpenID provider (issue 10, items 7 and 11): the mock's issuer /issuers/a (ES256,
token_type "bearer", no client_info). RP-initiated logout with id_token_hint and client_id, and
results shaped as MSAL's whatever the provider spells."""
from __future__ import annotations

import json
import time

from authorities_e2e import ALICE, CLIENT_ID


def oidc(launch, mock, **config):
    return launch(authority=f"{mock.url}/issuers/a", authorityType="oidc", knownAuthorities=[], **config)


def logout_requests(mock, count=1, timeout=10.0):
    """The mock's log of the logout endpoint (the scripted browser detaches like xdg-open)."""
    deadline = time.monotonic() + timeout
    while True:
        logged = mock.admin.log("issuer:a:logout")
        if len(logged) >= count or time.monotonic() > deadline:
            return logged
        time.sleep(0.1)


def test_browser_sign_out_sends_id_token_hint_and_client_id(launch, mock):
    p = oidc(launch, mock, postLogoutRedirectUri="https://app.example/signed-out")
    first = p.sign_in(loginHint=ALICE)
    out = p.ok("signout", {"signoutFromBrowser": True})
    assert out["signedOut"] is True and out["browserSignOut"] == "opened", out
    logged = logout_requests(mock)
    assert len(logged) == 1, logged
    query = logged[0]["query"]
    assert query.get("id_token_hint") == first["idToken"], query.keys()
    assert query.get("client_id") == CLIENT_ID and query.get("logout_hint") == ALICE, query
    assert query.get("post_logout_redirect_uri") == "https://app.example/signed-out", query
    assert logged[0]["status"] == 302, "the mock accepted the hint and redirected"
    # Only the cache part asked for: no browserSignOut, no logout request.
    p.sign_in(loginHint=ALICE)
    assert "browserSignOut" not in p.ok("signout", {})
    time.sleep(0.5)
    assert len(mock.admin.log("issuer:a:logout")) == 1


def test_browser_sign_out_reports_a_browser_that_cannot_open(launch, mock, tmp_path):
    p = oidc(launch, mock)
    p.sign_in(loginHint=ALICE)
    (tmp_path / "browser.sh").write_text("#!/bin/sh\nexit 3\n")  # $BROWSER now fails at once
    out = p.ok("signout", {"signoutFromBrowser": True})
    assert out["browserSignOut"] == "failed", out
    assert p.ok("getAccounts", {})["accounts"] == [], "the tokens are gone all the same"


def test_bearer_normalised_and_the_id_token_kept_after_a_refresh_without_one(launch, mock, tmp_path):
    path = str(tmp_path / "cache" / "cache.json")
    p = oidc(launch, mock, cache={"path": path})
    first = p.sign_in(loginHint=ALICE)
    assert first["idToken"] and first["tokenType"] == "Bearer", "the provider says bearer"
    second = p.silent(forceRefresh=True)  # the provider's own refresh: a new ID token
    assert second["tokenType"] == "Bearer" and second["idToken"]
    mock.admin.fault(endpoint="issuer:a:token:refresh_token", type="status", status=200,
                     body={"access_token": "at-from-refresh", "token_type": "bearer", "expires_in": 3600,
                           "scope": "User.Read"})
    fresh = p.silent(forceRefresh=True)
    assert fresh["accessToken"] == "at-from-refresh" and fresh["fromCache"] is False
    assert fresh["tokenType"] == "Bearer", fresh["tokenType"]
    assert fresh["idToken"] == second["idToken"], "the cached ID token stays in the result"
    cached = p.silent()
    assert cached["fromCache"] is True and cached["tokenType"] == "Bearer" and cached["idToken"] == second["idToken"]
    with open(path) as f:
        entries = json.load(f)["AccessToken"].values()
    assert {e["token_type"] for e in entries if e["secret"] == "at-from-refresh"} == {"Bearer"}
