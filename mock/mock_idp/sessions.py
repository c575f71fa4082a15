"""The browser session (a cookie), redirect-URI rules and who signs in."""

import json
import secrets
import uuid
from urllib.parse import urlsplit

COOKIE = "MOCKIDP_SESSION"
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}


def get_session(state, req):
    sid = req.cookies.get(COOKIE)
    return sid, state.sessions.get(sid) if sid else None


def sign_in(state, req, user, mfa=True):
    """Add `user` to the browser's session (creating it); return the Set-Cookie header value."""
    sid, session = get_session(state, req)
    if session is None:
        sid, session = secrets.token_urlsafe(24), {"users": []}
        state.sessions[sid] = session
    if user["oid"] in session["users"]:
        session["users"].remove(user["oid"])
    session["users"].insert(0, user["oid"])
    session["auth_time"] = state.now()
    session["mfa"] = mfa
    return sid, "%s=%s; Path=/; Secure; HttpOnly; SameSite=None" % (COOKIE, sid)


def clear_cookie():
    return "%s=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0" % COOKIE


def redirect_allowed(client, redirect_uri):
    """Registered URIs match exactly, except loopback ones which match any port (RFC 8252)."""
    try:
        want = urlsplit(redirect_uri)
        want_port = want.port
    except ValueError:
        return False
    if want.fragment:
        return False
    for registered in client.get("redirect_uris", []):
        reg = urlsplit(registered)
        if registered == redirect_uri:
            return True
        if (reg.scheme == want.scheme == "http" and reg.hostname in LOOPBACK_HOSTS
                and want.hostname == reg.hostname and (want_port or 80)
                and (reg.path or "/") == (want.path or "/")):
            return True
    return False


def session_users(state, session, ctx):
    if not session:
        return []
    users = [state.users.get(oid) for oid in session["users"]]
    return [u for u in users if u and ctx.allows(u)]


def pick_user(state, ctx, login_hint, session, prompt):
    """Who the scripted (auto-approving) user is for this request."""
    if login_hint:
        user = state.find_user(login_hint)
        if user and ctx.allows(user):
            return user
    if prompt not in ("login", "select_account", "create"):
        users = session_users(state, session, ctx)
        if users:
            return users[0]
    user = state.find_user(state.config["default_user"])
    if user and ctx.allows(user):
        return user
    for user in state.users.values():
        if ctx.allows(user):
            return user
    return None


def interaction_claims():
    """A conditional-access claims challenge like the ones Microsoft sends."""
    return json.dumps({"access_token": {"capolids": {"essential": True,
                                                      "values": [str(uuid.uuid4())]}}},
                      separators=(",", ":"))


def pending_interaction(user, auth_time, mfa_done):
    """Name of the catalog error if MFA/CA demands interaction newer than auth_time, else None."""
    mfa = user.get("mfa")
    if mfa and (not mfa_done or auth_time < mfa["since"]):
        return "mfa_enroll" if mfa.get("code") == 50079 else "mfa_required"
    ca = user.get("ca")
    if ca and ca["mode"] == "block":
        return "ca_blocked"
    if ca and auth_time < ca["since"]:
        return "ca_required"
    return None
