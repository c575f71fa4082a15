"""What a provider answers is checked before it is believed (issue 10, items 5 and 6):
token responses validated before the cache, an empty 400 on refresh is interaction
required, an unknown tenant is invalidAuthority in the service's words; a token_type other
than Bearer is refused (issue 19, item 10)."""
from __future__ import annotations

import json

from auth_e2e import CLIENT_ID, SCOPES, SIGN_IN, read_cache

TOKENS = ("AccessToken", "RefreshToken", "IdToken", "Account")


def token_sections(path) -> str:
    cache = read_cache(path)
    return json.dumps({k: cache.get(k) for k in TOKENS}, sort_keys=True)


def test_refused_token_responses_leave_the_cache_unchanged(launch, mock, tmp_path):
    path = str(tmp_path / "cache" / "cache.json")
    p = launch(cache=path)
    p.sign_in()
    before = token_sections(path)
    for body, what in [({"access_token": "x" * (70 * 1024), "token_type": "Bearer", "expires_in": 3600}, "access_token"),
                       ({"access_token": "at-new", "token_type": "Bearer", "expires_in": "soon"}, "expires_in"),
                       ({"access_token": "at-new", "token_type": "Bearer", "refresh_token": 42}, "refresh_token"),
                       ({"token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-new"}, "access_token"),
                       ({"access_token": "at-new", "token_type": "pop", "expires_in": 3600}, "token_type")]:
        mock.admin.fault(endpoint="token:refresh_token", type="status", status=200, body=body)
        e = p.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -51004, name="malformedResponse",
                    timeout=30)
        assert what in e["message"] and "xxxx" not in e["message"], e
        assert token_sections(path) == before, what
    assert p.silent()["fromCache"] is True, "the cached token still serves"


def test_an_empty_400_on_refresh_is_interaction_required(launch, mock):
    p = launch()
    p.sign_in()
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=400, body="")
    e = p.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -50002, name="interactionRequired")
    assert e["data"].get("httpStatus") == 400, e
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=400, body={"error": "invalid_grant"})
    p.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -50002, name="interactionRequired")


def test_an_unknown_tenant_is_an_invalid_authority_in_the_services_words(launch, mock):
    p = launch(authority=mock.url + "/nowhere.example")
    e = p.error("acquireToken", {"scopes": SCOPES}, -51010, name="invalidAuthority", timeout=SIGN_IN)
    assert "AADSTS90002" in e["message"] and "nowhere.example" in e["message"], e
    assert "answered HTTP" not in e["message"], e
    assert e["data"].get("oauthError") == "invalid_tenant" and 90002 in e["data"].get("errorCodes", []), e
    assert e["data"].get("httpStatus") == 400, e


def test_no_swift_enum_text_in_a_browser_error(launch, mock, tmp_path):
    p = launch(env={"BROWSER": str(tmp_path / "no-such-browser")})
    e = p.error("acquireToken", {"scopes": SCOPES}, -51006, name="browserUnavailable", timeout=SIGN_IN)
    assert "no-such-browser" in e["message"], e
    assert "unavailable(" not in e["message"] and "BrowserError" not in e["message"], e
    assert CLIENT_ID not in e["message"], "never the authorize URL"
