"""Scopes, and the token response (access token, ID token, client_info, refresh token)."""

import hashlib
import json
import secrets
import uuid

from .errors import OAuthError
from .jwtsign import b64url
from .tamper import sign_id_token

OIDC_SCOPES = {"openid", "profile", "offline_access", "email"}
GRAPH = "https://graph.microsoft.com"
GRAPH_AUDIENCES = {GRAPH, GRAPH + "/", "00000003-0000-0000-c000-000000000000"}


def parse_scopes(scope, client_id):
    """Split a scope string into (resource, [resource scopes], [OIDC scopes]).

    Bare names ("User.Read") and https://graph.microsoft.com/X belong to Graph;
    "api://app/x" or "https://host/app/x" to that resource, and so does "GUID/x" (an app ID
    as the resource, e.g. Azure DevOps' and AKS's "<app id>/.default"); the client id alone
    to the app.
    """
    resource, names, oidc = None, [], []
    for item in (scope or "").split():
        if item.lower() in OIDC_SCOPES:
            oidc.append(item.lower())
            continue
        if item == client_id:
            res, name = client_id, None
        elif "://" in item or "/" in item:
            res, name = item.rsplit("/", 1)
            if res.rstrip("/").lower() == GRAPH:
                res = GRAPH
        else:
            res, name = GRAPH, item
        if resource is not None and res != resource:
            raise OAuthError("multiple_resources", scope=item)
        resource = res
        if name:
            names.append(name)
    return resource, names, oidc


def granted_scopes(state, user, client_id, resource, names):
    """The resource scopes to put in the token: .default expands; declined ones are left out."""
    consented = state.consented(user["oid"], client_id)
    if any(n.lower() == ".default" for n in names):
        names = sorted(consented) or ["User.Read"]
    declined = {s.lower() for s in state.config["declined_scopes"]}
    return [n for n in names if n.lower() not in declined]


def full_scope(resource, name):
    return name if resource == GRAPH else "%s/%s" % (resource, name)


def client_info(user, ctx_policy):
    uid = user["oid"] if not ctx_policy else "%s-%s" % (user["oid"], ctx_policy.lower())
    return b64url(json.dumps({"uid": uid, "utid": user["tid"]}))


def new_refresh_token():
    return "0.MOCK." + secrets.token_urlsafe(48)


def issue(app, req, ctx, grant):
    """Sign tokens for `grant` and return the token response dict.

    grant: {"user": user, "client_id", "scope" (string as requested), "nonce"?,
            "claims"?, "mfa": bool, "auth_time": t, "refresh_token"?: existing}
    """
    state, signer, base = app.state, app.signer, app.base_url
    cfg, now = state.config, int(state.now())
    user, client_id = grant["user"], grant["client_id"]
    resource, names, oidc = parse_scopes(grant["scope"], client_id)
    if resource is None:
        resource = client_id if ctx.b2c else GRAPH
        names = [] if ctx.b2c else ["User.Read"]
    names = granted_scopes(state, user, client_id, resource, names)
    at_life = int(cfg["access_token_lifetime"])
    issuer = ctx.issuer(base, user["tid"])
    acrs = _acrs(grant.get("claims"))

    at_claims = {
        "aud": resource, "iss": issuer, "iat": now, "nbf": now, "exp": now + at_life,
        "oid": user["oid"], "sub": user["oid"], "tid": user["tid"], "name": user["name"],
        "upn": user["username"], "preferred_username": user["username"],
        "scp": " ".join(names), "appid": client_id, "azp": client_id, "ver": "2.0",
        "idtyp": "user", "uti": secrets.token_urlsafe(16),
        "amr": ["pwd", "mfa"] if grant.get("mfa") else ["pwd"],
    }
    if acrs:
        at_claims["acrs"] = acrs
    if grant.get("cnf"):   # a proof-of-possession token (pop.py): bound to the key with this kid
        at_claims["cnf"] = grant["cnf"]
    if ctx.b2c:
        at_claims["tfp"] = ctx.policy
    response = {
        "token_type": "pop" if grant.get("cnf") else "Bearer",
        "scope": " ".join([full_scope(resource, n) for n in names] +
                          [s for s in oidc if s != "offline_access"]),
        "expires_in": at_life,
        "ext_expires_in": int(cfg["ext_expires_in"] or at_life),
        "access_token": signer.sign(at_claims),
    }
    if cfg["refresh_in"] is not None:
        response["refresh_in"] = int(cfg["refresh_in"])
    if "openid" in oidc or ctx.b2c:
        response["id_token"] = sign_id_token(app, signer, _id_claims(app, ctx, grant, issuer, now))
    if req.param("client_info") == "1":
        response["client_info"] = client_info(user, ctx.policy)
    if "offline_access" in oidc:
        response["refresh_token"] = store_refresh_token(state, ctx, grant, now)
        if ctx.b2c:
            response["refresh_token_expires_in"] = int(cfg["refresh_token_lifetime"])
    if ctx.b2c:
        response["id_token_expires_in"] = int(cfg["id_token_lifetime"])
        response["not_before"] = now
    client = state.clients.get(client_id, {})
    if cfg["foci"] and client.get("family"):
        response["foci"] = str(cfg["foci"])
    return response


def store_refresh_token(state, ctx, grant, now):
    """A new refresh token for `grant`, bound to the authority's policy and issuer."""
    rt, client_id = new_refresh_token(), grant["client_id"]
    state.refresh_tokens[rt] = {
        "oid": grant["user"]["oid"], "client_id": client_id, "scope": grant["scope"],
        "policy": ctx.policy, "segment": ctx.segment, "issuer_name": ctx.issuer_name,
        "issued": state.now(), "last_used": now, "mfa": bool(grant.get("mfa")),
        "auth_time": grant.get("auth_time", now), "claims": grant.get("claims"),
        "family": state.clients[client_id].get("family"), "revoked": False}
    return rt


def _id_claims(app, ctx, grant, issuer, now):
    user, client_id, cfg = grant["user"], grant["client_id"], app.state.config
    life = int(cfg["id_token_lifetime"])
    claims = {"aud": client_id, "iss": issuer, "iat": now, "nbf": now, "exp": now + life,
              "name": user["name"], "oid": user["oid"], "tid": user["tid"]}
    if grant.get("nonce"):
        claims["nonce"] = grant["nonce"]
    if ctx.b2c:
        claims.update({"ver": "1.0", "sub": user["oid"], "tfp": ctx.policy, "emails": [user["username"]],
                       "auth_time": int(grant.get("auth_time", now))})
        if cfg["b2c_preferred_username"]:
            claims["preferred_username"] = user["username"]
    else:
        pairwise = hashlib.sha256((user["oid"] + client_id).encode()).digest()
        claims.update({"ver": "2.0", "sub": b64url(pairwise[:24]),
                       "preferred_username": user["username"], "uti": str(uuid.uuid4())[:22],
                       "aio": b64url(secrets.token_bytes(24))})
    return claims


def _acrs(claims):
    """acrs values requested through the `claims` parameter (conditional access auth context)."""
    if not claims:
        return None
    try:
        values = json.loads(claims).get("access_token", {}).get("acrs", {})
        return values.get("values") or ([values["value"]] if "value" in values else None)
    except (ValueError, AttributeError):
        return None
