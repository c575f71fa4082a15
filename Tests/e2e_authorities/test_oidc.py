"""A generic OpenID Connect authority (authorityType "oidc"): the issuer's discovery document
at <authority>/.well-known/openid-configuration, no instance discovery, no knownAuthorities."""
from __future__ import annotations

from authorities_e2e import ALICE, CONTOSO_TID, home_ids, token_calls


def test_oidc_sign_in_silent_signout(launch, mock):
    authority = f"{mock.url}/{CONTOSO_TID}/v2.0"
    p = launch(authority=authority, authorityType="oidc", knownAuthorities=[])
    first = p.sign_in(loginHint=ALICE)
    assert first["fromCache"] is False
    assert first["account"]["username"] == ALICE
    assert first.get("idToken")
    counts = mock.admin.counts()
    assert counts.get("openid-configuration", 0) >= 1, counts
    assert counts.get("instance-discovery", 0) == 0, counts
    metadata = mock.admin.log("openid-configuration")
    assert metadata[0]["path"] == f"/{CONTOSO_TID}/v2.0/.well-known/openid-configuration", metadata

    mock.admin.counts__reset()
    again = p.silent()
    assert again["fromCache"] is True and again["accessToken"] == first["accessToken"]
    assert token_calls(mock) == {}
    fresh = p.silent(forceRefresh=True)
    assert fresh["fromCache"] is False
    assert token_calls(mock) == {"token": 1, "token:refresh_token": 1}

    out = p.ok("signout", {})
    assert out["signedOut"] is True
    assert out["account"]["homeAccountId"] == first["account"]["homeAccountId"]
    assert home_ids(p) == []
    e = p.error("acquireTokenSilent", {}, -50002, name="interactionRequired")
    assert e["data"].get("suberror") == "no_account"
