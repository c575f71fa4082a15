#!/usr/bin/env python3
"""Loads a cache file written by the Swift TokenCache with MSAL for Python and prints, as
JSON, what MSAL sees: the accounts PublicClientApplication.get_accounts() lists, and the
access token / refresh token acquire_token_silent finds (no network: the token is fresh).

    msal_reads_cache.py PATH CLIENT_ID AUTHORITY SCOPE...
"""
import json
import sys

import msal


class OfflineHTTP:
    """Answers only OpenID discovery, so MSAL needs no network (the token comes from cache)."""

    class Response:
        def __init__(self, status_code, body):
            self.status_code, self.text, self.headers = status_code, json.dumps(body), {}

        def raise_for_status(self):
            if self.status_code >= 400:
                raise RuntimeError(self.text)

    def get(self, url, **kwargs):
        if "openid-configuration" in url:
            base = url.split("/v2.0/.well-known")[0]
            return self.Response(200, {
                "authorization_endpoint": base + "/oauth2/v2.0/authorize",
                "token_endpoint": base + "/oauth2/v2.0/token",
                "issuer": base + "/v2.0",
                "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode"})
        return self.Response(404, {"error": "offline"})

    def post(self, url, **kwargs):
        return self.Response(400, {"error": "offline", "error_description": "no network in this test"})

    def close(self):
        pass


def main():
    path, client_id, authority, scopes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    cache = msal.SerializableTokenCache()
    with open(path) as f:
        cache.deserialize(f.read())
    app = msal.PublicClientApplication(
        client_id, authority=authority, token_cache=cache, http_client=OfflineHTTP(),
        instance_discovery=False)
    accounts = app.get_accounts()
    result = app.acquire_token_silent(scopes, account=accounts[0]) if accounts else None
    rts = list(cache.search(msal.TokenCache.CredentialType.REFRESH_TOKEN,
                            query={"client_id": client_id}))
    print(json.dumps({
        "accounts": [{"home_account_id": a["home_account_id"], "username": a["username"]}
                     for a in accounts],
        "access_token": (result or {}).get("access_token"),
        "token_source": (result or {}).get("token_source"),
        "refresh_tokens": [rt["secret"] for rt in rts],
        "other_section": json.loads(cache.serialize()).get("AuthSidecar"),
    }))


if __name__ == "__main__":
    main()
