"""Microsoft's own broker client, unmodified: MSAL for Python (PyPI msal) with MSALRuntime
(PyPI pymsalruntime, `enable_broker_on_linux=True`), run by test_broker_msalruntime.py against
the stand-in broker on a private session bus. It prints one JSON object: each step's result
(token answers reduced to what the test checks; never a whole token on stderr).

Steps (argv[1], comma-separated): interactive, accounts, silent, claims, force, remove, and
popinteractive, popsilent: a proof-of-possession token through MSALRuntime's own `set_pop_params`
(msal.broker's calls with an `msal.PopAuthScheme`, which MSAL for Python's public API refuses on
Linux: "POP is not supported on Linux"; the request to the broker is MSALRuntime's).
Tenant discovery is answered here (MSAL for Python asks it before anything); every other HTTP
request is refused and listed under "http" (the broker does the rest)."""
from __future__ import annotations

import json
import sys

import msal

CLIENT_ID = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
AUTHORITY = "https://login.microsoftonline.com/organizations"
SCOPES = ["https://graph.microsoft.com/User.Read"]
POP_URL = "https://pop.example.test/resource/items?x=1"
POP_NONCE = "nonce-from-the-resource"
CLAIMS = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'


class Answer:
    def __init__(self, status: int, text: str):
        self.status_code, self.text, self.headers = status, text, {}

    def raise_for_status(self):
        if self.status_code >= 400:
            raise RuntimeError(f"HTTP {self.status_code}")


class Offline:
    """MSAL's http_client: tenant discovery only."""
    asked: list[str] = []

    def get(self, url, **_):
        self.asked.append(url)
        if url.endswith("/.well-known/openid-configuration"):
            return Answer(200, json.dumps({
                "authorization_endpoint": AUTHORITY + "/oauth2/v2.0/authorize", "token_endpoint": AUTHORITY + "/oauth2/v2.0/token",
                "device_authorization_endpoint": AUTHORITY + "/oauth2/v2.0/devicecode",
                "issuer": "https://login.microsoftonline.com/{tenantid}/v2.0"}))
        return Answer(500, "{}")

    def post(self, url, **_):
        self.asked.append(url)
        return Answer(500, "{}")

    def close(self):
        pass


def summary(result: dict | None) -> dict | None:
    if result is None:
        return None
    keep = ("error", "error_description", "token_source", "token_type", "scope", "_account_id")
    out = {k: result[k] for k in keep if k in result}
    if "access_token" in result:
        out["access_token"] = result["access_token"]
    if "id_token_claims" in result:
        out["username"] = result["id_token_claims"].get("preferred_username")
    return out


def main() -> int:
    steps = sys.argv[1].split(",")
    http = Offline()
    app = msal.PublicClientApplication(CLIENT_ID, authority=AUTHORITY, enable_broker_on_linux=True,
                                       instance_discovery=False, http_client=http)
    out: dict = {}
    account = None
    for step in steps:
        if step == "interactive":
            out[step] = summary(app.acquire_token_interactive(
                SCOPES, parent_window_handle=app.CONSOLE_WINDOW_HANDLE, login_hint="alice@contoso.com"))
        elif step == "accounts":
            accounts = app.get_accounts()
            account = accounts[0] if accounts else None
            out[step] = [{"username": a["username"], "home_account_id": a["home_account_id"],
                          "account_source": a.get("account_source")} for a in accounts]
        elif step == "silent":
            out[step] = summary(app.acquire_token_silent_with_error(SCOPES, account))
        elif step == "claims":
            out[step] = summary(app.acquire_token_silent_with_error(SCOPES, account, claims_challenge=CLAIMS))
        elif step == "force":
            out[step] = summary(app.acquire_token_silent_with_error(SCOPES, account, force_refresh=True))
        elif step in ("popinteractive", "popsilent"):
            from msal import broker
            scheme = msal.PopAuthScheme(http_method="POST", url=POP_URL, nonce=POP_NONCE)
            if step == "popinteractive":
                out[step] = summary(broker._signin_interactively(
                    AUTHORITY, CLIENT_ID, SCOPES, None, login_hint="alice@contoso.com", auth_scheme=scheme))
            else:
                accounts = app.get_accounts()
                out[step] = summary(broker._acquire_token_silently(
                    AUTHORITY, CLIENT_ID, accounts[0]["local_account_id"], SCOPES, auth_scheme=scheme))
        elif step == "remove":
            app.remove_account(account)
            out[step] = [a["username"] for a in app.get_accounts()]
    out["http"] = [u for u in http.asked if not u.endswith("/.well-known/openid-configuration")]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
