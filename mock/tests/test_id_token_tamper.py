"""POST /_admin/id_token: ID tokens with one defect, at the Microsoft-shaped endpoints and at
the generic issuers, for `times` token responses."""

import time
from urllib.parse import urlsplit

import pytest
from cryptography.exceptions import InvalidSignature

from flows import refresh, sign_in, verify_jwt
from mock_idp.testing import http

SKEW = 300
AUTHORITIES = {   # authority -> (scope, JWKS path)
    "organizations": ("User.Read openid profile offline_access", "/common/discovery/v2.0/keys"),
    "issuers/a": ("openid profile email offline_access", "/issuers/a/jwks"),
}


def tokens_and_jwks(mock, authority, **params):
    scope, jwks_path = AUTHORITIES[authority]
    tokens, _ = sign_in(mock, authority, scope=scope, nonce="n-sent", **params)
    return tokens, http("GET", mock.url + jwks_path, mock.ca_file).json()


def check_defect(mock, mode, tokens, jwks):
    """Assert the ID token has exactly the defect `mode` (None: a sound ID token)."""
    verify_jwt(tokens["access_token"], jwks)                  # access tokens are never touched
    if mode == "signature":
        with pytest.raises(InvalidSignature):
            verify_jwt(tokens["id_token"], jwks)
        return
    _, claims = verify_jwt(tokens["id_token"], jwks)
    now = time.time()
    assert (urlsplit(claims["iss"]).netloc == urlsplit(mock.url).netloc) == (mode != "issuer")
    assert (claims["aud"] == mock.client_id) == (mode != "audience")
    assert (claims["exp"] > now + SKEW) == (mode != "expired")
    assert (claims["nbf"] < now + SKEW and claims["iat"] < now + SKEW) == (mode != "not_yet_valid")
    assert (claims["nonce"] == "n-sent") == (mode != "nonce")
    assert claims["exp"] > claims["nbf"] and claims["nbf"] == claims["iat"]


@pytest.mark.parametrize("authority", sorted(AUTHORITIES))
@pytest.mark.parametrize("mode", ["signature", "issuer", "audience", "expired",
                                  "not_yet_valid", "nonce"])
def test_each_defect_for_times_responses(mock, authority, mode):
    armed = mock.admin.id_token(tamper=mode, times=2)
    assert armed["id_token_tamper"] == {"tamper": mode, "times": 2}
    for _ in range(2):
        check_defect(mock, mode, *tokens_and_jwks(mock, authority))
    assert mock.admin.call("state")["id_token_tamper"] is None
    check_defect(mock, None, *tokens_and_jwks(mock, authority))


def test_issuer_defect_names_another_host_same_path(mock):
    mock.admin.id_token(tamper="issuer")
    tokens, jwks = tokens_and_jwks(mock, "issuers/a")
    assert verify_jwt(tokens["id_token"], jwks)[1]["iss"] == "https://wrong-issuer.example/issuers/a"


def test_default_is_once_and_only_id_token_responses_count(mock):
    scope = AUTHORITIES["organizations"][0]
    tokens, jwks = tokens_and_jwks(mock, "organizations")
    mock.admin.id_token(tamper="audience")
    assert mock.admin.call("state")["id_token_tamper"] == {"tamper": "audience", "times": 1}
    no_id_token = refresh(mock, tokens["refresh_token"], scope="User.Read").json()
    assert "id_token" not in no_id_token
    tampered = refresh(mock, tokens["refresh_token"], scope=scope).json()
    assert verify_jwt(tampered["id_token"], jwks)[1]["aud"] != mock.client_id
    sound = refresh(mock, tokens["refresh_token"], scope=scope).json()
    assert verify_jwt(sound["id_token"], jwks)[1]["aud"] == mock.client_id


def test_until_cleared_with_none_or_reset(mock):
    mock.admin.id_token(tamper="expired", times=-1)
    for _ in range(3):
        check_defect(mock, "expired", *tokens_and_jwks(mock, "issuers/a"))
    assert mock.admin.call("state")["id_token_tamper"] == {"tamper": "expired", "times": -1}
    mock.admin.id_token(tamper="none")
    check_defect(mock, None, *tokens_and_jwks(mock, "issuers/a"))
    mock.admin.id_token(tamper="nonce", times=-1)
    mock.admin.reset()
    check_defect(mock, None, *tokens_and_jwks(mock, "organizations"))


def test_bad_mode_rejected(mock):
    with pytest.raises(RuntimeError):
        mock.admin.id_token(tamper="everything")
    assert mock.admin.call("state")["id_token_tamper"] is None
