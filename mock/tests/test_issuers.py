"""Generic OpenID Connect issuers at /issuers/{name}: discovery, ES256 keys, the flows,
issuer-bound grants, logout, the issuers control, per-issuer counts and faults."""

from urllib.parse import urlencode

import pytest
from cryptography.exceptions import InvalidSignature

from flows import REDIRECT, authorize, redirect_params, refresh, sign_in, token, verify_jwt
from mock_idp.testing import http
from test_devicecode import poll, start

SCOPE = "openid profile email offline_access"
A, B = "issuers/a", "issuers/b"


def get(mock, path, **kwargs):
    return http("GET", mock.url + path, mock.ca_file, **kwargs)


def discovery(mock, name):
    resp = get(mock, "/issuers/%s/.well-known/openid-configuration" % name)
    assert resp.status == 200, resp.text
    return resp.json()


def jwks(mock, name):
    return get(mock, "/issuers/%s/jwks" % name).json()


def assert_plain_error(resp, error):
    """Generic issuers answer RFC 6749 errors: no AADSTS codes, trace or correlation ids."""
    assert resp.status == 400, resp.text
    body = resp.json()
    assert set(body) == {"error", "error_description"} and body["error"] == error, body
    assert "AADSTS" not in body["error_description"]


def test_discovery_of_both_issuers(mock):
    for name in ("a", "b"):
        doc = discovery(mock, name)
        issuer = "%s/issuers/%s" % (mock.url, name)
        assert doc["issuer"] == issuer
        assert doc["authorization_endpoint"] == issuer + "/authorize"
        assert doc["token_endpoint"] == issuer + "/token"
        assert doc["device_authorization_endpoint"] == issuer + "/device"
        assert doc["jwks_uri"] == issuer + "/jwks"
        assert doc["end_session_endpoint"] == issuer + "/logout"
        assert doc["id_token_signing_alg_values_supported"] == ["ES256"]
        assert doc["code_challenge_methods_supported"] == ["S256"]
        assert "tenant_region_scope" not in doc and "msgraph_host" not in doc
    assert mock.admin.count("openid-configuration") == 2
    assert mock.admin.count("issuer:a:openid-configuration") == 1
    assert mock.admin.count("issuer:b:openid-configuration") == 1
    assert mock.admin.count("issuer:a") == 1


def test_jwks_one_ec_key_per_issuer(mock):
    keys = {}
    for name in ("a", "b"):
        doc = jwks(mock, name)
        (key,) = doc["keys"]
        assert set(key) == {"kty", "crv", "x", "y", "kid", "use", "alg"}
        assert (key["kty"], key["crv"], key["use"], key["alg"]) == ("EC", "P-256", "sig", "ES256")
        keys[name] = key
    assert keys["a"]["kid"] != keys["b"]["kid"] and keys["a"]["x"] != keys["b"]["x"]
    assert mock.admin.count("jwks") == 2 and mock.admin.count("issuer:b:jwks") == 1


def test_round_trip_with_pkce(mock):
    resp = authorize(mock, A, scope=SCOPE, nonce="n-generic")
    got = redirect_params(resp)
    assert set(got) == {"code", "state", "session_state"}         # no client_info, even asked
    tok = token(mock, A, grant_type="authorization_code", code=got["code"], redirect_uri=REDIRECT,
                code_verifier=resp.verifier, scope=SCOPE, client_info="1")
    assert tok.status == 200, tok.text
    tokens = tok.json()
    assert set(tokens) == {"token_type", "access_token", "expires_in", "scope", "id_token",
                           "refresh_token"}
    assert tokens["token_type"] == "bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == SCOPE
    header, claims = verify_jwt(tokens["id_token"], jwks(mock, "a"))
    assert header["kid"] == jwks(mock, "a")["keys"][0]["kid"]
    assert claims["iss"] == mock.url + "/issuers/a" and claims["aud"] == mock.client_id
    assert claims["nonce"] == "n-generic" and claims["preferred_username"] == "alice@contoso.com"
    assert claims["email"] == "alice@contoso.com" and claims["name"] == "Alice Example"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert "oid" not in claims and "tid" not in claims and claims["sub"]
    _, access = verify_jwt(tokens["access_token"], jwks(mock, "a"))
    assert access["sub"] == claims["sub"] and access["scope"] == SCOPE
    with pytest.raises(InvalidSignature):                          # not b's key
        verify_jwt(tokens["id_token"], {"keys": [dict(jwks(mock, "b")["keys"][0],
                                                        kid=header["kid"])]})
    for key in ("token:authorization_code", "issuer:a:token:authorization_code",
                "issuer:a:token", "issuer:a:authorize", "authorize"):
        assert mock.admin.count(key) == 1, key
    assert mock.admin.count("issuer:b:token") == 0


def test_sub_stable_per_user_and_issuer(mock):
    def sub(tenant, user="alice@contoso.com"):
        tokens, _ = sign_in(mock, tenant, scope=SCOPE, login_hint=user)
        return verify_jwt(tokens["id_token"], jwks(mock, tenant.split("/")[1]))[1]["sub"]

    assert sub(A) == sub(A) != sub(B)
    assert sub(A, "bob@contoso.com") != sub(A)
    assert sub(A, "carol@outlook.example")                         # any directory user


def test_refresh_token_bound_to_its_issuer(mock):
    tokens, _ = sign_in(mock, A, scope=SCOPE)
    assert_plain_error(refresh(mock, tokens["refresh_token"], B, scope=SCOPE), "invalid_grant")
    again = refresh(mock, tokens["refresh_token"], A, scope=SCOPE, client_info="1")
    assert again.status == 200, again.text
    body = again.json()
    assert body["token_type"] == "bearer" and "client_info" not in body
    assert body["refresh_token"] != tokens["refresh_token"]
    assert verify_jwt(body["id_token"], jwks(mock, "a"))[1]["iss"].endswith("/issuers/a")
    assert mock.admin.count("issuer:a:token:refresh_token") == 1
    assert mock.admin.count("issuer:b:token:refresh_token") == 1
    assert mock.admin.count("token:refresh_token") == 2
    # and the Microsoft-shaped endpoints neither take nor give issuer refresh tokens
    aad, _ = sign_in(mock)
    assert_plain_error(refresh(mock, aad["refresh_token"], A, scope=SCOPE), "invalid_grant")
    cross = refresh(mock, tokens["refresh_token"])
    assert cross.status == 400 and cross.json()["error_codes"] == [9002313]


def test_code_bound_to_its_issuer(mock):
    resp = authorize(mock, A, scope=SCOPE)
    code = redirect_params(resp)["code"]
    wrong = token(mock, B, grant_type="authorization_code", code=code, redirect_uri=REDIRECT,
                  code_verifier=resp.verifier, scope=SCOPE)
    assert_plain_error(wrong, "invalid_grant")


def test_authorize_errors_are_plain(mock):
    got = redirect_params(authorize(mock, A, scope=SCOPE, prompt="none"))
    assert got["error"] == "login_required" and got["state"]
    assert "AADSTS" not in got["error_description"] and "error_uri" not in got
    got = redirect_params(authorize(mock, A, scope=SCOPE, code_challenge=None))
    assert got["error"] == "invalid_request"


def test_sso_session_shared_with_microsoft_endpoints(mock):
    _, cookie = sign_in(mock, login_hint="bob@contoso.com")
    got = redirect_params(authorize(mock, A, scope=SCOPE, prompt="none", cookie=cookie))
    assert "code" in got, got


def test_device_code_at_an_issuer(mock):
    flow = start(mock, A, scope=SCOPE).json()
    assert flow["verification_uri"] == mock.url + "/devicelogin"
    assert_plain_error(poll(mock, flow, A), "authorization_pending")
    mock.admin.device("approve", flow["user_code"], "bob@contoso.com")
    assert_plain_error(poll(mock, flow, B), "invalid_grant")        # not b's device code
    done = poll(mock, flow, A)
    assert done.status == 200, done.text
    tokens = done.json()
    assert tokens["token_type"] == "bearer" and "client_info" not in tokens
    claims = verify_jwt(tokens["id_token"], jwks(mock, "a"))[1]
    assert claims["preferred_username"] == "bob@contoso.com" and "nonce" not in claims
    assert mock.admin.count("devicecode") == 1 and mock.admin.count("issuer:a:devicecode") == 1
    assert mock.admin.count("issuer:a:token:device_code") == 2
    assert mock.admin.count("token:device_code") == 3


def test_logout_logs_ends_session_and_redirects(mock):
    tokens, cookie = sign_in(mock, A, scope=SCOPE)
    query = {"id_token_hint": tokens["id_token"], "client_id": mock.client_id,
             "post_logout_redirect_uri": "http://localhost:8765/bye",
             "logout_hint": "alice@contoso.com", "state": "s-out"}
    resp = get(mock, "/issuers/a/logout?" + urlencode(query), headers={"Cookie": cookie})
    assert resp.status == 302
    assert resp.headers["Location"] == "http://localhost:8765/bye?state=s-out"
    assert "Max-Age=0" in resp.headers["Set-Cookie"]
    for endpoint in ("logout", "issuer:a:logout", "issuer:a"):
        entries = [e for e in mock.admin.log(endpoint) if e["endpoint"] == "logout"]
        assert len(entries) == 1, endpoint
        assert entries[0]["path"] == "/issuers/a/logout" and entries[0]["query"] == query
    assert mock.admin.log("issuer:b:logout") == []
    got = redirect_params(authorize(mock, A, scope=SCOPE, prompt="none", cookie=cookie))
    assert got["error"] == "login_required"
    plain = get(mock, "/issuers/b/logout")
    assert plain.status == 200 and mock.admin.count("issuer:b:logout") == 1


def test_issuers_control_and_reset(mock):
    kid_a = jwks(mock, "a")["keys"][0]["kid"]
    added = mock.admin.issuers(name="c")
    assert [i["name"] for i in added["issuers"]] == ["a", "b", "c"]
    assert discovery(mock, "c")["issuer"] == mock.url + "/issuers/c"
    tokens, _ = sign_in(mock, "issuers/c", scope=SCOPE)
    verify_jwt(tokens["id_token"], jwks(mock, "c"))
    for bad in ("a_b", "x" * 33, "", "a/b"):
        with pytest.raises(RuntimeError):
            mock.admin.issuers(name=bad)
    # Names are case-sensitive, as paths are: "C" is another issuer, with its own key.
    assert [i["name"] for i in mock.admin.issuers(name="C")["issuers"]] == ["a", "b", "c", "C"]
    assert discovery(mock, "C")["issuer"] == mock.url + "/issuers/C"
    assert jwks(mock, "C")["keys"][0]["kid"] != jwks(mock, "c")["keys"][0]["kid"]
    assert get(mock, "/issuers/nope/.well-known/openid-configuration").status == 404
    assert get(mock, "/issuers/a/nope").status == 404
    state = mock.admin.call("state")
    assert {i["name"]: i["issuer"] for i in state["issuers"]}["c"] == mock.url + "/issuers/c"
    mock.admin.reset()
    assert get(mock, "/issuers/C/jwks").status == 404
    assert get(mock, "/issuers/c/jwks").status == 404
    assert [i["name"] for i in mock.admin.call("issuers")["issuers"]] == ["a", "b"]   # GET
    assert [i["name"] for i in mock.admin.issuers()["issuers"]] == ["a", "b"]         # no name
    assert jwks(mock, "a")["keys"][0]["kid"] == kid_a                # keys survive a reset


@pytest.mark.parametrize("endpoint", ["issuer:a:token", "issuer:a", "token", "*"])
def test_faults_by_shared_and_per_issuer_keys(mock, endpoint):
    tokens, _ = sign_in(mock, A, scope=SCOPE)
    mock.admin.fault(endpoint=endpoint, type="status", status=503, times=1)
    resp = refresh(mock, tokens["refresh_token"], A, scope=SCOPE)
    assert resp.status == 503 and resp.headers["Retry-After"] == "1"
    assert resp.json()["error"] == "temporarily_unavailable" and "error_codes" not in resp.json()
    assert refresh(mock, tokens["refresh_token"], A, scope=SCOPE).status == 200


def test_per_issuer_fault_spares_the_other_issuer(mock):
    mock.admin.fault(endpoint="issuer:a:openid-configuration", type="status", status=500, times=-1)
    assert get(mock, "/issuers/a/.well-known/openid-configuration").status == 500
    assert discovery(mock, "b")["issuer"].endswith("/issuers/b")
    assert get(mock, "/common/v2.0/.well-known/openid-configuration").status == 200

