"""Generic (not Microsoft-shaped) OpenID Connect issuers at /issuers/{name}.

Each has its own EC P-256 key (ES256) and issuer ``{base}/issuers/{name}``; they share the
directory, browser sessions, consent and the authorize / token / device code logic with the
Microsoft-shaped endpoints, but answer like a plain OpenID provider: ``token_type`` ``bearer``,
no ``client_info``, ID tokens without ``oid`` / ``tid``, RFC 6749 error bodies. Codes, device
codes and refresh tokens only work at the issuer that issued them.
"""

import hashlib
import re
import secrets

from .http_util import json_response
from .issue import store_refresh_token
from .jwtsign import ECSigner
from .tamper import sign_id_token
from .tenancy import IssuerCtx

NAME = re.compile(r"[A-Za-z0-9-]{1,32}\Z")  # case-sensitive, as paths are: "A" and "a" are two

# path below /issuers/{name}/ -> endpoint key (the same keys as the Microsoft-shaped endpoints)
ENDPOINT_KEYS = {".well-known/openid-configuration": "openid-configuration", "jwks": "jwks",
                 "authorize": "authorize", "token": "token", "device": "devicecode",
                 "logout": "logout"}


def context(state, name):
    """The IssuerCtx of a known issuer, else None."""
    return IssuerCtx(name) if name in state.issuers else None


def add(app, name):
    """Create the issuer `name` (idempotent); return its description."""
    if not isinstance(name, str) or not NAME.match(name):
        raise ValueError("issuer name must match [A-Za-z0-9-]{1,32}")
    app.state.issuers.setdefault(name, {"name": name})
    return describe(app, name)


def describe(app, name):
    issuer = IssuerCtx(name).issuer(app.base_url)
    return {"name": name, "issuer": issuer,
            "discovery": issuer + "/.well-known/openid-configuration",
            "kid": signer(app, name).kid}


def signer(app, name):
    """The issuer's key: made on first use, kept across resets (a re-added name gets it back)."""
    with app.state.lock:
        if name not in app.issuer_signers:
            app.issuer_signers[name] = ECSigner()
        return app.issuer_signers[name]


def openid_configuration(app, req, ctx):
    issuer = ctx.issuer(app.base_url)
    return json_response({
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "device_authorization_endpoint": issuer + "/device",
        "jwks_uri": issuer + "/jwks",
        "end_session_endpoint": issuer + "/logout",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query", "fragment", "form_post"],
        "grant_types_supported": ["authorization_code", "refresh_token",
                                  "urn:ietf:params:oauth:grant-type:device_code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["openid", "profile", "email", "offline_access"],
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nbf", "auth_time", "nonce",
                             "name", "preferred_username", "email", "email_verified"],
    })


def jwks(app, req, ctx):
    return json_response(signer(app, ctx.issuer_name).jwks())


def subject(name, user):
    """`sub`: stable per user and issuer, different at each issuer."""
    return hashlib.sha256(("%s\n%s" % (name, user["oid"])).encode()).hexdigest()[:32]


def issue_tokens(app, req, ctx, grant):
    """The token response of a generic issuer (see issue.issue for the grant's fields)."""
    state, cfg, now = app.state, app.state.config, int(app.state.now())
    user, client_id, key = grant["user"], grant["client_id"], signer(app, ctx.issuer_name)
    declined = {s.lower() for s in cfg["declined_scopes"]}
    scopes = [s for s in dict.fromkeys(grant["scope"].split()) if s.lower() not in declined]
    lowered = {s.lower() for s in scopes}
    issuer, sub, life = ctx.issuer(app.base_url), subject(ctx.issuer_name, user), \
        int(cfg["access_token_lifetime"])
    access = {"iss": issuer, "sub": sub, "aud": client_id, "client_id": client_id,
              "scope": " ".join(scopes), "iat": now, "nbf": now, "exp": now + life,
              "jti": secrets.token_urlsafe(16)}
    response = {"token_type": "bearer", "access_token": key.sign(access, typ="at+jwt"),
                "expires_in": life, "scope": " ".join(scopes)}
    if "openid" in lowered:
        id_life = int(cfg["id_token_lifetime"])
        claims = {"iss": issuer, "sub": sub, "aud": client_id, "exp": now + id_life, "iat": now,
                  "nbf": now, "auth_time": int(grant.get("auth_time", now)),
                  "preferred_username": user["username"], "name": user["name"],
                  "email": user["username"], "email_verified": True}
        if grant.get("nonce"):
            claims["nonce"] = grant["nonce"]
        response["id_token"] = sign_id_token(app, key, claims)
    if "offline_access" in lowered:
        response["refresh_token"] = store_refresh_token(state, ctx, grant, now)
    return response
