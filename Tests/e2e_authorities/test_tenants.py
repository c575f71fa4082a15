"""AAD authorities: organizations, consumers, a tenant id, a tenant domain; a second tenant
for the same home account through the refresh token."""
from __future__ import annotations

import pytest

from authorities_e2e import (ALICE, ALICE_OID, CAROL, CAROL_OID, CONTOSO_TID, MSA_TID, SCOPES,
                             home_ids, jwt_claims, token_calls)


@pytest.mark.parametrize("tenant", ["organizations", CONTOSO_TID, "contoso.onmicrosoft.com", "contoso.com"])
def test_work_account_authorities(launch, mock, tenant):
    p = launch(authority=f"{mock.url}/{tenant}")
    r = p.sign_in(loginHint=ALICE)
    assert r["account"]["username"] == ALICE
    assert r["account"]["homeAccountId"] == f"{ALICE_OID}.{CONTOSO_TID}"
    assert r["tenantId"] == CONTOSO_TID and r["account"]["tenantId"] == CONTOSO_TID
    assert jwt_claims(r["accessToken"])["tid"] == CONTOSO_TID
    authorize = mock.admin.log("authorize")
    assert authorize and all(e["path"].startswith(f"/{tenant}/") for e in authorize), \
        [e["path"] for e in authorize]
    mock.admin.counts__reset()
    again = p.silent()
    assert again["fromCache"] is True and again["accessToken"] == r["accessToken"]
    assert token_calls(mock) == {}
    # Refresh goes to the same authority.
    mock.admin.log__clear()
    fresh = p.silent(forceRefresh=True)
    assert fresh["fromCache"] is False and fresh["tenantId"] == CONTOSO_TID
    paths = [e["path"] for e in mock.admin.log("token")]
    assert paths == [f"/{tenant}/oauth2/v2.0/token"], paths


def test_consumers_authority(launch, mock):
    p = launch(authority=f"{mock.url}/consumers")
    r = p.sign_in()  # the mock picks its personal account (carol) for /consumers
    assert r["account"]["username"] == CAROL
    assert r["account"]["homeAccountId"] == f"{CAROL_OID}.{MSA_TID}"
    assert r["tenantId"] == MSA_TID
    assert p.silent()["fromCache"] is True
    # A work account cannot sign in through /consumers: the mock still answers with carol.
    r2 = p.sign_in(loginHint=ALICE, promptType="login")
    assert r2["account"]["username"] == CAROL
    assert home_ids(p) == [f"{CAROL_OID}.{MSA_TID}"]


SECOND_TID = "cccccccc-2222-4333-8444-555555555555"


def test_second_tenant_silently_through_refresh_token(launch, mock):
    """One home account, a request for another tenant: the refresh token is redeemed at that
    tenant; no browser, no authorize call.

    Mock limit: the mock has no guest users, so its token for tenant 2 still carries the
    home tenant's `tid`; the test checks the request (where it went, that it needed no
    prompt), not a second tenant profile."""
    mock.admin.tenants(id=SECOND_TID, domains=["fabrikam-partner.example"])
    p = launch(authority=f"{mock.url}/organizations")
    first = p.sign_in(loginHint=ALICE)
    assert first["tenantId"] == CONTOSO_TID
    mock.admin.counts__reset()
    mock.admin.log__clear()
    r = p.silent(authority=f"{mock.url}/{SECOND_TID}", account={"homeAccountId": first["account"]["homeAccountId"]})
    assert r["fromCache"] is False
    assert r["account"]["homeAccountId"] == first["account"]["homeAccountId"]
    assert r["accessToken"] != first["accessToken"]
    counts = token_calls(mock)
    assert counts.get("authorize", 0) == 0, counts
    assert counts.get("token:refresh_token") == 1 and counts.get("token:authorization_code", 0) == 0, counts
    paths = [e["path"] for e in mock.admin.log("token")]
    assert paths == [f"/{SECOND_TID}/oauth2/v2.0/token"], paths
    # Still one account; the home tenant's token is untouched.
    assert home_ids(p) == [first["account"]["homeAccountId"]]
    home = p.silent(account={"homeAccountId": first["account"]["homeAccountId"]})
    assert home["fromCache"] is True and home["accessToken"] == first["accessToken"]
