"""Origins: a token obtained at one origin (scheme, host, port) is never sent to, or returned
for, another, even when both share one cache file.

Two mocks on two ports of 127.0.0.1 (each with its own signing keys, so each one's Graph
accepts only its own tokens), one cache file: a sign-in at P1, then a process configured with
P2's authority on the same cache.
"""
from __future__ import annotations

import pytest

from auth_e2e import ALICE, SCOPES, Mock, cache_secrets, read_cache
from mock_idp.testing import AdminClient, start_mock, stop_mock


@pytest.fixture
def second_mock(tmp_path):
    url, ca_file, process = start_mock(tmp_path / "second-mock")
    yield Mock(url, ca_file, process, AdminClient(url, ca_file))
    stop_mock(process)


def both_cas(tmp_path, *mocks) -> str:
    """One CA file trusting every mock (each mock makes its own CA)."""
    path = tmp_path / "both-cas.pem"
    path.write_text("".join(open(m.ca_file, encoding="ascii").read() for m in mocks))
    return str(path)


def refresh_tokens_sent(mock) -> list[str]:
    return [r["form"].get("refresh_token") for r in mock.admin.log("token:refresh_token")]


def test_tokens_never_cross_ports(launch, mock, second_mock, tmp_path):
    cas = both_cas(tmp_path, mock, second_mock)
    env = {"SSL_CERT_FILE": cas, "SCRIPTED_BROWSER_CA": cas}
    cache = str(tmp_path / "shared" / "cache.json")

    def process(at: Mock):
        p = launch(initialize=False, env=env)
        p.mock = at
        p.initialize(cache=cache, authority=at.url + "/common", graphEndpoint=at.url + "/")
        return p

    p1 = process(mock)
    first = p1.sign_in(loginHint=ALICE)
    p1_refresh_token = cache_secrets(cache, "RefreshToken")[0]
    assert p1.ok("callGraph", {"path": "/me"})["status"] == 200

    p2 = process(second_mock)
    second_mock.admin.reset()
    # Nothing of P1's is returned for P2: no account, no ID token, no access token.
    assert p2.ok("getAccounts")["accounts"] == []
    assert p2.ok("getCurrentAccount").get("account") is None
    for force in (False, True):
        p2.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": force}, -50002, name="interactionRequired")
        p2.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": force, "account": {"username": ALICE}},
                 -51011)
    p2.error("callGraph", {"path": "/me"}, -50002, name="interactionRequired", timeout=20)
    # P2 never saw P1's refresh token, nor any Graph call.
    assert p1_refresh_token not in refresh_tokens_sent(second_mock)
    assert second_mock.admin.log("graph") == [], second_mock.admin.log("graph")
    assert second_mock.counts() == {}, second_mock.counts()

    # P2 signs in on its own: each origin then serves, refreshes and calls Graph with its own.
    second = p2.sign_in(loginHint=ALICE)
    assert second["accessToken"] != first["accessToken"]
    assert p2.silent()["accessToken"] == second["accessToken"]
    assert p2.ok("callGraph", {"path": "/me"})["status"] == 200  # P2's Graph takes only P2's tokens
    assert p1.silent()["accessToken"] == first["accessToken"]
    assert p1.ok("callGraph", {"path": "/me"})["status"] == 200
    assert len(cache_secrets(cache, "RefreshToken")) == 2  # P2's sign-in rotated none of P1's
    environments = {e["environment"] for e in read_cache(cache)["AccessToken"].values()}
    assert environments == {"127.0.0.1:" + u.rsplit(":", 1)[1] for u in (mock.url, second_mock.url)}, environments

    second_refresh_token = next(t for t in cache_secrets(cache, "RefreshToken") if t != p1_refresh_token)
    mock.admin.log__clear()
    second_mock.admin.log__clear()
    assert p1.silent(forceRefresh=True)["fromCache"] is False
    assert p2.silent(forceRefresh=True)["fromCache"] is False
    assert refresh_tokens_sent(mock) == [p1_refresh_token]
    assert refresh_tokens_sent(second_mock) == [second_refresh_token]
