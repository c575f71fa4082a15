"""A generic OpenID Connect authority (authorityType "oidc"): the issuer's discovery document
at <authority>/.well-known/openid-configuration, no instance discovery, no knownAuthorities."""
from __future__ import annotations

import pytest

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


def issuer_counts(mock, name: str) -> dict:
    prefix = f"issuer:{name}:"
    return {k[len(prefix):]: v for k, v in mock.admin.counts().items() if k.startswith(prefix)}


def test_two_issuers_on_one_host_never_share_tokens(launch, mock, tmp_path):
    """The issuer rule: issuers /issuers/a and /issuers/b on one host and port (like Keycloak
    realms). A's tokens are never used for B, A's refresh token is never sent to B, and once
    both signed in each gets its own token."""
    cache = str(tmp_path / "shared" / "cache.json")
    issuer_a, issuer_b = f"{mock.url}/issuers/a", f"{mock.url}/issuers/b"
    a = launch(authority=issuer_a, authorityType="oidc", knownAuthorities=[], cache=cache)
    signed_in = a.sign_in(loginHint=ALICE, scopes=["openid"])
    assert signed_in["account"]["username"] == ALICE
    mock.admin.counts__reset()

    # In A's process, a request naming B: no account there, nothing sent to B.
    for force in (False, True):
        e = a.error("acquireTokenSilent", {"authority": issuer_b, "scopes": ["openid"], "forceRefresh": force},
                    -50002, name="interactionRequired")
        assert e["data"].get("suberror") == "no_account", e
    # A process configured with B, same cache file: the same.
    b = launch(authority=issuer_b, authorityType="oidc", knownAuthorities=[], cache=cache)
    b.error("acquireTokenSilent", {"scopes": ["openid"]}, -50002, name="interactionRequired")
    assert b.ok("getCurrentAccount", {}).get("account") is None
    assert issuer_counts(mock, "b").get("token", 0) == 0, issuer_counts(mock, "b")

    # B signs in on its own; each issuer then serves its own token, refreshes at its own endpoint.
    # (The current account is one per cache: B's sign-in made it B's, so A names its own.)
    b_token = b.sign_in(loginHint=ALICE, scopes=["openid"])["accessToken"]
    account_a = {"homeAccountId": signed_in["account"]["homeAccountId"]}
    assert a.silent(scopes=["openid"], account=account_a)["accessToken"] == signed_in["accessToken"]
    assert b.silent(scopes=["openid"])["accessToken"] == b_token != signed_in["accessToken"]
    mock.admin.counts__reset()
    a.silent(scopes=["openid"], account=account_a, forceRefresh=True)
    assert issuer_counts(mock, "a").get("token:refresh_token") == 1 and issuer_counts(mock, "b") == {}, mock.admin.counts()


@pytest.mark.parametrize("tamper", ["signature", "issuer", "audience", "expired", "not_yet_valid", "nonce"])
def test_a_generic_providers_bad_id_token_is_refused_and_nothing_cached(launch, mock, tamper):
    p = launch(authority=f"{mock.url}/issuers/a", authorityType="oidc", knownAuthorities=[])
    mock.admin.id_token(tamper=tamper)
    e = p.error("acquireToken", {"scopes": ["openid"], "loginHint": ALICE}, -51004, timeout=20,
                name="malformedResponse")
    assert "ID token was refused" in e["message"], e
    assert home_ids(p) == []
    p.error("acquireTokenSilent", {"scopes": ["openid"]}, -50002, name="interactionRequired")


@pytest.mark.parametrize("tamper", ["issuer", "audience", "expired", "nonce"])
def test_a_microsoft_bad_id_token_is_refused_and_nothing_cached(launch, mock, tamper):
    p = launch()
    mock.admin.id_token(tamper=tamper)
    e = p.error("acquireToken", {"scopes": ["User.Read"], "loginHint": ALICE}, -51004, timeout=20,
                name="malformedResponse")
    assert "ID token was refused" in e["message"], e
    assert home_ids(p) == []


def test_issuer_paths_differing_only_in_case_are_two_issuers(launch, mock, tmp_path):
    """Paths are case-sensitive (Keycloak realms `Team` and `team` are two): /issuers/A is
    never served /issuers/a's token, never sends a's refresh token, and never uses a's kept
    discovery (its token endpoint); once both signed in, each keeps its own entries."""
    mock.admin.issuers(name="A")
    cache = str(tmp_path / "shared" / "cache.json")
    lower, upper = f"{mock.url}/issuers/a", f"{mock.url}/issuers/A"
    a = launch(authority=lower, authorityType="oidc", knownAuthorities=[], cache=cache)
    signed_in = a.sign_in(loginHint=ALICE, scopes=["openid"])
    mock.admin.counts__reset()

    upper_p = launch(authority=upper, authorityType="oidc", knownAuthorities=[], cache=cache)
    assert upper_p.ok("getAccounts", {})["accounts"] == []
    for force in (False, True):
        upper_p.error("acquireTokenSilent", {"scopes": ["openid"], "forceRefresh": force}, -50002,
                      name="interactionRequired")
    assert issuer_counts(mock, "a") == {} and issuer_counts(mock, "A").get("token", 0) == 0, mock.admin.counts()

    # A signs in at its own issuer (its own discovery, authorize and token endpoints).
    upper_token = upper_p.sign_in(loginHint=ALICE, scopes=["openid"])["accessToken"]
    assert upper_token != signed_in["accessToken"]
    assert issuer_counts(mock, "A").get("openid-configuration", 0) >= 1, mock.admin.counts()
    assert issuer_counts(mock, "A").get("token:authorization_code") == 1, mock.admin.counts()
    assert issuer_counts(mock, "a") == {}, mock.admin.counts()
    account = {"homeAccountId": signed_in["account"]["homeAccountId"]}
    assert a.silent(scopes=["openid"], account=account)["accessToken"] == signed_in["accessToken"]
    assert upper_p.silent(scopes=["openid"])["accessToken"] == upper_token
    mock.admin.counts__reset()
    upper_p.silent(scopes=["openid"], forceRefresh=True)
    a.silent(scopes=["openid"], account=account, forceRefresh=True)
    assert issuer_counts(mock, "A").get("token:refresh_token") == 1, mock.admin.counts()
    assert issuer_counts(mock, "a").get("token:refresh_token") == 1, mock.admin.counts()
