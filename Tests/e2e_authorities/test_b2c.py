"""Azure AD B2C (mission section 10): one authority per user-flow policy, declared as a
known authority; the account of each policy is its own (`{oid}-{policy}.{tid}`)."""
from __future__ import annotations

from authorities_e2e import (B2C_SCOPES, B2C_TID, DAVE, DAVE_OID, EDIT, SIGN_IN, SUSI,
                             b2c_home_account_id, b2c_path, home_ids, jwt_claims, token_calls)


def test_b2c_two_policies_distinct_accounts_silent_and_signout(launch, mock):
    susi_authority = mock.url + b2c_path(SUSI)
    edit_authority = mock.url + b2c_path(EDIT)
    p = launch(authority=susi_authority, knownAuthorities=["127.0.0.1"])

    # Sign-up/sign-in policy (the configured authority), browser flow.
    susi = p.sign_in(scopes=B2C_SCOPES)
    assert susi["fromCache"] is False
    assert susi["account"]["homeAccountId"] == b2c_home_account_id(SUSI), susi["account"]
    assert susi["account"]["homeAccountId"].split(".")[0].endswith("-b2c_1_susi")
    assert susi["account"]["username"] == DAVE
    assert susi["tenantId"] == B2C_TID
    assert jwt_claims(susi["accessToken"])["tfp"] == SUSI

    # Edit-profile policy for the same user (per-request authority; SSO in the browser).
    edit = p.sign_in(scopes=B2C_SCOPES, authority=edit_authority)
    assert edit["fromCache"] is False
    assert edit["account"]["homeAccountId"] == b2c_home_account_id(EDIT), edit["account"]
    assert jwt_claims(edit["accessToken"])["tfp"] == EDIT
    assert jwt_claims(edit["accessToken"])["oid"] == DAVE_OID
    authorize_paths = [r["path"] for r in mock.admin.log("authorize")]
    assert any("/b2c_1_edit_profile/" in path.lower() for path in authorize_paths), authorize_paths

    # Two distinct accounts.
    assert home_ids(p) == sorted([b2c_home_account_id(SUSI), b2c_home_account_id(EDIT)])

    # Silent per policy: that policy's token, from the cache.
    mock.admin.counts__reset()
    for policy, authority, first in ((SUSI, susi_authority, susi), (EDIT, edit_authority, edit)):
        r = p.silent(scopes=B2C_SCOPES, authority=authority,
                     account={"homeAccountId": b2c_home_account_id(policy)})
        assert r["fromCache"] is True, (policy, r)
        assert r["account"]["homeAccountId"] == b2c_home_account_id(policy)
        assert r["accessToken"] == first["accessToken"], policy
        assert jwt_claims(r["accessToken"])["tfp"] == policy
    assert token_calls(mock) == {}, token_calls(mock)

    # Signing out of the edit-profile account leaves the sign-up/sign-in one.
    out = p.ok("signout", {"account": {"homeAccountId": b2c_home_account_id(EDIT)}})
    assert out["signedOut"] is True
    assert out["account"]["homeAccountId"] == b2c_home_account_id(EDIT)
    assert home_ids(p) == [b2c_home_account_id(SUSI)]
    r = p.silent(scopes=B2C_SCOPES, authority=susi_authority,
                 account={"homeAccountId": b2c_home_account_id(SUSI)})
    assert r["fromCache"] is True and r["accessToken"] == susi["accessToken"]
    p.error("acquireTokenSilent", {"scopes": B2C_SCOPES, "authority": edit_authority,
                                   "account": {"homeAccountId": b2c_home_account_id(EDIT)}},
            -51011, name="accountNotFound")


def test_b2c_silent_refresh_stays_on_the_policy(launch, mock):
    """forceRefresh for the edit-profile account redeems the refresh token at that policy."""
    p = launch(authority=mock.url + b2c_path(SUSI))
    p.sign_in(scopes=B2C_SCOPES)
    p.sign_in(scopes=B2C_SCOPES, authority=mock.url + b2c_path(EDIT))
    mock.admin.counts__reset()
    mock.admin.log__clear()
    r = p.silent(scopes=B2C_SCOPES, authority=mock.url + b2c_path(EDIT), forceRefresh=True,
                 account={"homeAccountId": b2c_home_account_id(EDIT)})
    assert r["fromCache"] is False
    assert r["account"]["homeAccountId"] == b2c_home_account_id(EDIT)
    assert jwt_claims(r["accessToken"])["tfp"] == EDIT
    assert token_calls(mock) == {"token": 1, "token:refresh_token": 1}
    paths = [e["path"].lower() for e in mock.admin.log("token")]
    assert len(paths) == 1 and "b2c_1_edit_profile" in paths[0], paths


def test_b2c_password_reset_required(launch, mock):
    p = launch(authority=mock.url + b2c_path(SUSI))
    mock.admin.authorize__next(outcome="forgot_password")
    e = p.error("acquireToken", {"scopes": B2C_SCOPES}, -51013, timeout=SIGN_IN,
                name="passwordResetRequired")
    assert "AADB2C90118" in str(e.get("data")), e
    assert home_ids(p) == []
    # The app then starts the password-reset policy (a B2C policy like any other).
    r = p.sign_in(scopes=B2C_SCOPES, authority=mock.url + b2c_path("B2C_1_reset"))
    assert r["account"]["homeAccountId"] == b2c_home_account_id("B2C_1_reset")


def test_b2c_host_not_in_known_authorities(launch, mock):
    # Configured authority on 127.0.0.1 (known); a request names the same B2C tenant on
    # localhost, which is not listed.
    p = launch(authority=mock.url + b2c_path(SUSI), knownAuthorities=["127.0.0.1"])
    other = mock.url.replace("127.0.0.1", "localhost") + b2c_path(EDIT)
    p.error("acquireToken", {"scopes": B2C_SCOPES, "authority": other}, -51008, name="authorityNotTrusted")
    assert mock.admin.count("authorize") == 0
    # Also silently, for a signed-in account.
    p.sign_in(scopes=B2C_SCOPES)
    mock.admin.counts__reset()
    p.error("acquireTokenSilent", {"scopes": B2C_SCOPES, "authority": other,
                                   "account": {"homeAccountId": b2c_home_account_id(SUSI)}},
            -51008, name="authorityNotTrusted")
    assert token_calls(mock) == {}
    # Configured B2C authority whose host is not listed at all.
    mock.admin.counts__reset()
    q = launch(authority=mock.url + b2c_path(SUSI), knownAuthorities=["b2c.example.com"])
    q.error("acquireToken", {"scopes": B2C_SCOPES}, -51008, name="authorityNotTrusted")
    counts = mock.admin.counts()
    assert counts.get("authorize", 0) == 0 and counts.get("openid-configuration", 0) == 0, counts


def test_b2c_client_id_as_the_scope(launch, mock):
    """B2C's idiom `scopes: [clientId]`: an ID token and refresh token for the app itself
    (MSAL accepts it); the token is then served from the cache and refreshed silently."""
    from authorities_e2e import CLIENT_ID
    p = launch(authority=mock.url + b2c_path(SUSI), knownAuthorities=["127.0.0.1"])
    first = p.sign_in(scopes=[CLIENT_ID])
    assert first["account"]["username"] == DAVE and first.get("idToken")
    assert jwt_claims(first["accessToken"])["aud"] == CLIENT_ID
    mock.admin.counts__reset()
    again = p.silent(scopes=[CLIENT_ID])
    assert again["fromCache"] is True and again["accessToken"] == first["accessToken"]
    assert token_calls(mock) == {}
    fresh = p.silent(scopes=[CLIENT_ID], forceRefresh=True)
    assert fresh["fromCache"] is False and fresh["scopes"] == [CLIENT_ID]
