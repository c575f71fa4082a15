"""More of the flows: request options reaching the authorize endpoint, the `client` browser
mode (openUrl to the peer), SIGTERM during a sign-in, new scopes through the refresh token,
Azure AD B2C."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import sidecar as sc
from auth_e2e import ALICE, BOB, BROWSER, SCOPES, SIGN_IN
from test_auth_errors import port_is_listening, redirect_port

B2C_AUTHORITY = "/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi"
B2C_SCOPES = ["https://fabrikamb2c.onmicrosoft.com/api/demo.read"]


def test_request_options_reach_the_authorize_endpoint(launch, mock):
    p = launch()
    r = p.sign_in(promptType="login", loginHint=BOB, domainHint="contoso.com",
                  extraQueryParameters={"msafed": "0"}, extraScopesToConsent=["Mail.Read"])
    assert r["account"]["username"] == BOB
    q = mock.admin.log("authorize")[-1]["query"]
    assert q["prompt"] == "login" and q["login_hint"] == BOB and q["domain_hint"] == "contoso.com", q
    assert q["msafed"] == "0", q
    assert q["code_challenge_method"] == "S256" and q["code_challenge"] and q["state"] and q["nonce"], q
    assert set(q["scope"].lower().split()) >= {"user.read", "mail.read", "openid", "profile", "offline_access"}, q

    # An AccountRef: its username is the login hint.
    p.sign_in(account={"homeAccountId": r["account"]["homeAccountId"]}, promptType="selectAccount")
    q = mock.admin.log("authorize")[-1]["query"]
    assert q["login_hint"] == BOB and q["prompt"] == "select_account", q


def test_client_browser_mode_asks_the_peer_to_open_the_url(launch, mock, tmp_path):
    p = launch(browser="client")
    rid = p.submit("acquireToken", {"scopes": SCOPES})
    m = p.next_message(10)
    assert m.get("method") == "openUrl" and "id" in m, m
    assert m["params"]["url"].startswith(mock.url + "/organizations/oauth2/v2.0/authorize?"), m
    assert m["params"].get("requestId") == rid, m
    env = dict(os.environ, SCRIPTED_BROWSER_CA=mock.ca_file, SCRIPTED_BROWSER_WAIT="1",
               SCRIPTED_BROWSER_ACTION="complete")
    # Like an editor: start the browser, answer openUrl at once, the sign-in goes on.
    browser = subprocess.Popen([sys.executable, BROWSER, m["params"]["url"]], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        p.send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
        r = sc.assert_result(p.wait_for(rid, SIGN_IN))
        assert browser.wait(10) == 0, browser.stderr.read()
    finally:
        if browser.poll() is None:
            browser.kill()
            browser.wait()
        browser.stderr.close()
    assert r["account"]["username"] == ALICE and r["fromCache"] is False
    assert not os.path.exists(tmp_path / "browser.log"), "$BROWSER was run although browser is client"


def test_client_refuses_to_open_the_url(launch, mock):
    p = launch(browser="client")
    rid = p.submit("acquireToken", {"scopes": SCOPES})
    m = p.next_message(10)
    assert m.get("method") == "openUrl", m
    p.send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "no browser here"}})
    sc.assert_error(p.wait_for(rid, 10), -51006, name="browserUnavailable")


def test_end_of_input_while_open_url_awaits_the_client(launch, mock):
    # The client asked to open the URL, then its input ended (it quit) without answering: no
    # answer can come any more, so the sign-in ends (-51006) and the process exits at once,
    # instead of waiting for the interactive time limit (600 s).
    p = launch(browser="client")
    rid = p.submit("acquireToken", {"scopes": SCOPES})
    m = p.next_message(10)
    assert m.get("method") == "openUrl", m
    msgs, status = p.finish(10)
    assert status == 0
    replies = [r for r in msgs if isinstance(r, dict) and r.get("id") == rid]
    assert len(replies) == 1, msgs
    sc.assert_error(replies[0], -51006, name="browserUnavailable")


def test_sigterm_during_sign_in(launch, mock, tmp_path):
    p = launch(browser_action="cancel")
    rid = p.submit("acquireToken", {"scopes": SCOPES})
    port = redirect_port(tmp_path)
    p.signal(signal.SIGTERM)
    sc.assert_error(p.wait_for(rid, 5), -32800, name="requestCancelled")
    assert p.wait_exit(5) == 0
    assert not port_is_listening(port)


def test_new_scopes_through_the_refresh_token(launch, mock):
    p = launch()
    p.sign_in()
    # Not consented yet: the user must act.
    e = p.error("acquireTokenSilent", {"scopes": ["Mail.Read"]}, -50002, name="interactionRequired")
    assert e["data"].get("suberror") == "consent_required" and e["data"].get("errorCodes") == [65001], e
    mock.admin.consent(username=ALICE, scopes=["Mail.Read"], action="grant")
    mock.admin.call("counts/reset", {})
    r = p.silent(scopes=["Mail.Read"])
    assert r["fromCache"] is False
    assert [s.lower() for s in r["scopes"]] == ["mail.read"], r
    assert mock.admin.count("token:refresh_token") == 1
    assert p.silent(scopes=["Mail.Read"])["fromCache"] is True
    assert p.silent()["fromCache"] is True  # the User.Read token is still there
    assert mock.admin.count("token:refresh_token") == 1


def test_claims_bypass_the_cache(launch, mock):
    p = launch()
    first = p.sign_in()
    claims = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
    r = p.silent(claims=claims)
    assert r["fromCache"] is False and r["accessToken"] != first["accessToken"]
    assert mock.admin.count("token:refresh_token") == 1
    assert mock.admin.log("token")[-1]["form"].get("claims"), "the claims were not sent with the refresh"


def test_b2c_sign_in_and_silent(launch, mock):
    p = launch(authority=mock.url + B2C_AUTHORITY)
    r = p.sign_in(scopes=B2C_SCOPES)
    assert r["account"]["homeAccountId"].split(".")[0].endswith("-b2c_1_susi"), r["account"]
    again = p.silent(scopes=B2C_SCOPES)
    assert again["fromCache"] is True and again["accessToken"] == r["accessToken"]
    forced = p.silent(scopes=B2C_SCOPES, forceRefresh=True)
    assert forced["fromCache"] is False
    assert [a["homeAccountId"] for a in p.ok("getAccounts")["accounts"]] == [r["account"]["homeAccountId"]]
    assert p.ok("signout", {})["signedOut"] is True
    assert p.ok("getAccounts")["accounts"] == []
