"""Proof-of-possession tokens (#49): the sidecar's own key per cache, `proofOfPossession` on
acquireTokenSilent/acquireToken, `signHttpRequest`, the mock's PoP resource and the independent
verifier (Tests/e2e/shr_verifier.py, PyJWT) checking the signed HTTP requests the binary makes."""
from __future__ import annotations

import json
import os

import jwt
import pytest

import shr_verifier
from mock_idp.testing import http

GRAPH_ME = "/v1.0/me"


def _key(tmp_path, name="cache.key") -> str:
    path = tmp_path / name
    path.write_bytes(os.urandom(32))
    os.chmod(path, 0o600)
    return str(path)


@pytest.fixture
def encrypted(tmp_path):
    """An encrypted cache (the PoP key is kept beside it, sealed under its key)."""
    cache = str(tmp_path / "enc" / "cache.json")
    return {"path": cache, "encryption": {"keyFile": _key(tmp_path)}}


def _call(mock, method, url, header):
    return http(method, url, mock.ca_file, headers={"Authorization": header})


def _pop(method, url, **extra):
    return {"proofOfPossession": {"method": method, "url": url, **extra}}


def test_a_pop_token_whose_shr_the_resource_and_the_verifier_accept(launch, mock, encrypted):
    p = launch(cache=encrypted)
    p.sign_in()
    url = mock.url + "/pop/resource/items?x=1"
    r = p.silent(**_pop("POST", url))
    assert r["tokenType"] == "pop" and not r["fromCache"]
    assert r["authorizationHeader"] == "PoP " + r["signedHttpRequest"]
    payload = shr_verifier.verify(r["signedHttpRequest"], "POST", url)
    assert payload["at"] == r["accessToken"]
    token = jwt.decode(r["accessToken"], options={"verify_signature": False})
    assert token["cnf"]["kid"] == shr_verifier.jwk_thumbprint(payload["cnf"]["jwk"])
    form = mock.admin.log("token:refresh_token")[-1]["form"]
    assert form["token_type"] == "pop"
    assert json.loads(shr_verifier.base64.urlsafe_b64decode(form["req_cnf"] + "=="))["kid"] == token["cnf"]["kid"]
    ok = _call(mock, "POST", url, r["authorizationHeader"])
    assert ok.status == 200, ok.text
    assert ok.json()["kid"] == token["cnf"]["kid"]
    # Graph with the PoP header; a replay elsewhere is refused, by the resource and the verifier.
    me = p.silent(**_pop("GET", mock.url + GRAPH_ME))
    assert _call(mock, "GET", mock.url + GRAPH_ME, me["authorizationHeader"]).status == 200
    other_host = url.replace("127.0.0.1", "localhost")
    for method, target in [("GET", url), ("POST", mock.url + "/pop/resource/other?x=1"), ("POST", other_host)]:
        refused = _call(mock, method, target, r["authorizationHeader"])
        assert refused.status == 401, (method, target)
        assert refused.headers["WWW-Authenticate"].startswith("PoP nonce=")
        with pytest.raises(shr_verifier.SHRRejected):
            shr_verifier.verify(r["signedHttpRequest"], method, target)
    # The token alone, as a bearer token, is useless.
    assert _call(mock, "GET", mock.url + GRAPH_ME, "Bearer " + r["accessToken"]).status == 401


def test_the_nonce_the_resource_asks_for(launch, mock, encrypted):
    mock.admin.config(pop_require_nonce=True)
    p = launch(cache=encrypted)
    p.sign_in()
    url = mock.url + "/pop/resource"
    first = _call(mock, "GET", url, p.silent(**_pop("GET", url))["authorizationHeader"])
    assert first.status == 401
    nonce = first.headers["WWW-Authenticate"].split('"')[1]
    r = p.silent(**_pop("GET", url, nonce=nonce, clientClaims="u=/subscriptions/1"))
    assert shr_verifier.verify(r["signedHttpRequest"], "GET", url, nonce=nonce, client_claims="u=/subscriptions/1")
    assert r["fromCache"]
    assert _call(mock, "GET", url, r["authorizationHeader"]).status == 200


def test_sign_http_request_in_a_new_process_uses_the_same_key_and_no_token_request(launch, mock, encrypted, tmp_path):
    p = launch(cache=encrypted)
    p.sign_in()
    url = mock.url + "/pop/resource"
    first = p.silent(**_pop("GET", url))
    kid = jwt.decode(first["accessToken"], options={"verify_signature": False})["cnf"]["kid"]
    p.kill()
    key_file = encrypted["path"] + ".pop-key"
    stored = open(key_file, "rb").read()
    assert stored.startswith(b"auth-sidecar-aes256gcm-v1") and oct(os.stat(key_file).st_mode & 0o777) == "0o600"
    before = mock.admin.count("token")
    again = launch(cache=encrypted)
    signed = again.ok("signHttpRequest", {"method": "PUT", "url": url + "/x", "scopes": ["User.Read"]})
    assert mock.admin.count("token") == before, "signHttpRequest asked for a token while one was cached"
    assert signed["fromCache"] and signed["tokenType"] == "pop"
    payload = shr_verifier.verify(signed["signedHttpRequest"], "PUT", url + "/x")
    assert shr_verifier.jwk_thumbprint(payload["cnf"]["jwk"]) == kid
    assert _call(mock, "PUT", url + "/x", signed["authorizationHeader"]).status == 200
    # A bearer request for the same scope still gets a bearer token (and a PoP one never answers it).
    bearer = again.silent()
    assert bearer["tokenType"] == "Bearer" and "signedHttpRequest" not in bearer
    assert "cnf" not in jwt.decode(bearer["accessToken"], options={"verify_signature": False})
    assert again.silent(**_pop("GET", url))["accessToken"] == first["accessToken"]


def test_a_plaintext_cache_keeps_no_key(launch, mock, tmp_path):
    cache = str(tmp_path / "plain" / "cache.json")
    p = launch(cache=cache)
    p.sign_in()
    url = mock.url + "/pop/resource"
    r = p.silent(**_pop("GET", url))
    assert _call(mock, "GET", url, r["authorizationHeader"]).status == 200
    assert not os.path.exists(cache + ".pop-key")
    p.kill()
    # Another process has another key: the token bound to the first is not used, a new one is asked for.
    q = launch(cache=cache)
    s = q.silent(**_pop("GET", url))
    assert not s["fromCache"] and s["accessToken"] != r["accessToken"]
    shr_verifier.verify(s["signedHttpRequest"], "GET", url)


def test_bad_pop_parameters(launch, mock, encrypted):
    p = launch(cache=encrypted)
    p.sign_in()
    e = p.error("acquireTokenSilent", {"scopes": ["User.Read"], **_pop("GET", "http://example.com/")}, -32602)
    assert e["data"]["member"] == "proofOfPossession.url"
    e = p.error("acquireTokenSilent", {"scopes": ["User.Read"], **_pop("G T", mock.url)}, -32602)
    assert e["data"]["member"] == "proofOfPossession.method"
    e = p.error("acquireTokenSilent", {"proofOfPossession": {"url": mock.url}}, -32602)
    assert e["data"]["member"] == "proofOfPossession.method"
    e = p.error("signHttpRequest", {"method": "GET", "url": mock.url, "bogus": 1}, -32602)
    assert "bogus" in e["message"]
