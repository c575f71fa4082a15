"""The issue's scenario, end to end: the real binary over real pipes, the mock over HTTPS.

initialize -> acquireToken (browser) -> acquireTokenSilent from the cache -> the access
token expires -> ONE refresh (also for 50 concurrent silent requests) -> refresh token
revoked -> -50002 invalid_grant -> device-code sign-in of a second user -> two accounts ->
signout of one -> getCurrentAccount reports the previous account -> restart on the same
cache file: the cache is still there.
"""
from __future__ import annotations

import sidecar as sc
from auth_e2e import ALICE, BOB, CONTOSO_TID, SCOPES, read_cache

# The sidecar treats a token within 5 minutes of expiry as expired: a 240 s token is
# "expired" the moment it arrives, a 3600 s one is fresh.
SHORT = 240
LONG = 3600


def usernames(result):
    return sorted(a["username"] for a in result["accounts"])


def expire_cached_token(p, mock, account=None):
    """Replace the cached access token with one the sidecar must consider expired
    (forceRefresh while the mock issues short-lived tokens); then long-lived again."""
    mock.admin.config(access_token_lifetime=SHORT)
    params = {"forceRefresh": True}
    if account:
        params["account"] = account
    r = p.silent(**params)
    assert r["fromCache"] is False, r
    mock.admin.config(access_token_lifetime=LONG)
    return r


def test_sign_in_then_silent_from_cache(launch, mock):
    p = launch()
    first = p.sign_in()
    assert first["fromCache"] is False
    assert first["tokenType"] == "Bearer"
    assert first["account"]["username"] == ALICE
    assert first["account"]["tenantId"] == CONTOSO_TID
    assert first["tenantId"] == CONTOSO_TID
    assert [s.lower() for s in first["scopes"]] == ["user.read"], first["scopes"]
    assert first["idToken"] and first["correlationId"]
    assert mock.admin.count("token:authorization_code") == 1
    before = mock.counts()

    again = p.silent()
    assert again["fromCache"] is True, again
    assert again["accessToken"] == first["accessToken"]
    assert again["account"]["homeAccountId"] == first["account"]["homeAccountId"]
    assert mock.counts() == before, "a silent request served from the cache called the token endpoint"


def test_expired_token_refreshed_exactly_once(launch, mock):
    p = launch()
    p.sign_in()
    refreshed_short = expire_cached_token(p, mock)
    assert mock.admin.count("token:refresh_token") == 1

    r = p.silent()
    assert r["fromCache"] is False, f"an expired token was served from the cache: {r}"
    assert r["accessToken"] != refreshed_short["accessToken"]
    assert mock.admin.count("token:refresh_token") == 2, mock.admin.counts()

    again = p.silent()
    assert again["fromCache"] is True and again["accessToken"] == r["accessToken"]
    assert mock.admin.count("token:refresh_token") == 2


def test_fifty_concurrent_silent_requests_share_one_refresh(launch, mock):
    p = launch()
    p.sign_in()
    expire_cached_token(p, mock)
    assert mock.admin.count("token:refresh_token") == 1
    # Make the refresh slow enough that all 50 requests are surely waiting on it.
    mock.admin.fault(endpoint="token:refresh_token", type="latency", delay_ms=500, times=1)

    ids = [p.next_id() for _ in range(50)]
    p.send_many([sc.req("acquireTokenSilent", {"scopes": SCOPES}, i) for i in ids])
    replies = [p.wait_for(i, 20) for i in ids]
    results = [sc.assert_result(r) for r in replies]
    tokens = {r["accessToken"] for r in results}
    assert len(tokens) == 1, f"{len(tokens)} different tokens for 50 concurrent silent requests"
    assert mock.admin.count("token:refresh_token") == 2, \
        f"50 concurrent silent requests caused {mock.admin.count('token:refresh_token') - 1} refreshes (expected 1)"

    after = p.silent()
    assert after["fromCache"] is True and after["accessToken"] in tokens


def test_revoked_refresh_token_needs_interaction(launch, mock):
    p = launch()
    p.sign_in()
    expire_cached_token(p, mock)
    mock.admin.revoke(username=ALICE)
    e = p.error("acquireTokenSilent", {"scopes": SCOPES}, -50002, name="interactionRequired")
    assert e["data"].get("oauthError") == "invalid_grant", e
    assert e["data"].get("errorCodes") == [700082], e


def test_full_scenario(launch, mock, tmp_path):
    cache = str(tmp_path / "scenario" / "cache.json")
    p = launch(cache=cache)

    # 1. Browser sign-in, then silent from the cache.
    alice = p.sign_in()
    alice_ref = {"homeAccountId": alice["account"]["homeAccountId"]}
    assert alice["fromCache"] is False and alice["account"]["username"] == ALICE
    cached = p.silent()
    assert cached["fromCache"] is True and cached["accessToken"] == alice["accessToken"]
    assert mock.admin.count("token:refresh_token") == 0

    # 2. The access token expires: exactly one refresh, also for 50 requests at once.
    expire_cached_token(p, mock)
    refreshes = mock.admin.count("token:refresh_token")
    mock.admin.fault(endpoint="token:refresh_token", type="latency", delay_ms=300, times=1)
    ids = [p.next_id() for _ in range(50)]
    p.send_many([sc.req("acquireTokenSilent", {"scopes": SCOPES}, i) for i in ids])
    results = [sc.assert_result(p.wait_for(i, 20)) for i in ids]
    assert len({r["accessToken"] for r in results}) == 1
    assert mock.admin.count("token:refresh_token") == refreshes + 1, mock.admin.counts()

    # 3. The refresh token is revoked: silent needs the user.
    expire_cached_token(p, mock)
    mock.admin.revoke(username=ALICE)
    e = p.error("acquireTokenSilent", {"scopes": SCOPES}, -50002, name="interactionRequired")
    assert e["data"].get("oauthError") == "invalid_grant", e

    # 4. A second user signs in with a device code.
    mock.admin.config(device_code_interval=1)
    bob = p.device_sign_in(BOB)
    assert bob["account"]["username"] == BOB and bob["fromCache"] is False
    assert usernames(p.ok("getAccounts")) == [ALICE, BOB]
    current = p.ok("getCurrentAccount")
    assert current["account"]["username"] == BOB, current

    # 5. Sign bob out: the previous account is reported.
    out = p.ok("signout", {"account": {"username": BOB}})
    assert out["signedOut"] is True and out["account"]["username"] == BOB, out
    assert usernames(p.ok("getAccounts")) == [ALICE]
    current = p.ok("getCurrentAccount")
    assert current["previousAccount"] and current["previousAccount"]["username"] == BOB, current
    assert current["account"] is None or current["account"]["username"] == ALICE, current
    again = p.ok("getCurrentAccount")
    assert again["previousAccount"] is None, f"previousAccount reported twice: {again}"

    # 6. Alice signs in again (her refresh token was revoked), then the process restarts.
    alice2 = p.sign_in(loginHint=ALICE)
    assert alice2["account"]["homeAccountId"] == alice_ref["homeAccountId"]
    rest, code = p.finish()
    assert code == 0 and rest == [], (code, rest)
    assert len(read_cache(cache).get("Account", {})) >= 1

    before = mock.counts()
    q = launch(cache=cache)
    assert usernames(q.ok("getAccounts")) == [ALICE]
    assert q.ok("getCurrentAccount")["account"]["username"] == ALICE
    r = q.silent(account=alice_ref)
    assert r["fromCache"] is True and r["accessToken"] == alice2["accessToken"], r
    r = q.silent()
    assert r["fromCache"] is True and r["accessToken"] == alice2["accessToken"], r
    assert mock.counts() == before, "the restarted sidecar called the token endpoint for a cached token"
