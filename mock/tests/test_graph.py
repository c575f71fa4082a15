"""Microsoft Graph: /me, /beta/me, paging, token validation, claims challenge, throttling."""

import base64

import pytest

from flows import sign_in
from mock_idp.jwtsign import Signer
from mock_idp.testing import http


def get(mock, path, token=None, headers=None):
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = "Bearer " + token
    return http("GET", mock.url + path, mock.ca_file, headers=headers)


@pytest.fixture
def at(mock):
    return sign_in(mock)[0]["access_token"]


def test_me(mock, at):
    me = get(mock, "/v1.0/me", at).json()
    assert me["userPrincipalName"] == "alice@contoso.com" and me["displayName"] == "Alice Example"
    assert me["id"] == "a11ce000-0000-4000-8000-000000000001" and "@odata.context" in me
    beta = get(mock, "/beta/me", at).json()
    assert beta["accountEnabled"] is True
    counts = mock.admin.counts()
    assert counts["graph:/v1.0/me"] == 1 and counts["graph:/beta/me"] == 1 and counts["graph"] == 2


def test_users_paging(mock):
    mock.admin.config(graph_collection_size=12, graph_page_size=5)
    at = sign_in(mock, scope="User.ReadBasic.All openid offline_access")[0]["access_token"]
    seen, url, pages = [], "/v1.0/users", 0
    while url:
        page = get(mock, url, at).json()
        seen += [u["id"] for u in page["value"]]
        url = page.get("@odata.nextLink", "").replace(mock.url, "")
        pages += 1
    assert pages == 3 and len(seen) == len(set(seen)) == 12
    two = get(mock, "/v1.0/users?$top=2", at).json()
    assert len(two["value"]) == 2 and "$top=2" in two["@odata.nextLink"]


def _graph_error(resp, status, code):
    assert resp.status == status, resp.text
    err = resp.json()["error"]
    assert err["code"] == code and err["message"] and err["innerError"]["request-id"]
    return resp


def test_token_validation(mock, at):
    resp = _graph_error(get(mock, "/v1.0/me"), 401, "InvalidAuthenticationToken")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer ")
    forged = Signer().sign({"aud": "https://graph.microsoft.com", "exp": 9999999999})
    _graph_error(get(mock, "/v1.0/me", forged), 401, "InvalidAuthenticationToken")
    _graph_error(get(mock, "/v1.0/me", "not-a-jwt"), 401, "InvalidAuthenticationToken")
    api = sign_in(mock, scope="api://other/read openid")[0]["access_token"]
    assert "audience" in _graph_error(get(mock, "/v1.0/me", api), 401,
                                      "InvalidAuthenticationToken").json()["error"]["message"]
    _graph_error(get(mock, "/v1.0/users", at), 403, "Authorization_RequestDenied")
    _graph_error(get(mock, "/v1.0/nothing", at), 400, "BadRequest")


def test_expiry_by_lifetime_and_clock(mock):
    mock.admin.config(access_token_lifetime=30)
    at = sign_in(mock)[0]["access_token"]
    assert get(mock, "/v1.0/me", at).status == 200
    mock.admin.advance_clock(31)
    resp = _graph_error(get(mock, "/v1.0/me", at), 401, "InvalidAuthenticationToken")
    assert "expired" in resp.json()["error"]["message"]


def test_missing_scope(mock):
    at = sign_in(mock, scope="Mail.Read openid")[0]["access_token"]
    _graph_error(get(mock, "/v1.0/me", at), 403, "Authorization_RequestDenied")


def test_claims_challenge(mock, at):
    claims = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
    mock.admin.graph__challenge(claims=claims, times=1)
    resp = _graph_error(get(mock, "/v1.0/me", at), 401, "InvalidAuthenticationToken")
    header = resp.headers["WWW-Authenticate"]
    assert 'error="insufficient_claims"' in header
    encoded = header.split('claims="')[1].split('"')[0]
    assert base64.b64decode(encoded).decode() == claims
    assert get(mock, "/v1.0/me", at).status == 200          # only once


def test_claims_challenge_until_satisfied(mock, at):
    mock.admin.graph__challenge(until_satisfied=True, times=-1)
    assert get(mock, "/v1.0/me", at).status == 401
    assert get(mock, "/v1.0/me", at).status == 401
    better = sign_in(mock, claims='{"access_token":{"acrs":{"essential":true,"value":"c1"}}}')
    assert get(mock, "/v1.0/me", better[0]["access_token"]).status == 200


@pytest.mark.parametrize("status,code", [(429, "TooManyRequests"), (503, "ServiceUnavailable"),
                                         (500, "InternalServerError")])
def test_throttling_and_errors(mock, at, status, code):
    mock.admin.fault(endpoint="graph", type="status", status=status, retry_after=7)
    resp = _graph_error(get(mock, "/v1.0/me", at), status, code)
    assert resp.headers["Retry-After"] == "7"
    assert get(mock, "/v1.0/me", at).status == 200
