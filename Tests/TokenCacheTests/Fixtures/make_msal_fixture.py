#!/usr/bin/env python3
"""Writes msal_python_cache.json: a token cache as MSAL for Python (msal.SerializableTokenCache)
serializes it after two sign-ins, one of them a FOCI (family) client, plus an unknown
top-level section another SDK might keep. Regenerate with:

    python3 Tests/TokenCacheTests/Fixtures/make_msal_fixture.py

The tokens are fake (the ID token is an unsigned JWT: the cache only decodes it).
"""
import base64
import json
import os

import msal

NOW = 1700000000  # fixed, so the fixture is reproducible


def b64url(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def id_token(claims):
    return "{}.{}.".format(b64url({"alg": "none", "typ": "JWT"}), b64url(claims))


def response(uid, utid, username, name, scope, secret, foci=None):
    claims = {"iss": "https://login.microsoftonline.com/{}/v2.0".format(utid),
              "sub": "sub-" + uid, "oid": uid, "tid": utid,
              "preferred_username": username, "name": name,
              "aud": "client", "iat": NOW, "exp": NOW + 3600}
    r = {"access_token": "at-" + secret, "refresh_token": "rt-" + secret,
         "id_token": id_token(claims), "token_type": "Bearer",
         "client_info": b64url({"uid": uid, "utid": utid}),
         "expires_in": 3600, "ext_expires_in": 7200, "refresh_in": 1800,
         "scope": scope}
    if foci:
        r["foci"] = foci
    return r


def main():
    cache = msal.SerializableTokenCache()
    tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    cache.add({
        "client_id": "11111111-1111-1111-1111-111111111111",
        "scope": ["User.Read", "Mail.Read"],
        "token_endpoint": "https://login.microsoftonline.com/{}/oauth2/v2.0/token".format(tenant),
        "grant_type": "authorization_code",
        "response": response("aaaaaaaa-0000-0000-0000-000000000001", tenant,
                             "alice@contoso.com", "Alice", "User.Read Mail.Read", "alice"),
    }, now=NOW)
    cache.add({
        "client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46",  # a family client
        "scope": ["https://management.azure.com//.default"],
        "token_endpoint": "https://login.microsoftonline.com/{}/oauth2/v2.0/token".format(tenant),
        "grant_type": "device_code",
        "response": response("bbbbbbbb-0000-0000-0000-000000000002", tenant,
                             "bob@contoso.com", "Bob",
                             "https://management.azure.com//.default", "bob", foci="1"),
    }, now=NOW)
    state = json.loads(cache.serialize())
    state["OtherSdkSection"] = {"kept": {"by": "another SDK", "n": 1}}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msal_python_cache.json")
    with open(out, "w") as f:
        json.dump(state, f, indent=4)
        f.write("\n")
    print(out)


if __name__ == "__main__":
    main()
