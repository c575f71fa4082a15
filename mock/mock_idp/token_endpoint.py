"""/{tenant}/oauth2/v2.0/token: authorization_code, refresh_token and device_code grants
(client_credentials with a client assertion: federation.py)."""

import base64
import hashlib
import hmac
import time

from . import devicecode, federation, pop, sessions, sshca
from .errors import OAuthError
from .http_util import json_response
from .issue import issue, parse_scopes
from .issuers import issue_tokens

CODE_LIFETIME = 600


def handle(app, req, ctx):
    state, p = app.state, req.param
    grant_type = p("grant_type")
    if not grant_type:
        raise OAuthError("missing_parameter", param="grant_type")
    client_id = p("client_id")
    if not client_id:
        raise OAuthError("missing_parameter", param="client_id")
    if client_id not in state.clients:
        raise OAuthError("unknown_client", client_id=client_id, tenant=ctx.tenant_id())
    if grant_type == "client_credentials" and not ctx.issuer_name:
        return federation.client_credentials(app, req, ctx)
    handlers = {"authorization_code": _authorization_code, "refresh_token": _refresh_token,
                "urn:ietf:params:oauth:grant-type:device_code": devicecode.redeem,
                "device_code": devicecode.redeem}
    if grant_type not in handlers:
        raise OAuthError("unsupported_grant_type", grant_type=grant_type)
    ssh_key = sshca.request_key(req) if sshca.requested(req) and not ctx.issuer_name else None
    pop_kid = pop.request_kid(req) if pop.requested(req) and not ctx.issuer_name else None
    with state.lock:
        grant = handlers[grant_type](app, req, ctx)
        if pop_kid:
            grant["cnf"] = {"kid": pop_kid}
        if ssh_key:
            sshca.check_consent(state, grant["client_id"])
        response = (issue_tokens if ctx.issuer_name else issue)(app, req, ctx, grant)
        if ssh_key:
            sshca.certify(app, response, grant["user"], *ssh_key, scope=grant["scope"])
        return json_response(response)


def _pkce_ok(verifier, challenge):
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return hmac.compare_digest(expected, challenge)


def _authorization_code(app, req, ctx):
    state, p = app.state, req.param
    code = p("code")
    if not code:
        raise OAuthError("missing_parameter", param="code")
    record = state.codes.get(code)
    if record is None or record["client_id"] != p("client_id") \
            or record["issuer_name"] != ctx.issuer_name \
            or state.now() - record["created"] > CODE_LIFETIME:
        raise OAuthError("bad_code")
    if record["used"]:
        raise OAuthError("code_redeemed")
    record["used"] = True   # single use, even when the redemption below fails
    if p("redirect_uri") != record["redirect_uri"]:
        raise OAuthError("code_redirect_mismatch", redirect_uri=p("redirect_uri") or "")
    if record["challenge"] is not None:
        verifier = p("code_verifier")
        if not verifier:
            raise OAuthError("missing_parameter", param="code_verifier")
        if not _pkce_ok(verifier, record["challenge"]):
            raise OAuthError("pkce_mismatch")
    user = state.users.get(record["oid"])
    if user is None:
        raise OAuthError("bad_code")
    return {"user": user, "client_id": record["client_id"], "scope": p("scope") or record["scope"],
            "nonce": record["nonce"], "claims": p("claims") or record["claims"], "mfa": True,
            "auth_time": record["auth_time"]}


def _refresh_token(app, req, ctx):
    state, p, now = app.state, req.param, app.state.now()
    rt = p("refresh_token")
    if not rt:
        raise OAuthError("missing_parameter", param="refresh_token")
    record = state.refresh_tokens.get(rt)
    if record is None:
        raise OAuthError("bad_refresh_token")
    if record["client_id"] != p("client_id") and not (
            record["family"] and state.clients.get(p("client_id"), {}).get("family") == record["family"]):
        # Another client's token: a family token presented by a non-member is client_mismatch.
        if record["family"]:
            raise OAuthError("client_mismatch", suberror="client_mismatch")
        raise OAuthError("bad_refresh_token")
    user = state.users.get(record["oid"])
    if user is None:
        raise OAuthError("bad_refresh_token")
    if record["policy"] != ctx.policy or record["issuer_name"] != ctx.issuer_name:
        raise OAuthError("bad_refresh_token")
    if record["revoked"] or record["issued"] < user["rt_valid_after"]:
        if ctx.b2c:
            raise OAuthError("b2c_rt_expired")
        raise OAuthError(user["revoke_reason"], issued=_stamp(record["issued"]),
                         inactive="revoked")
    if now - record["last_used"] > state.config["refresh_token_lifetime"]:
        raise OAuthError("b2c_rt_expired" if ctx.b2c else "rt_expired",
                         issued=_stamp(record["issued"]),
                         inactive="%d seconds" % (now - record["last_used"]))
    scope = p("scope") or record["scope"]
    resource, names, _ = parse_scopes(scope, p("client_id"))
    pending = sessions.pending_interaction(user, record["auth_time"], record["mfa"])
    if pending:
        claims = sessions.interaction_claims() if pending != "ca_blocked" else None
        raise OAuthError(pending, suberror="message_only" if pending == "ca_blocked" else "basic_action",
                         claims=claims, resource=resource or "")
    consented = state.consented(user["oid"], record["client_id"])   # FOCI: the family's consent
    missing = [n for n in names if n.lower() != ".default" and n.lower() not in consented]
    if missing:
        raise OAuthError("consent_required", suberror="consent_required", client_id=p("client_id"))
    if record["client_id"] != p("client_id"):
        state.consented(user["oid"], p("client_id")).update(consented)
    record["last_used"] = now
    if not state.config["refresh_token_reuse"]:
        record["revoked"] = True
    return {"user": user, "client_id": p("client_id"), "scope": scope,
            "claims": p("claims") or record["claims"], "mfa": record["mfa"],
            "auth_time": record["auth_time"]}


def _stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
