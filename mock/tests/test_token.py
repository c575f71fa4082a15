"""/token: the authorization_code and refresh_token grants, their errors, lifetimes."""

import pytest

from flows import (REDIRECT, SCOPE, assert_error_shape, authorize, decode_client_info,
                   redirect_params, refresh, sign_in, token, unverified_claims)

ALICE = "a11ce000-0000-4000-8000-000000000001"
CONTOSO = "aaaabbbb-0000-cccc-1111-dddd2222eeee"


def _code(mock, **params):
    resp = authorize(mock, **params)
    return redirect_params(resp)["code"], resp.verifier


def test_authorization_code_response(mock):
    tokens, _ = sign_in(mock)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["ext_expires_in"] == 3600 and tokens["refresh_token"]
    assert tokens["scope"] == "User.Read openid profile"
    assert "refresh_in" not in tokens and "foci" not in tokens
    assert decode_client_info(tokens["client_info"]) == {"uid": ALICE, "utid": CONTOSO}
    idt = unverified_claims(tokens["id_token"])
    for claim in ("oid", "tid", "sub", "preferred_username", "name", "nonce", "aud", "iss",
                  "iat", "exp"):
        assert claim in idt, claim
    assert idt["aud"] == mock.client_id and idt["nonce"] == "n-123"
    assert idt["iss"] == "%s/%s/v2.0" % (mock.url, CONTOSO)
    at = unverified_claims(tokens["access_token"])
    assert at["aud"] == "https://graph.microsoft.com" and at["scp"] == "User.Read"
    assert mock.admin.count("token:authorization_code") == 1 and mock.admin.count("token") == 1


def test_code_is_single_use(mock):
    code, verifier = _code(mock)
    form = dict(grant_type="authorization_code", code=code, redirect_uri=REDIRECT,
                code_verifier=verifier, scope=SCOPE)
    assert token(mock, **form).status == 200
    again = token(mock, **form)
    assert again.status == 400
    assert_error_shape(again.json(), "invalid_grant", 54005)


@pytest.mark.parametrize("change,error,code", [
    ({"code": "1.MOCK.bogus"}, "invalid_grant", 70000),
    ({"redirect_uri": "http://localhost:9999"}, "invalid_grant", 500112),
    ({"code_verifier": "x" * 43}, "invalid_grant", 501481),
    ({"code_verifier": None}, "invalid_request", 900144),
    ({"client_id": "unknown-client"}, "unauthorized_client", 700016),
    ({"grant_type": "password"}, "unsupported_grant_type", 70003),
    ({"grant_type": None}, "invalid_request", 900144),
    ({"code": None}, "invalid_request", 900144),
])
def test_code_redemption_errors(mock, change, error, code):
    the_code, verifier = _code(mock)
    form = dict(grant_type="authorization_code", code=the_code, redirect_uri=REDIRECT,
                code_verifier=verifier, scope=SCOPE)
    form.update(change)
    resp = token(mock, **{k: v for k, v in form.items() if v is not None},
                 headers={"client-request-id": "my-corr"})
    assert resp.status == 400
    body = assert_error_shape(resp.json(), error, code)
    assert body["correlation_id"] == "my-corr"


def test_expired_code(mock):
    code, verifier = _code(mock)
    mock.admin.advance_clock(601)
    resp = token(mock, grant_type="authorization_code", code=code, redirect_uri=REDIRECT,
                 code_verifier=verifier, scope=SCOPE)
    assert_error_shape(resp.json(), "invalid_grant", 70000)


def test_refresh_rotates(mock):
    tokens, _ = sign_in(mock)
    first = refresh(mock, tokens["refresh_token"]).json()
    assert first["refresh_token"] != tokens["refresh_token"] and first["access_token"]
    second = refresh(mock, first["refresh_token"]).json()
    assert second["refresh_token"] not in (first["refresh_token"], tokens["refresh_token"])
    assert refresh(mock, tokens["refresh_token"]).status == 200    # old one still valid
    assert mock.admin.count("token:refresh_token") == 3


def test_refresh_token_reuse_off(mock):
    mock.admin.config(refresh_token_reuse=False)
    tokens, _ = sign_in(mock)
    assert refresh(mock, tokens["refresh_token"]).status == 200
    assert_error_shape(refresh(mock, tokens["refresh_token"]).json(), "invalid_grant", 700082)


def test_unknown_refresh_token(mock):
    assert_error_shape(refresh(mock, "nope").json(), "invalid_grant", 9002313)
    assert_error_shape(token(mock, grant_type="refresh_token").json(), "invalid_request", 900144)


@pytest.mark.parametrize("reason,code", [(None, 700082), ("revoked", 50173)])
def test_revoke_control(mock, reason, code):
    tokens, _ = sign_in(mock)
    mock.admin.revoke(username="alice@contoso.com", reason=reason)
    assert_error_shape(refresh(mock, tokens["refresh_token"]).json(), "invalid_grant", code)
    fresh, _ = sign_in(mock)                    # a new sign-in works again
    assert refresh(mock, fresh["refresh_token"]).status == 200


def test_refresh_token_inactivity(mock):
    mock.admin.config(refresh_token_lifetime=100)
    tokens, _ = sign_in(mock)
    mock.admin.advance_clock(101)
    assert_error_shape(refresh(mock, tokens["refresh_token"]).json(), "invalid_grant", 700082)


@pytest.mark.parametrize("code", [50076, 50079])
def test_mfa_control(mock, code):
    tokens, cookie = sign_in(mock)
    mock.admin.mfa(username="alice@contoso.com", code=code)
    body = assert_error_shape(refresh(mock, tokens["refresh_token"]).json(),
                              "interaction_required", code, suberror="basic_action")
    assert "capolids" in body["claims"]
    fresh, _ = sign_in(mock)
    assert refresh(mock, fresh["refresh_token"]).status == 200
    mock.admin.mfa(username="alice@contoso.com", required=False)
    assert refresh(mock, tokens["refresh_token"]).status == 200


def test_conditional_access_control(mock):
    tokens, _ = sign_in(mock)
    mock.admin.conditional_access(username="alice@contoso.com", mode="interaction")
    body = assert_error_shape(refresh(mock, tokens["refresh_token"]).json(),
                              "interaction_required", 53003, suberror="basic_action")
    assert body["claims"]
    mock.admin.conditional_access(username="alice@contoso.com", mode="block")
    assert_error_shape(refresh(mock, tokens["refresh_token"]).json(), "invalid_grant", 53003,
                       suberror="message_only")
    mock.admin.conditional_access(username="alice@contoso.com", mode="off")
    assert refresh(mock, tokens["refresh_token"]).status == 200


def test_consent_control(mock):
    tokens, _ = sign_in(mock)
    got = mock.admin.consent(username="alice@contoso.com", action="get")
    assert got["scopes"] == ["user.read"]
    mock.admin.consent(username="alice@contoso.com", scopes=["User.Read"], action="revoke")
    assert_error_shape(refresh(mock, tokens["refresh_token"]).json(), "invalid_grant", 65001,
                       suberror="consent_required")
    mock.admin.consent(username="alice@contoso.com", scopes=["User.Read", "Mail.Read"])
    ok = refresh(mock, tokens["refresh_token"], scope="Mail.Read openid offline_access")
    assert ok.status == 200 and ok.json()["scope"] == "Mail.Read openid"


def test_two_resources_rejected(mock):
    tokens, _ = sign_in(mock)
    resp = refresh(mock, tokens["refresh_token"], scope="User.Read api://app/read")
    assert_error_shape(resp.json(), "invalid_scope", 28000)


def test_lifetimes_refresh_in_foci_and_declined_scopes(mock):
    mock.admin.config(access_token_lifetime=5, ext_expires_in=50, refresh_in=2, foci="1",
                      declined_scopes=["Mail.Read"])
    tokens, _ = sign_in(mock, scope="User.Read Mail.Read openid offline_access")
    assert tokens["expires_in"] == 5 and tokens["ext_expires_in"] == 50
    assert tokens["refresh_in"] == 2 and tokens["foci"] == "1"
    assert tokens["scope"] == "User.Read openid"
    at = unverified_claims(tokens["access_token"])
    assert at["exp"] - at["iat"] == 5


def test_foci_family_refresh(mock):
    mock.admin.clients(client_id="family-app-2", family="1")
    mock.admin.clients(client_id="lonely-app")
    tokens, _ = sign_in(mock)
    other = refresh(mock, tokens["refresh_token"], client_id="family-app-2")
    assert other.status == 200
    mismatch = refresh(mock, tokens["refresh_token"], client_id="lonely-app").json()
    assert_error_shape(mismatch, "invalid_grant", 70000, suberror="client_mismatch")


def test_other_resource_and_default_scope(mock):
    tokens, _ = sign_in(mock, scope="api://my-api/read openid offline_access")
    assert unverified_claims(tokens["access_token"])["aud"] == "api://my-api"
    assert tokens["scope"] == "api://my-api/read openid"
    dflt = refresh(mock, tokens["refresh_token"], scope="https://graph.microsoft.com/.default")
    assert unverified_claims(dflt.json()["access_token"])["scp"]


def test_an_app_id_resource_default_scope(mock):
    tokens, _ = sign_in(mock)
    devops = refresh(mock, tokens["refresh_token"], scope="499b84ac-1321-427f-aa17-267ca6975798/.default")
    assert devops.status == 200, devops.json()
    assert unverified_claims(devops.json()["access_token"])["aud"] == "499b84ac-1321-427f-aa17-267ca6975798"


def test_claims_request_lands_in_access_token(mock):
    claims = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
    tokens, _ = sign_in(mock, claims=claims)
    assert unverified_claims(tokens["access_token"])["acrs"] == ["c1"]
