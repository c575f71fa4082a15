"""Family refresh tokens (FOCI) across client ids sharing one cache file, as MSAL uses them:
a second client of the family refreshes with the family's token; a client outside the family
is told client_mismatch once and asked to sign in."""
from __future__ import annotations

from auth_e2e import ALICE


def test_a_family_token_serves_a_second_client_and_stops_at_client_mismatch(launch, mock, tmp_path):
    mock.admin.config(foci="1")
    mock.admin.clients(client_id="family-app-2", family="1")
    mock.admin.clients(client_id="lonely-app")
    cache = str(tmp_path / "shared" / "cache.json")
    first = launch(cache=cache)
    first.sign_in(loginHint=ALICE)
    account = {"username": ALICE}

    mock.admin.counts__reset()
    mock.admin.log__clear()
    sibling = launch(cache=cache, clientId="family-app-2")
    got = sibling.silent(account=account)
    assert got["fromCache"] is False and got["account"]["username"] == ALICE
    assert mock.admin.count("token:refresh_token") == 1
    assert [r["form"]["client_id"] for r in mock.admin.log("token")] == ["family-app-2"]
    assert sibling.silent(account=account)["fromCache"] is True

    mock.admin.counts__reset()
    lonely = launch(cache=cache, clientId="lonely-app")
    e = lonely.error("acquireTokenSilent", {"scopes": ["User.Read"], "account": account}, -50002,
                     name="interactionRequired")
    assert e["data"].get("suberror") == "client_mismatch", e
    assert mock.admin.count("token:refresh_token") == 1, "one try with the family token, then stop"
