"""Every auth method's error paths, against the real binary and the mock over HTTPS."""
from __future__ import annotations

import socket
import time
import urllib.parse

import pytest

import sidecar as sc
from auth_e2e import ALICE, SCOPES, SIGN_IN, Mock, browser_runs
from mock_idp.testing import AdminClient, start_mock, stop_mock

SHORT = 240


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_is_listening(port: int) -> bool:
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def signed_in_with_expired_token(p, mock):
    """Sign in, then leave an access token the sidecar must consider expired in the cache."""
    r = p.sign_in()
    mock.admin.config(access_token_lifetime=SHORT)
    p.silent(forceRefresh=True)
    mock.admin.config(access_token_lifetime=3600)
    return r


# --------------------------------------------------------------------------
# Bad params: -32602 naming the member

BAD_PARAMS = [
    ("acquireToken", {"scopes": "User.Read"}, "scopes"),
    ("acquireToken", {"scopes": [1]}, "scopes"),
    ("acquireToken", {"flow": "carrierPigeon"}, "flow"),
    ("acquireToken", {"promptType": "always"}, "promptType"),
    ("acquireToken", {"loginHint": 7}, "loginHint"),
    ("acquireToken", {"account": "alice"}, "account"),
    ("acquireToken", {"account": {}}, "account"),
    ("acquireToken", {"account": {"homeAccountId": "x", "bogus": 1}}, "account.bogus"),
    ("acquireToken", {"extraQueryParameters": {"a": 1}}, "extraQueryParameters.a"),
    ("acquireToken", {"flow": "deviceCode", "loginHint": ALICE}, "loginHint"),
    ("acquireToken", {"nope": True}, "nope"),
    ("acquireTokenSilent", {"forceRefresh": "yes"}, "forceRefresh"),
    ("acquireTokenSilent", {"scopes": {"a": 1}}, "scopes"),
    ("acquireTokenSilent", {"account": {"homeAccountId": 5}}, "account.homeAccountId"),
    ("acquireTokenSilent", {"claims": 1}, "claims"),
    ("acquireTokenSilent", {"nope": True}, "nope"),
    ("getAccounts", {"username": 5}, "username"),
    ("getAccounts", {"nope": 1}, "nope"),
    ("getCurrentAccount", {"nope": 1}, "nope"),
    ("signout", {"signoutFromBrowser": "no"}, "signoutFromBrowser"),
    ("signout", {"account": {"username": ALICE, "x": 1}}, "account.x"),
    ("signout", {"nope": 1}, "nope"),
]


@pytest.mark.parametrize("method, params, member", BAD_PARAMS,
                         ids=[f"{m}-{mem}-{i}" for i, (m, _, mem) in enumerate(BAD_PARAMS)])
def test_bad_params_name_the_member(launch, mock, method, params, member):
    p = launch()
    e = p.error(method, params, -32602, name="invalidParams")
    assert e["data"].get("member") == member, e
    assert mock.admin.count("token") == 0 and mock.admin.count("authorize") == 0
    p.ping()


@pytest.mark.parametrize("config, member", [
    ({"cache": {"path": 5}}, "cache.path"),
    ({"knownAuthorities": "127.0.0.1"}, "knownAuthorities"),
    ({"authority": "not a url"}, "authority"),
    ({"scopes": [1]}, "scopes"),
    ({"bogus": 1}, "bogus"),
])
def test_initialize_bad_params_name_the_member(launch, mock, tmp_path, config, member):
    p = launch(initialize=False)
    params = p.config_for(str(tmp_path / "c.json"))
    params.update(config)
    e = sc.assert_error(p.call("initialize", params), -32602, name="invalidParams")
    assert e["data"].get("member") == member, e


def test_http_authority_to_non_loopback_host_rejected_at_initialize(launch, mock, tmp_path):
    p = launch(initialize=False)
    params = p.config_for(str(tmp_path / "c.json"), authority="http://login.example.com/common",
                          knownAuthorities=["login.example.com"])
    e = sc.assert_error(p.call("initialize", params), -32602, name="invalidParams")
    assert e["data"].get("member") == "authority", e


# --------------------------------------------------------------------------
# Accounts


def test_silent_without_account_is_interaction_required(launch, mock):
    p = launch()
    e = p.error("acquireTokenSilent", {"scopes": SCOPES}, -50002, name="interactionRequired")
    # protocol/errors.md: -50002 interactionRequired with suberror "no_account"
    assert e["data"].get("suberror") == "no_account", e
    assert mock.admin.count("token") == 0


@pytest.mark.parametrize("ref", [{"homeAccountId": "no-such.account"}, {"username": "nobody@contoso.com"}])
def test_unknown_account_ref(launch, mock, ref):
    p = launch()
    p.sign_in()
    p.error("acquireTokenSilent", {"scopes": SCOPES, "account": ref}, -51011, name="accountNotFound")
    p.error("signout", {"account": ref}, -51011, name="accountNotFound")
    p.error("acquireToken", {"scopes": SCOPES, "account": ref}, -51011, name="accountNotFound")
    assert [a["username"] for a in p.ok("getAccounts")["accounts"]] == [ALICE]


# --------------------------------------------------------------------------
# The service asks for more


@pytest.mark.parametrize("control, body, code", [
    ("mfa", {"required": True, "code": 50076}, 50076),
    ("conditional_access", {"mode": "interaction"}, 53003),
])
def test_mfa_or_conditional_access_required(launch, mock, control, body, code):
    p = launch()
    signed_in_with_expired_token(p, mock)
    mock.admin.call(control, dict(body, username=ALICE))
    e = p.error("acquireTokenSilent", {"scopes": SCOPES}, -50002, name="interactionRequired")
    d = e["data"]
    assert d.get("oauthError") == "interaction_required", e
    assert d.get("suberror") == "basic_action", e
    assert d.get("errorCodes") == [code], e
    assert isinstance(d.get("claims"), str) and d["claims"].startswith("{"), e
    # The claims challenge satisfied interactively, silent works again.
    r = p.sign_in(claims=d["claims"])
    assert r["fromCache"] is False
    assert p.silent()["fromCache"] is True


def test_declined_scopes(launch, mock):
    mock.admin.config(declined_scopes=["Mail.Read"])
    p = launch()
    e = p.error("acquireToken", {"scopes": ["User.Read", "Mail.Read"]}, -50003, timeout=SIGN_IN,
                name="serverDeclinedScopes")
    d = e["data"]
    assert "user.read" in [s.lower() for s in d.get("grantedScopes", [])], e
    assert [s.lower() for s in d.get("declinedScopes", [])] == ["mail.read"], e


# --------------------------------------------------------------------------
# The user or the client ends the sign-in


def test_user_cancels_in_browser(launch, mock, tmp_path):
    p = launch(browser_action="deny")
    e = p.error("acquireToken", {"scopes": SCOPES}, -50005, timeout=SIGN_IN, name="userCanceled")
    assert e["data"].get("oauthError") == "access_denied", e
    assert mock.admin.count("token") == 0
    assert p.ok("getAccounts")["accounts"] == []


def test_user_cancels_at_the_identity_provider(launch, mock):
    p = launch()
    mock.admin.authorize__next(outcome="cancel")
    p.error("acquireToken", {"scopes": SCOPES}, -50005, timeout=SIGN_IN, name="userCanceled")
    # the next sign-in is not affected
    assert p.sign_in()["account"]["username"] == ALICE


def redirect_port(tmp_path, timeout=10.0) -> int:
    """The loopback port of the sign-in the scripted browser was given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = browser_runs(tmp_path)
        if runs:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(runs[-1]["url"]).query)
            return urllib.parse.urlsplit(query["redirect_uri"][0]).port
        time.sleep(0.05)
    raise AssertionError("the sidecar did not open the browser")


def test_cancel_request_during_interactive_sign_in_frees_the_port(launch, mock, tmp_path):
    p = launch(browser_action="cancel")  # the browser does nothing: the sign-in waits
    rid = p.submit("acquireToken", {"scopes": SCOPES})
    port = redirect_port(tmp_path)
    assert port_is_listening(port)
    p.expect_silence(0.3)
    p.send(sc.note("$/cancelRequest", {"id": rid}))
    sc.assert_error(p.wait_for(rid, 5), -32800, id=rid, name="requestCancelled")
    deadline = time.monotonic() + 3
    while port_is_listening(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not port_is_listening(port), f"loopback port {port} still listening after the cancel"
    p.set_browser_action("complete")
    assert p.sign_in()["account"]["username"] == ALICE


def test_second_interactive_request_while_one_runs(launch, mock, tmp_path):
    p = launch(browser_action="cancel")
    first = p.submit("acquireToken", {"scopes": SCOPES})
    redirect_port(tmp_path)
    p.error("acquireToken", {"scopes": SCOPES}, -51007, name="interactiveInProgress")
    p.send(sc.note("$/cancelRequest", {"id": first}))
    sc.assert_error(p.wait_for(first, 5), -32800, name="requestCancelled")
    p.set_browser_action("complete")
    assert p.sign_in()["account"]["username"] == ALICE


# --------------------------------------------------------------------------
# Device code


def start_device_code(p, mock):
    mock.admin.config(device_code_interval=1)
    rid = p.submit("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"})
    n = p.wait_notification("deviceCode")["params"]
    assert n["requestId"] == rid and n["userCode"] and n["verificationUri"].endswith("/devicelogin"), n
    assert isinstance(n["expiresOn"], int) and n["expiresOn"] > time.time(), n
    assert n["userCode"] in n["message"], n
    return rid, n


def test_device_code_declined(launch, mock):
    p = launch()
    rid, n = start_device_code(p, mock)
    mock.admin.device("decline", n["userCode"])
    e = sc.assert_error(p.wait_for(rid, 10), -50005, name="userCanceled")
    assert e["data"].get("oauthError") == "authorization_declined", e


def test_device_code_expired(launch, mock):
    p = launch()
    rid, n = start_device_code(p, mock)
    mock.admin.device("expire", n["userCode"])
    e = sc.assert_error(p.wait_for(rid, 10), -51002, name="timeout")
    assert e["data"].get("oauthError") == "expired_token", e


def test_device_code_cancel_request(launch, mock):
    p = launch()
    rid, n = start_device_code(p, mock)
    p.send(sc.note("$/cancelRequest", {"id": rid}))
    sc.assert_error(p.wait_for(rid, 5), -32800, name="requestCancelled")
    p.ping()


def test_device_code_polling_survives_transient_failures(launch, mock):
    # A 429 with Retry-After, a TCP reset and 503s while the user types the code: polling
    # backs off and goes on (it used to abort the sign-in on the first one).
    p = launch()
    rid, n = start_device_code(p, mock)
    mock.admin.call("faults", {"faults": [
        {"endpoint": "token:device_code", "type": "status", "status": 429, "retry_after": 1, "times": 1},
        {"endpoint": "token:device_code", "type": "reset", "times": 1},
        {"endpoint": "token:device_code", "type": "status", "status": 503, "retry_after": 1, "times": 2},
    ]})
    deadline = time.monotonic() + 30
    while mock.admin.counts().get("token:device_code", 0) < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert mock.admin.counts().get("token:device_code", 0) >= 5, "the faults were not all polled through"
    mock.admin.device("approve", n["userCode"], username=ALICE)
    r = sc.assert_result(p.wait_for(rid, 20))
    assert r["account"]["username"] == ALICE, r


def test_device_code_polling_gives_up_on_a_lasting_failure(launch, mock):
    # Bounded: a fault that does not go away ends the sign-in with its error before the
    # code expires (the Retry-After outlives the code here).
    mock.admin.config(device_code_lifetime=60)
    p = launch()
    rid, n = start_device_code(p, mock)
    mock.admin.fault(endpoint="token:device_code", type="status", status=429, retry_after=3600, times=-1)
    e = sc.assert_error(p.wait_for(rid, 20), -50006, name="serverError")
    assert e["data"].get("httpStatus") == 429 and e["data"].get("retryAfter") == 3600, e


# --------------------------------------------------------------------------
# The service or the network fails


@pytest.mark.parametrize("status", [500, 503])
def test_token_endpoint_server_error_on_refresh(launch, mock, status):
    p = launch()
    signed_in_with_expired_token(p, mock)
    mock.admin.fault(endpoint="token", type="status", status=status, retry_after=7 if status == 503 else None,
                     times=-1)
    e = p.error("acquireTokenSilent", {"scopes": SCOPES}, -50006, name="serverError", timeout=20)
    assert e["data"].get("httpStatus") == status, e
    if status == 503:
        assert e["data"].get("retryAfter") == 7, e


def test_token_endpoint_server_error_on_sign_in(launch, mock):
    p = launch()
    mock.admin.fault(endpoint="token:authorization_code", type="status", status=500, times=-1)
    e = p.error("acquireToken", {"scopes": SCOPES}, -50006, name="serverError", timeout=SIGN_IN)
    assert e["data"].get("httpStatus") == 500, e


def test_malformed_token_response(launch, mock):
    p = launch()
    signed_in_with_expired_token(p, mock)
    mock.admin.fault(endpoint="token", type="malformed", times=-1)  # 200 with invalid JSON
    p.error("acquireTokenSilent", {"scopes": SCOPES}, -51004, name="malformedResponse", timeout=20)


def test_truncated_token_response(launch, mock):
    # Content-Length larger than the body, then the connection ends: a transport failure
    # (-51001) or a malformed answer (-51004), never a success or an internal error.
    p = launch()
    signed_in_with_expired_token(p, mock)
    mock.admin.fault(endpoint="token", type="truncated", times=-1)
    r = p.call("acquireTokenSilent", {"scopes": SCOPES}, 20)
    sc.check_response(r)
    assert "error" in r and r["error"]["code"] in (-51001, -51004), r


def test_network_down_wrong_port(launch, mock, tmp_path):
    port = free_port()
    p = launch(authority=f"https://127.0.0.1:{port}/organizations")
    p.error("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"}, -51001, name="networkError", timeout=20)
    p.error("acquireToken", {"scopes": SCOPES}, -51001, name="networkError", timeout=20)


@pytest.mark.parametrize("how", ["initialize", "command line"])
def test_http_timeout_seconds_bounds_every_request(launch, mock, how):
    # httpTimeoutSeconds: 1 and a token endpoint that answers after 4 s: a timeout
    # (-51002) after about a second, not after the default 30.
    if how == "initialize":
        p = launch(httpTimeoutSeconds=1)
    else:
        p = launch("--http-timeout-seconds", "1")
    signed_in_with_expired_token(p, mock)
    mock.admin.fault(endpoint="token", type="latency", delay_ms=4000, times=-1)
    started = time.monotonic()
    p.error("acquireTokenSilent", {"scopes": SCOPES}, -51002, name="timeout", timeout=20)
    assert time.monotonic() - started < 3.5, "the 4 s answer was waited for"


def test_interactive_timeout_seconds(launch, mock):
    # The browser never comes back: the sign-in ends after interactiveTimeoutSeconds.
    p = launch(browser_action="cancel", interactiveTimeoutSeconds=2)
    started = time.monotonic()
    p.error("acquireToken", {"scopes": SCOPES}, -51002, name="timeout", timeout=20)
    assert time.monotonic() - started < 15


def test_network_reset_during_refresh(launch, mock):
    p = launch()
    signed_in_with_expired_token(p, mock)
    mock.admin.fault(endpoint="token", type="reset", times=-1)
    p.error("acquireTokenSilent", {"scopes": SCOPES}, -51001, name="networkError", timeout=20)


B2C_PATH = "/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi"
B2C_SCOPES = ["https://fabrikamb2c.onmicrosoft.com/api/demo.read"]


def test_untrusted_authority_host(launch, mock):
    # A B2C authority is never validated by instance discovery: its host must be listed in
    # knownAuthorities. (AAD authorities on a loopback host validate themselves through the
    # mock's instance discovery, so they cannot show this error.)
    p = launch(authority=mock.url + B2C_PATH, knownAuthorities=[])
    p.error("acquireToken", {"scopes": B2C_SCOPES}, -51008, name="authorityNotTrusted")
    p.error("acquireToken", {"scopes": B2C_SCOPES, "flow": "deviceCode"}, -51008, name="authorityNotTrusted")
    counts = mock.admin.counts()
    assert counts.get("authorize", 0) == 0 and counts.get("openid-configuration", 0) == 0, counts
    assert not browser_runs(p.tmp_path), "a browser was opened for an untrusted authority"


def test_untrusted_authority_in_request(launch, mock):
    p = launch()  # knownAuthorities ["127.0.0.1"]
    other = mock.url.replace("127.0.0.1", "localhost") + B2C_PATH
    p.error("acquireToken", {"scopes": B2C_SCOPES, "authority": other}, -51008, name="authorityNotTrusted")
    assert mock.admin.count("authorize") == 0


def test_b2c_password_reset(launch, mock):
    p = launch(authority=mock.url + B2C_PATH)
    mock.admin.authorize__next(outcome="forgot_password")
    e = p.error("acquireToken", {"scopes": B2C_SCOPES}, -51013,
                timeout=SIGN_IN)
    assert "AADB2C90118" in e["data"].get("oauthErrorDescription", ""), e


def test_identity_platform_goes_away(launch, mock_session, tmp_path):
    """A mock of its own, stopped after the sign-in: cached tokens are still served, a
    refresh fails with -51001, and nothing hangs."""
    url, ca_file, process = start_mock(tmp_path / "own-mock")
    own = Mock(url, ca_file, process, AdminClient(url, ca_file))
    try:
        p = launch(initialize=False, env={"SSL_CERT_FILE": ca_file, "SCRIPTED_BROWSER_CA": ca_file})
        p.mock = own
        p.initialize(cache=str(tmp_path / "gone" / "cache.json"))
        first = p.sign_in()
    finally:
        stop_mock(process)
    r = p.silent()
    assert r["fromCache"] is True and r["accessToken"] == first["accessToken"]
    p.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -51001, name="networkError", timeout=20)
    p.error("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"}, -51001, name="networkError", timeout=20)
    # #52: the browser sign-in fails as fast, instead of waiting the interactive time limit
    # for a redirect that cannot come (the sign-in page is out of reach too)
    start = time.monotonic()
    e = p.error("acquireToken", {"scopes": SCOPES}, -51001, name="networkError", timeout=20)
    assert time.monotonic() - start < 10, e
    assert browser_runs(tmp_path)[-1:] and len(browser_runs(tmp_path)) == 1, "no browser opened for a dead service"


def test_a_browser_sign_in_with_an_unknown_client_id_fails_at_once(launch, mock, tmp_path):
    """#52: the sign-in page would only show AADSTS700016; the sidecar says so within seconds
    (was: the browser opened and the sign-in waited the interactive time limit), naming the
    service's sentence and what to check; no browser opens, nothing is cached."""
    unknown = "99999999-8888-7777-6666-555555555555"
    p = launch(clientId=unknown)
    start = time.monotonic()
    e = p.error("acquireToken", {"scopes": SCOPES}, -51010, name="invalidConfiguration", timeout=20)
    assert time.monotonic() - start < 10, e
    assert "AADSTS700016" in e["message"] and unknown in e["message"] and "clientId" in e["message"], e
    assert browser_runs(tmp_path) == [], "the browser was opened for a sign-in that cannot succeed"
    probes = mock.admin.log("authorize")
    assert len(probes) == 1 and "scope" not in probes[0]["query"] and "state" not in probes[0]["query"], probes
    assert p.ok("getAccounts", {})["accounts"] == [], "an account was kept from a refused sign-in"
