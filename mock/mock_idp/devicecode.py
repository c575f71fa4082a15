"""The device authorization grant: /devicecode, polling at /token, and /devicelogin."""

import html
import secrets
import string

from .errors import OAuthError
from .http_util import html_response, json_response
from .issue import parse_scopes

ACTIONS = ("approve", "decline", "expire", "slow_down")


def start(app, req, ctx):
    state, p = app.state, req.param
    client_id = p("client_id")
    if not client_id:
        raise OAuthError("missing_parameter", param="client_id")
    if client_id not in state.clients:
        raise OAuthError("unknown_client", client_id=client_id, tenant=ctx.tenant_id())
    if not p("scope"):
        raise OAuthError("invalid_scope")
    parse_scopes(p("scope"), client_id)
    if blocks_device_code(ctx.tenant):
        raise OAuthError("ca_blocked", suberror="message_only")
    cfg = state.config
    user_code = "".join(secrets.choice(string.ascii_uppercase + "23456789") for _ in range(9))
    device_code = "DAQABAAEAAAB" + secrets.token_urlsafe(48)
    uri = app.base_url + "/devicelogin"
    with state.lock:
        state.device_codes[device_code] = {
            "user_code": user_code, "device_code": device_code, "client_id": client_id,
            "scope": p("scope"), "claims": p("claims"), "segment": ctx.segment,
            "issuer_name": ctx.issuer_name,
            "expires": state.now() + cfg["device_code_lifetime"], "status": "pending",
            "oid": None, "slow_down": 0, "polls": 0, "redeemed": False}
    return json_response({
        "user_code": user_code, "device_code": device_code, "verification_uri": uri,
        "expires_in": int(cfg["device_code_lifetime"]), "interval": int(cfg["device_code_interval"]),
        "message": "To sign in, use a web browser to open the page %s and enter the code %s to "
                   "authenticate." % (uri, user_code)})


def redeem(app, req, ctx):
    """Called by the token endpoint (under the state lock) for the device_code grant."""
    state, p = app.state, req.param
    code = p("device_code") or p("code")
    if not code:
        raise OAuthError("missing_parameter", param="device_code")
    record = state.device_codes.get(code)
    if record is None or record["client_id"] != p("client_id") or record["redeemed"] \
            or record["issuer_name"] != ctx.issuer_name:
        raise OAuthError("bad_device_code")
    record["polls"] += 1
    if state.now() > record["expires"] or record["status"] == "expired":
        raise OAuthError("expired_token")
    if record["status"] == "declined":
        raise OAuthError("authorization_declined")
    if record["slow_down"] > 0:
        record["slow_down"] -= 1
        raise OAuthError("slow_down")
    if record["status"] == "pending":
        raise OAuthError("authorization_pending")
    user = state.users[record["oid"]]
    if blocks_device_code(state.tenants.get(user["tid"])):
        # Conditional Access, evaluated once the user signed in: this tenant refuses the flow.
        raise OAuthError("ca_blocked", suberror="message_only")
    record["redeemed"] = True
    state.consented(user["oid"], record["client_id"]).update(
        n.lower() for n in parse_scopes(record["scope"], record["client_id"])[1])
    return {"user": user, "client_id": record["client_id"], "scope": record["scope"],
            "claims": record["claims"], "mfa": True, "auth_time": state.now()}


def blocks_device_code(tenant):
    """Whether the tenant's Conditional Access refuses the device code flow
    (`POST /_admin/tenants {id, device_code_blocked: true}`): AADSTS53003 at /devicecode for
    that tenant's authority, and when its user's approved code is redeemed (any authority)."""
    return bool(tenant and tenant.get("device_code_blocked"))


def act(state, user_code, action, username=None):
    """approve / decline / expire / slow_down a device code ("latest" = the newest one)."""
    if action not in ACTIONS:
        raise ValueError("action must be one of %s" % (ACTIONS,))
    with state.lock:
        records = list(state.device_codes.values())
        if user_code in (None, "", "latest"):
            record = records[-1] if records else None
        else:
            record = next((r for r in records if r["user_code"] == user_code.upper()), None)
        if record is None:
            raise KeyError("no such device code")
        if action == "approve":
            user = state.find_user(username or state.config["default_user"])
            if user is None:
                raise KeyError("no such user")
            record["status"], record["oid"] = "approved", user["oid"]
        elif action == "decline":
            record["status"] = "declined"
        elif action == "expire":
            record["status"] = "expired"
        else:
            record["slow_down"] += 1
        return {"user_code": record["user_code"], "status": record["status"],
                "polls": record["polls"]}


def login_page(app, req):
    """/devicelogin: where a person types the user code in a real browser."""
    message = ""
    if req.method == "POST":
        action = "decline" if req.form.get("mock_action") == "decline" else "approve"
        try:
            act(app.state, req.form.get("user_code", "").strip() or "?", action,
                req.form.get("login_username") or None)
            message = "<p id='done'>%s. You may close this window.</p>" % (
                "Sign-in declined" if action == "decline" else "You have signed in")
        except (KeyError, ValueError) as exc:
            message = "<p id='error'>%s</p>" % html.escape(str(exc))
    return html_response(
        "<html><head><title>Enter code</title></head><body><h1>Enter code</h1>%s"
        "<form method='POST' action='/devicelogin'><input name='user_code'>"
        "<input name='login_username' placeholder='user (optional)'>"
        "<button name='mock_action' value='approve'>Next</button>"
        "<button name='mock_action' value='decline'>Decline</button></form></body></html>"
        % message)
