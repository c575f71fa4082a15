"""token_type=pop: access tokens bound to a key, and the PoP resource that checks signed HTTP requests."""

import base64
import json
import os
import sys
import time

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from flows import assert_error_shape, refresh, sign_in, unverified_claims
from mock_idp.testing import http

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "Tests", "e2e"))
import shr_verifier  # noqa: E402

GRAPH_SCOPE = "https://graph.microsoft.com/User.Read openid offline_access"


@pytest.fixture(scope="module")
def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def req_cnf(jwk):
    text = json.dumps({"kid": shr_verifier.jwk_thumbprint(jwk), "xms_ksl": "sw"})
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def pop_token(mock, key, scope=GRAPH_SCOPE):
    jwk = shr_verifier.public_jwk(key)
    tokens, _ = sign_in(mock)
    resp = refresh(mock, tokens["refresh_token"], scope=scope, token_type="pop", req_cnf=req_cnf(jwk))
    assert resp.status == 200, resp.text
    return resp.json(), jwk


def call(mock, method, url, shr):
    return http(method, url, mock.ca_file, headers={"Authorization": "PoP " + shr})


def test_pop_token_is_bound_to_the_kid(mock, rsa_key):
    body, jwk = pop_token(mock, rsa_key)
    assert body["token_type"] == "pop"
    assert unverified_claims(body["access_token"])["cnf"] == {"kid": shr_verifier.jwk_thumbprint(jwk)}
    tokens, _ = sign_in(mock)
    plain = refresh(mock, tokens["refresh_token"], scope=GRAPH_SCOPE).json()
    assert plain["token_type"] == "Bearer" and "cnf" not in unverified_claims(plain["access_token"])


def test_req_cnf_without_kid_is_refused(mock):
    tokens, _ = sign_in(mock)
    bad = base64.urlsafe_b64encode(b'{"xms_ksl":"sw"}').decode()
    resp = refresh(mock, tokens["refresh_token"], scope=GRAPH_SCOPE, token_type="pop", req_cnf=bad)
    assert resp.status == 400
    assert_error_shape(resp.json(), "invalid_request", 5002710)
    resp = refresh(mock, tokens["refresh_token"], scope=GRAPH_SCOPE, token_type="pop")
    assert resp.status == 400 and "req_cnf" in resp.json()["error_description"]


def test_resource_accepts_a_valid_shr_and_the_verifier_agrees(mock, rsa_key):
    body, jwk = pop_token(mock, rsa_key)
    url = mock.url + "/pop/resource/items?x=1&y=two"
    shr = shr_verifier.sign(rsa_key, jwk, body["access_token"], "POST", url)
    resp = call(mock, "POST", url, shr)
    assert resp.status == 200, resp.text
    assert resp.json()["kid"] == shr_verifier.jwk_thumbprint(jwk)
    shr_verifier.verify(shr, "POST", url)
    me = call(mock, "GET", mock.url + "/v1.0/me", shr_verifier.sign(rsa_key, jwk, body["access_token"], "GET",
                                                                    mock.url + "/v1.0/me"))
    assert me.status == 200 and me.json()["userPrincipalName"] == "alice@contoso.com"


def test_es256_key(mock):
    key = ec.generate_private_key(ec.SECP256R1())
    body, jwk = pop_token(mock, key)
    url = mock.url + "/pop/resource"
    resp = call(mock, "GET", url, shr_verifier.sign(key, jwk, body["access_token"], "GET", url, alg="ES256"))
    assert resp.status == 200, resp.text


def _refused(resp, why):
    assert resp.status == 401, resp.text
    assert resp.headers["WWW-Authenticate"].startswith('PoP nonce="')
    assert why in resp.json()["error"]["message"], resp.json()


def test_replays_and_forgeries_are_refused(mock, rsa_key):
    body, jwk = pop_token(mock, rsa_key)
    at, url = body["access_token"], mock.url + "/pop/resource/a"
    shr = shr_verifier.sign(rsa_key, jwk, at, "GET", url)
    _refused(call(mock, "POST", url, shr), "m is 'GET'")                       # another method
    _refused(call(mock, "GET", mock.url + "/pop/resource/b", shr), "p is")     # another path
    other_host = url.replace("127.0.0.1", "localhost")
    _refused(call(mock, "GET", other_host, shr), "u is")                        # another host
    _refused(call(mock, "GET", url + "?x=1", shr_verifier.sign(rsa_key, jwk, at, "GET", url + "?x=2")), "q does not match")
    old = shr_verifier.sign(rsa_key, jwk, at, "GET", url, ts=int(time.time()) - 400)
    _refused(call(mock, "GET", url, old), "ts")
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    theirs = shr_verifier.sign(stranger, shr_verifier.public_jwk(stranger), at, "GET", url)
    _refused(call(mock, "GET", url, theirs), "not the one the token is bound to")
    forged = shr.rsplit(".", 1)[0] + "." + shr_verifier.sign(stranger, jwk, at, "GET", url).rsplit(".", 1)[1]
    _refused(call(mock, "GET", url, forged), "signature")
    _refused(http("GET", url, mock.ca_file, headers={"Authorization": "Bearer " + at}), "PoP authorization")
    me = http("GET", mock.url + "/v1.0/me", mock.ca_file, headers={"Authorization": "Bearer " + at})
    assert me.status == 401, me.text   # a bound token alone is useless
    assert call(mock, "GET", url, shr).status == 200                            # the right one still works
    with pytest.raises(shr_verifier.SHRRejected):
        shr_verifier.verify(shr, "GET", other_host)
    with pytest.raises(shr_verifier.SHRRejected):
        shr_verifier.verify(theirs, "GET", url)


def test_bearer_token_in_a_shr_is_refused(mock, rsa_key):
    tokens, _ = sign_in(mock)
    at = refresh(mock, tokens["refresh_token"], scope=GRAPH_SCOPE).json()["access_token"]
    url = mock.url + "/pop/resource"
    _refused(call(mock, "GET", url, shr_verifier.sign(rsa_key, shr_verifier.public_jwk(rsa_key), at, "GET", url)),
             "not a PoP token")


def test_nonce_when_required(mock, rsa_key):
    mock.admin.config(pop_require_nonce=True)
    body, jwk = pop_token(mock, rsa_key)
    url = mock.url + "/pop/resource"
    first = call(mock, "GET", url, shr_verifier.sign(rsa_key, jwk, body["access_token"], "GET", url))
    _refused(first, "nonce")
    nonce = first.headers["WWW-Authenticate"].split('"')[1]
    made_up = call(mock, "GET", url, shr_verifier.sign(rsa_key, jwk, body["access_token"], "GET", url, nonce="x"))
    _refused(made_up, "nonce")
    good = call(mock, "GET", url, shr_verifier.sign(rsa_key, jwk, body["access_token"], "GET", url, nonce=nonce))
    assert good.status == 200, good.text
    assert mock.admin.pop__refusals()["refusals"][-1].startswith("the SHR carries no nonce")
