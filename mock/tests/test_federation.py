"""Workload identity federation: /_admin/federation and the client_credentials grant with a
client assertion checked against its issuer's JWKS (a stand-in CI issuer on loopback)."""

import time

import pytest

from flows import token, unverified_claims, verify_jwt
from mock_idp.state import CONTOSO_TENANT_ID
from mock_idp.testing import http
from mock_idp.workload_issuer import WorkloadIssuer

APP = "5e1f0000-0000-4000-8000-00000000ab01"
ARM = "https://management.azure.com/.default"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@pytest.fixture
def issuer():
    stand_in = WorkloadIssuer(lifetime=60).start()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def app(mock, issuer):
    mock.admin.federation(client_id=APP, issuer=issuer.url, subject=issuer.subject, roles=["Reader"])
    return APP


def exchange(mock, assertion, client_id=APP, scope=ARM, tenant=CONTOSO_TENANT_ID, **extra):
    form = {"grant_type": "client_credentials", "client_id": client_id, "scope": scope,
            "client_assertion_type": JWT_BEARER, "client_assertion": assertion, **extra}
    return token(mock, tenant, **form)


def assert_aadsts(resp, code, error, status):
    assert resp.status == status, resp.text
    body = resp.json()
    assert body["error"] == error and body["error_codes"] == [code], body
    assert body["error_description"].startswith("AADSTS%d: " % code)
    return body


def test_registration_creates_the_app_and_lists_credentials(mock, issuer, app):
    listed = mock.admin.call("federation")["federations"]
    assert listed == [{"client_id": APP, "issuer": issuer.url, "subject": issuer.subject,
                       "audience": "api://AzureADTokenExchange"}]
    clients = {c["client_id"] for c in mock.admin.call("state")["clients"]}
    assert APP in clients
    mock.admin.reset()
    assert mock.admin.call("federation")["federations"] == []


def test_valid_assertion_gets_an_app_token(mock, issuer, app):
    resp = exchange(mock, issuer.mint())
    assert resp.status == 200, resp.text
    body = resp.json()
    assert set(body) == {"token_type", "expires_in", "ext_expires_in", "access_token"}
    jwks = http("GET", "%s/%s/discovery/v2.0/keys" % (mock.url, CONTOSO_TENANT_ID), mock.ca_file).json()
    _, claims = verify_jwt(body["access_token"], jwks)
    assert claims["appid"] == claims["azp"] == APP
    assert claims["idtyp"] == "app" and claims["roles"] == ["Reader"]
    assert "scp" not in claims and "upn" not in claims
    assert claims["aud"] == "https://management.azure.com" and claims["tid"] == CONTOSO_TENANT_ID
    assert claims["sub"] == claims["oid"]


def test_expired_assertion_is_700024(mock, issuer, app):
    stale = issuer.mint(lifetime=1)
    time.sleep(1.1)
    body = assert_aadsts(exchange(mock, stale), 700024, "invalid_client", 401)
    assert "not within its valid time range" in body["error_description"]


def test_not_yet_valid_assertion_is_700024(mock, issuer, app):
    early = issuer.mint(not_before=int(time.time()) + 120, lifetime=300)
    assert_aadsts(exchange(mock, early), 700024, "invalid_client", 401)


@pytest.mark.parametrize("change", ["subject", "audience", "issuer"])
def test_no_matching_credential_is_70021(mock, issuer, app, change):
    if change == "subject":
        assertion = issuer.mint(subject="repo:contoso/other:ref:refs/heads/main")
    elif change == "audience":
        assertion = issuer.mint(audience="api://SomethingElse")
    else:
        other = WorkloadIssuer().start()
        try:
            assertion = other.mint()
        finally:
            other.stop()
    body = assert_aadsts(exchange(mock, assertion), 70021, "invalid_request", 400)
    assert "No matching federated identity record" in body["error_description"]


def test_signature_by_another_key_is_700027(mock, issuer, app):
    impostor = WorkloadIssuer().start()
    try:
        impostor.server, real_server = issuer.server, impostor.server   # same iss, other key
        forged = impostor.mint()
        impostor.server = real_server
    finally:
        impostor.stop()
    assert unverified_claims(forged)["iss"] == issuer.url
    assert_aadsts(exchange(mock, forged), 700027, "invalid_client", 401)


def test_tampered_claims_fail_the_signature(mock, issuer, app):
    head, _, sig = issuer.mint().split(".")
    other_body = issuer.mint(lifetime=600).split(".")[1]
    assert_aadsts(exchange(mock, "%s.%s.%s" % (head, other_body, sig)), 700027, "invalid_client", 401)


def test_scope_must_be_dot_default(mock, issuer, app):
    resp = exchange(mock, issuer.mint(), scope="https://management.azure.com/user_impersonation")
    assert_aadsts(resp, 1002012, "invalid_scope", 400)


def test_missing_or_wrong_assertion_type(mock, issuer, app):
    assert_aadsts(exchange(mock, ""), 7000218, "invalid_client", 401)
    assert_aadsts(exchange(mock, issuer.mint(), client_assertion_type="jwt"), 9002344,
                  "invalid_request", 400)


def test_unknown_app_is_700016(mock, issuer):
    assert_aadsts(exchange(mock, issuer.mint()), 700016, "unauthorized_client", 400)


def test_each_exchange_is_logged_with_its_assertion(mock, issuer, app):
    first, second = issuer.mint(), issuer.mint()
    assert exchange(mock, first).status == 200 and exchange(mock, second).status == 200
    sent = [r["form"]["client_assertion"] for r in mock.admin.log("token:client_credentials")]
    assert sent == [first, second]
