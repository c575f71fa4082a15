"""/authorize: validation, prompts, sessions, response modes, login form, outcomes."""

import pytest

from urllib.parse import urlencode

from flows import REDIRECT, authorize, decode_client_info, redirect_params, session_cookie, sign_in
from mock_idp.testing import http


def test_approves_at_once_with_code_and_state(mock):
    resp = authorize(mock)
    assert resp.status == 302 and resp.headers["Location"].startswith(REDIRECT + "?")
    got = redirect_params(resp)
    assert got["state"] == resp.sent["state"] and got["code"]
    assert decode_client_info(got["client_info"])["uid"] == "a11ce000-0000-4000-8000-000000000001"
    assert "Secure" in resp.headers["Set-Cookie"]


@pytest.mark.parametrize("redirect", ["http://localhost:1", "http://localhost:65000",
                                      "http://127.0.0.1:5000", "http://localhost"])
def test_loopback_redirect_any_port(mock, redirect):
    resp = authorize(mock, redirect_uri=redirect)
    assert resp.headers["Location"].startswith(redirect)


@pytest.mark.parametrize("params,code", [
    ({"client_id": None}, "AADSTS900144"),
    ({"client_id": "no-such-client"}, "AADSTS700016"),
    ({"redirect_uri": "http://evil.example:8080"}, "AADSTS50011"),
    ({"redirect_uri": "http://localhost:8080/other/path"}, "AADSTS50011"),
    ({"redirect_uri": None}, "AADSTS50011"),
])
def test_errors_that_cannot_be_redirected(mock, params, code):
    resp = authorize(mock, **params)
    assert resp.status == 400 and "text/html" in resp.headers["Content-Type"]
    assert code + ":" in resp.text


@pytest.mark.parametrize("params,error,code", [
    ({"response_type": "token"}, "unsupported_response_type", 700054),
    ({"scope": None}, "invalid_scope", 70011),
    ({"state": None}, "invalid_request", 900144),
    ({"code_challenge": None}, "invalid_request", 9002325),
    ({"code_challenge_method": "plain"}, "invalid_request", 501491),
    ({"code_challenge": "short"}, "invalid_request", 501491),
    ({"scope": "User.Read api://other/x"}, "invalid_scope", 28000),
])
def test_errors_sent_to_the_redirect_uri(mock, params, error, code):
    got = redirect_params(authorize(mock, **params))
    assert got["error"] == error
    assert got["error_description"].startswith("AADSTS%d:" % code)
    assert got["error_uri"].endswith("code=%d" % code)
    assert got.get("state") == params.get("state", got.get("state"))


def test_response_modes(mock):
    frag = authorize(mock, response_mode="fragment")
    assert "#code=" in frag.headers["Location"]
    post = authorize(mock, response_mode="form_post")
    assert post.status == 200 and "action=\"%s\"" % REDIRECT in post.text
    assert redirect_params(post)["state"] == post.sent["state"]
    err = authorize(mock, response_mode="form_post", response_type="token")
    assert redirect_params(err)["error"] == "unsupported_response_type"


def test_prompt_none_without_session_is_login_required(mock):
    got = redirect_params(authorize(mock, prompt="none"))
    assert got["error"] == "login_required"
    assert got["error_description"].startswith("AADSTS50058:")


def test_session_sso_and_prompts(mock):
    first = authorize(mock, login_hint="bob@contoso.com")
    cookie = session_cookie(first)
    def user_of(resp):
        return decode_client_info(redirect_params(resp)["client_info"])["uid"]
    bob, alice = "b0b00000-0000-4000-8000-000000000002", "a11ce000-0000-4000-8000-000000000001"
    assert user_of(first) == bob
    assert user_of(authorize(mock, cookie=cookie, prompt="none")) == bob
    assert user_of(authorize(mock, cookie=cookie)) == bob                 # SSO
    assert user_of(authorize(mock, cookie=cookie, prompt="consent")) == bob
    for prompt in ("select_account", "login", "create"):                  # not the session
        assert user_of(authorize(mock, cookie=cookie, prompt=prompt)) == alice
    hint = authorize(mock, cookie=cookie, prompt="none", login_hint="carol@outlook.example",
                     domain_hint="contoso.com")
    assert redirect_params(hint)["error"] == "login_required"
    log = mock.admin.log("authorize")
    assert log[-1]["query"]["domain_hint"] == "contoso.com"
    assert mock.admin.count("authorize") == 8


def test_prompt_none_needs_consent(mock):
    cookie = session_cookie(authorize(mock))
    got = redirect_params(authorize(mock, cookie=cookie, prompt="none", scope="Mail.Read openid"))
    assert got["error"] == "consent_required"
    assert got["error_description"].startswith("AADSTS65001:")


def test_prompt_none_with_pending_mfa(mock):
    cookie = session_cookie(authorize(mock))
    mock.admin.mfa(username="alice@contoso.com")
    got = redirect_params(authorize(mock, cookie=cookie, prompt="none"))
    assert got["error"] == "interaction_required" and got["suberror"] == "basic_action"
    assert got["error_description"].startswith("AADSTS50076:") and "capolids" in got["claims"]


def test_consent_declined_when_auto_consent_off(mock):
    mock.admin.config(auto_consent=False)
    got = redirect_params(authorize(mock))
    assert got["error"] == "access_denied" and got["error_description"].startswith("AADSTS65004:")
    mock.admin.consent(username="alice@contoso.com", scopes=["User.Read"], action="grant")
    assert "code" in redirect_params(authorize(mock))


@pytest.mark.parametrize("outcome,tenant,error,code,subcode", [
    ("cancel", "organizations", "access_denied", "AADSTS50126", "cancel"),
    ("decline", "organizations", "access_denied", "AADSTS65004", None),
    ("forgot_password", "fabrikamb2c.onmicrosoft.com/B2C_1_susi", "access_denied", "AADB2C90118", None),
    ("b2c_cancel", "tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", "access_denied", "AADB2C90091", None),
])
def test_queued_outcomes(mock, outcome, tenant, error, code, subcode):
    mock.admin.authorize__next(outcome=outcome)
    got = redirect_params(authorize(mock, tenant))
    assert got["error"] == error and got["error_description"].startswith(code + ":")
    assert got.get("error_subcode") == subcode
    assert "code" in redirect_params(authorize(mock, tenant))   # only the next one


def test_conditional_access_block(mock):
    mock.admin.conditional_access(username="alice@contoso.com", mode="block")
    got = redirect_params(authorize(mock))
    assert got["error"] == "access_denied" and got["error_description"].startswith("AADSTS53003:")


def test_login_form(mock):
    mock.admin.config(login_form=True)
    page = authorize(mock)
    assert page.status == 200 and "login_password" in page.text
    fields = redirect_params(page)
    fields.update(login_username="bob@contoso.com", login_password="password", mock_action="signin")
    url = mock.url + "/organizations/oauth2/v2.0/authorize"
    done = http("POST", url, mock.ca_file, form=fields)
    got = redirect_params(done)
    assert decode_client_info(got["client_info"])["uid"].startswith("b0b0")
    fields.update(login_password="wrong")
    assert redirect_params(http("POST", url, mock.ca_file, form=fields))["error"] == "access_denied"
    fields.update(mock_action="cancel")
    cancelled = redirect_params(http("POST", url, mock.ca_file, form=fields))
    assert cancelled["error_subcode"] == "cancel"


def test_logout_ends_session(mock):
    tokens, cookie = sign_in(mock)
    out = http("GET", mock.url + "/organizations/oauth2/v2.0/logout?post_logout_redirect_uri="
               + REDIRECT, mock.ca_file, headers={"Cookie": cookie})
    assert out.status == 302 and out.headers["Location"] == REDIRECT
    assert "Max-Age=0" in out.headers["Set-Cookie"]
    assert redirect_params(authorize(mock, cookie=cookie, prompt="none"))["error"] == "login_required"
    page = http("GET", mock.url + "/common/oauth2/v2.0/logout", mock.ca_file)
    assert page.status == 200 and mock.admin.count("logout") == 2


def test_logout_checks_the_id_token_hint(mock):
    tokens, cookie = sign_in(mock, scope="openid profile offline_access User.Read")
    base = mock.url + "/organizations/oauth2/v2.0/logout?"
    forged = tokens["id_token"].rsplit(".", 1)[0] + ".c2lnbmF0dXJl"
    for query, status in [({"id_token_hint": forged}, 400),
                          ({"id_token_hint": tokens["id_token"], "client_id": "someone-else"}, 400),
                          ({"id_token_hint": tokens["id_token"], "client_id": mock.client_id,
                            "post_logout_redirect_uri": REDIRECT}, 302)]:
        out = http("GET", base + urlencode(query), mock.ca_file, headers={"Cookie": cookie})
        assert out.status == status, (query, out.status)
    logged = mock.admin.log("logout")
    assert [e["query"].get("client_id") for e in logged][-1] == mock.client_id
    # A generic issuer's ES256 ID token: accepted at its own issuer's logout, refused at another's.
    issued, cookie = sign_in(mock, "issuers/a", scope="openid profile offline_access")
    for issuer, status in [("b", 400), ("a", 200)]:
        out = http("GET", mock.url + "/issuers/%s/logout?" % issuer + urlencode(
            {"id_token_hint": issued["id_token"], "client_id": mock.client_id}), mock.ca_file, headers={"Cookie": cookie})
        assert out.status == status, (issuer, out.status)


def test_sessions_clear_control(mock):
    cookie = session_cookie(authorize(mock))
    mock.admin.sessions__clear()
    assert redirect_params(authorize(mock, cookie=cookie, prompt="none"))["error"] == "login_required"


def test_tenant_restricts_users(mock):
    got = redirect_params(authorize(mock, "consumers"))
    assert decode_client_info(got["client_info"])["utid"] == "9188040d-6c67-4c5b-b112-36a304b66dad"
    got = redirect_params(authorize(mock, "contoso.com", login_hint="carol@outlook.example"))
    assert decode_client_info(got["client_info"])["uid"].startswith("a11ce")
