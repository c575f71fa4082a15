"""Test controls under /_admin/ (JSON in, JSON out). See README.md for the full list."""

import uuid

from . import arm, devicecode, faults, federation, issuers as generic_issuers, sshca, tamper
from .http_util import json_response
from .state import DEFAULT_CONFIG, new_user


class AdminError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _user(state, body):
    user = state.find_user(body.get("username") or body.get("oid") or "")
    if user is None:
        raise AdminError(404, "no such user: %r" % (body.get("username") or body.get("oid")))
    return user


def get_state(app, req, body):
    s = app.state
    return {"config": s.config, "tenants": list(s.tenants.values()), "users": list(s.users.values()),
            "clients": list(s.clients.values()), "sessions": len(s.sessions),
            "clock_offset": s.clock_offset, "now": s.now(), "faults": s.faults,
            "refresh_tokens": len(s.refresh_tokens), "base_url": app.base_url,
            "issuers": [generic_issuers.describe(app, name) for name in s.issuers],
            "id_token_tamper": s.id_token_tamper}


def reset(app, req, body):
    app.state.reset()
    return {"reset": True}


def config(app, req, body):
    unknown = set(body) - set(DEFAULT_CONFIG)
    if unknown:
        raise AdminError(400, "unknown config keys: %s" % sorted(unknown))
    app.state.config.update(body)
    return app.state.config


def users(app, req, body):
    s = app.state
    user = s.find_user(body.get("username", ""))
    if user is None:
        tenant = s.find_tenant(body.get("tenant") or "contoso.com")
        if tenant is None:
            raise AdminError(404, "no such tenant: %r" % body.get("tenant"))
        user = new_user(body.get("oid") or str(uuid.uuid4()), body["username"],
                        body.get("name") or body["username"].split("@")[0], tenant["id"])
        s.users[user["oid"]] = user
    for key in ("name", "password"):
        if key in body:
            user[key] = body[key]
    return user


def delete_user(app, req, body):
    user = _user(app.state, body)
    del app.state.users[user["oid"]]
    return {"deleted": user["oid"]}


def tenants(app, req, body):
    tid = body.get("id") or str(uuid.uuid4())
    tenant = app.state.tenants.setdefault(tid, {"id": tid, "domains": [], "b2c": False,
                                                "policies": [], "msa": False})
    for key in ("domains", "b2c", "policies", "device_code_blocked"):
        if key in body:
            tenant[key] = body[key]
    return tenant


def clients(app, req, body):
    if not body.get("client_id"):
        raise AdminError(400, "client_id is required")
    client = app.state.clients.setdefault(body["client_id"], {
        "client_id": body["client_id"], "name": body.get("name", "test app"),
        "redirect_uris": ["http://localhost", "http://127.0.0.1"], "family": None})
    for key in ("redirect_uris", "family", "name"):
        if key in body:
            client[key] = body[key]
    return client


def consent(app, req, body):
    s = app.state
    user = _user(s, body)
    client_id = body.get("client_id") or next(iter(s.clients))
    granted = s.consented(user["oid"], client_id)
    scopes = {x.lower() for x in body.get("scopes", [])}
    action = body.get("action", "grant" if req.method == "POST" and scopes else "get")
    if action == "grant":
        granted.update(scopes)
    elif action == "revoke":
        granted.difference_update(scopes or set(granted))
    return {"username": user["username"], "client_id": client_id, "scopes": sorted(granted)}


def revoke(app, req, body):
    """Invalidate every refresh token issued so far to the user."""
    s = app.state
    user = _user(s, body)
    user["rt_valid_after"] = s.now() + 0.001
    user["revoke_reason"] = "rt_revoked" if body.get("reason") == "revoked" else "rt_expired"
    if body.get("sessions"):
        for session in s.sessions.values():
            if user["oid"] in session["users"]:
                session["users"].remove(user["oid"])
    return {"username": user["username"], "revoked_before": user["rt_valid_after"]}


def mfa(app, req, body):
    user = _user(app.state, body)
    user["mfa"] = {"since": app.state.now(), "code": int(body.get("code", 50076))} \
        if body.get("required", True) else None
    return {"username": user["username"], "mfa": user["mfa"]}


def conditional_access(app, req, body):
    user = _user(app.state, body)
    mode = body.get("mode", "interaction")
    if mode not in ("interaction", "block", "off"):
        raise AdminError(400, "mode must be interaction, block or off")
    user["ca"] = None if mode == "off" else {"mode": mode, "since": app.state.now()}
    return {"username": user["username"], "ca": user["ca"]}


def device(app, req, body):
    try:
        return devicecode.act(app.state, body.get("user_code"), body.get("action", "approve"),
                              body.get("username"))
    except KeyError as exc:
        raise AdminError(404, str(exc))


def clock(app, req, body):
    s = app.state
    if "offset" in body:
        s.clock_offset = float(body["offset"])
    s.clock_offset += float(body.get("advance", 0))
    return {"offset": s.clock_offset, "now": s.now()}


def add_fault(app, req, body):
    items = body.get("faults", [body]) if req.method == "POST" else []
    app.state.faults.extend(faults.validate(f) for f in items)
    return {"faults": app.state.faults}


def clear_faults(app, req, body):
    app.state.faults.clear()
    return {"faults": []}


def counts(app, req, body):
    return dict(app.state.counts)


def reset_counts(app, req, body):
    app.state.counts.clear()
    return {}


def log(app, req, body):
    want = req.query.get("endpoint")
    return {"requests": [r for r in app.state.log if not want or want in r["endpoints"]]}


def clear_log(app, req, body):
    app.state.log.clear()
    return {"requests": []}


def graph_challenge(app, req, body):
    claims = body.get("claims") or '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
    app.state.graph_challenge = {"claims": claims, "times": int(body.get("times", 1)),
                                 "until_satisfied": bool(body.get("until_satisfied"))}
    return app.state.graph_challenge


def authorize_next(app, req, body):
    from .authorize import OUTCOMES
    outcome = body.get("outcome")
    if outcome not in OUTCOMES:
        raise AdminError(400, "outcome must be one of %s" % sorted(OUTCOMES))
    app.state.authorize_outcomes.append(outcome)
    return {"queued": list(app.state.authorize_outcomes)}


def issuers(app, req, body):
    """POST {name}: add a generic issuer; GET (or POST without a name): list them."""
    if req.method == "POST" and "name" in body:
        generic_issuers.add(app, body.get("name"))
    return {"issuers": [generic_issuers.describe(app, name) for name in app.state.issuers]}


def id_token(app, req, body):
    """{tamper: signature|issuer|audience|expired|not_yet_valid|nonce|none, times?: 1}"""
    return tamper.arm(app.state, body.get("tamper"), body.get("times", 1))


def clear_sessions(app, req, body):
    app.state.sessions.clear()
    return {"sessions": 0}


def pop_refusals(app, req, body):
    """Why PoP resources refused signed HTTP requests, newest last (pop.py)."""
    return {"refusals": list(app.state.pop_refusals)}


ROUTES = {
    "state": get_state, "reset": reset, "config": config, "users": users,
    "users/delete": delete_user, "tenants": tenants, "clients": clients, "consent": consent,
    "revoke": revoke, "mfa": mfa, "conditional_access": conditional_access, "devicecode": device,
    "clock": clock, "faults": add_fault, "faults/clear": clear_faults, "counts": counts,
    "counts/reset": reset_counts, "log": log, "log/clear": clear_log,
    "graph/challenge": graph_challenge, "authorize/next": authorize_next,
    "sessions/clear": clear_sessions, "issuers": issuers,
    "id_token": id_token, "pop/refusals": pop_refusals, "subscriptions": arm.set_subscriptions, "federation": federation.admin,
}


def handle(app, req):
    name = "/".join(req.segments[1:])
    if name == "ssh-user-ca.pub":
        return sshca.public_key_response(app)
    fn = ROUTES.get(name)
    if fn is None:
        return json_response({"error": "unknown admin endpoint", "endpoints": sorted(ROUTES)}, 404)
    try:
        with app.state.lock:
            return json_response(fn(app, req, req.body_json()))
    except AdminError as exc:
        return json_response({"error": str(exc)}, exc.status)
    except (KeyError, ValueError, TypeError) as exc:
        return json_response({"error": "%s: %s" % (type(exc).__name__, exc)}, 400)
