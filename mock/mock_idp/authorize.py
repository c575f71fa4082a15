"""/{tenant}/oauth2/v2.0/authorize and /logout (and a generic issuer's /authorize and /logout).

By default the mock approves at once as the configured user (``default_user``, or the
``login_hint`` user, or the session's user for SSO) and redirects back with code and state.
With ``login_form`` on it shows an HTML form so a person can sign in with a real browser.
"""

import html
import secrets
from urllib.parse import urlencode

from . import issuers, sessions
from .errors import OAuthError
from .http_util import form_post_page, html_response, redirect, with_params
from .issue import client_info, parse_scopes

PASSTHROUGH = ("client_id", "redirect_uri", "response_type", "response_mode", "scope", "state",
               "nonce", "code_challenge", "code_challenge_method", "prompt", "login_hint",
               "domain_hint", "claims", "client_info", "max_age")
OUTCOMES = {"cancel": ("cancelled", "cancel"), "decline": ("declined", None),
            "forgot_password": ("b2c_forgot_password", None), "b2c_cancel": ("b2c_cancelled", None)}


def error_page(err, req, now):
    """Errors that cannot go back to the client (bad client_id / redirect_uri): an HTML page."""
    body = err.body(req.correlation_id, now)
    return html_response("<html><body><h1>Sorry, but we're having trouble signing you in.</h1>"
                         "<p id='error'>%s</p><pre>%s</pre></body></html>" % (
                             html.escape(body["error_description"]), html.escape(body["error"])),
                         err.status)


def send_to_client(redirect_uri, mode, params, cookie=None):
    """Deliver params to the redirect URI by query, fragment or form_post."""
    params = {k: v for k, v in params.items() if v is not None}
    if mode == "form_post":
        resp = html_response(form_post_page(redirect_uri, params))
    elif mode == "fragment":
        resp = redirect(redirect_uri + "#" + urlencode(params))
    else:
        resp = redirect(with_params(redirect_uri, params))
    if cookie:
        resp.add_header("Set-Cookie", cookie)
    return resp


def handle(app, req, ctx):
    state, p, now = app.state, req.param, app.state.now()
    client_id, redirect_uri = p("client_id"), p("redirect_uri")
    if not client_id:
        return error_page(OAuthError("missing_parameter", param="client_id"), req, now)
    client = state.clients.get(client_id)
    if client is None:
        return error_page(OAuthError("unknown_client", client_id=client_id,
                                     tenant=ctx.tenant_id()), req, now)
    if not redirect_uri or not sessions.redirect_allowed(client, redirect_uri):
        return error_page(OAuthError("redirect_mismatch", client_id=client_id,
                                     redirect_uri=redirect_uri or ""), req, now)
    mode = p("response_mode") or "query"

    def fail(err, error=None):
        params = err.redirect_params(req.correlation_id, now, plain=bool(ctx.issuer_name))
        if error:
            params["error"] = error
        params["state"] = p("state")
        return send_to_client(redirect_uri, mode, params)

    with state.lock:
        try:
            return _authorize(app, req, ctx, client, redirect_uri, mode)
        except OAuthError as err:
            return fail(err, getattr(err, "redirect_error", None))


def _check_request(state, req, client_id):
    p = req.param
    if (p("response_type") or "") != "code":
        raise OAuthError("unsupported_response_type", response_type=p("response_type") or "")
    if not p("scope"):
        raise OAuthError("invalid_scope")
    parse_scopes(p("scope"), client_id)
    if state.config["require_state"] and not p("state"):
        raise OAuthError("missing_parameter", param="state")
    challenge, method = p("code_challenge"), p("code_challenge_method") or "plain"
    if challenge is None and state.config["require_pkce"]:
        raise OAuthError("pkce_required")
    if challenge is not None and (method != "S256" or not 43 <= len(challenge) <= 128):
        raise OAuthError("pkce_method")


def _authorize(app, req, ctx, client, redirect_uri, mode):
    state, p = app.state, req.param
    _check_request(state, req, client["client_id"])
    if state.authorize_outcomes:
        name, subcode = OUTCOMES[state.authorize_outcomes.pop(0)]
        raise OAuthError(name, subcode=subcode)
    prompt = p("prompt")
    sid, session = sessions.get_session(state, req)
    resource, names, _ = parse_scopes(p("scope"), client["client_id"])
    if prompt == "none":
        users = sessions.session_users(state, session, ctx)
        if p("login_hint"):
            users = [u for u in users if u["username"].lower() == p("login_hint").lower()]
        if not users:
            raise OAuthError("login_required")
        user = users[0]
        pending = sessions.pending_interaction(user, session["auth_time"], session.get("mfa"))
        if pending:
            err = OAuthError(pending, suberror="basic_action", claims=sessions.interaction_claims(),
                             resource=resource or "")
            err.redirect_error = "interaction_required"
            raise err
        consented = state.consented(user["oid"], client["client_id"])
        if any(n.lower() not in consented for n in names if n.lower() != ".default"):
            err = OAuthError("consent_required", client_id=client["client_id"])
            err.redirect_error = "consent_required"
            raise err
    elif state.config["login_form"] and "mock_action" not in req.form:
        return login_form(app, req, ctx)
    else:
        user = _interactive_user(state, req, ctx, session, prompt)
    if (user.get("ca") or {}).get("mode") == "block":
        raise _blocked()
    consented = state.consented(user["oid"], client["client_id"])
    if prompt != "none":
        if not state.config["auto_consent"] and any(n.lower() not in consented for n in names):
            raise OAuthError("declined")
        consented.update(n.lower() for n in names)
    sid, cookie = sessions.sign_in(state, req, user, mfa=True)
    if prompt == "none":
        cookie = None
    code = "1.MOCK." + secrets.token_urlsafe(40)
    state.codes[code] = {
        "oid": user["oid"], "client_id": client["client_id"], "redirect_uri": redirect_uri,
        "challenge": p("code_challenge"), "scope": p("scope"), "nonce": p("nonce"),
        "claims": p("claims"), "segment": ctx.segment, "policy": ctx.policy,
        "issuer_name": ctx.issuer_name,
        "created": state.now(), "used": False, "auth_time": state.now()}
    params = {"code": code, "state": p("state"), "session_state": sid}
    if p("client_info") == "1" and not ctx.issuer_name:
        params["client_info"] = client_info(user, ctx.policy)
    return send_to_client(redirect_uri, mode, params, cookie)


def _blocked():
    err = OAuthError("ca_blocked")
    err.redirect_error = "access_denied"
    return err


def _interactive_user(state, req, ctx, session, prompt):
    form = req.form
    if "mock_action" in form:
        if form["mock_action"] == "cancel":
            raise OAuthError("b2c_cancelled" if ctx.b2c else "cancelled",
                             subcode=None if ctx.b2c else "cancel")
        user = state.find_user(form.get("login_username", ""))
        if not user or not ctx.allows(user) or user["password"] != form.get("login_password"):
            raise OAuthError("cancelled", subcode="cancel")
        return user
    user = sessions.pick_user(state, ctx, req.param("login_hint"), session, prompt)
    if user is None:
        raise OAuthError("login_required")
    return user


def login_form(app, req, ctx):
    hidden = "".join('<input type="hidden" name="%s" value="%s">' % (
        k, html.escape(req.param(k), quote=True)) for k in PASSTHROUGH if req.param(k) is not None)
    hint = html.escape(req.param("login_hint") or app.state.config["default_user"], quote=True)
    return html_response(
        "<html><head><title>Sign in - mock identity platform</title></head><body>"
        "<h1>Sign in</h1><form method='POST' action='%s'>%s"
        "<label>Email <input name='login_username' value='%s'></label><br>"
        "<label>Password <input type='password' name='login_password'></label><br>"
        "<button name='mock_action' value='signin'>Sign in</button>"
        "<button name='mock_action' value='cancel'>Cancel</button></form></body></html>"
        % (html.escape(req.path, quote=True), hidden, hint))


def logout(app, req, ctx):
    """End the browser session; redirect to post_logout_redirect_uri when given.

    OIDC RP-Initiated Logout 1.0: an ``id_token_hint`` must be an ID token this service signed
    (expired ones are accepted, as the spec allows), and a ``client_id`` sent with it must be its
    audience; otherwise an HTML error page (400) and the session is kept."""
    problem = _logout_hint_problem(app, req, ctx)
    if problem:
        return html_response("<html><body><p>Sign-out failed: %s</p></body></html>" % html.escape(problem), 400)
    with app.state.lock:
        sid, _ = sessions.get_session(app.state, req)
        app.state.sessions.pop(sid, None)
    target = req.param("post_logout_redirect_uri")
    if target:
        resp = redirect(with_params(target, {"state": req.param("state")})
                        if req.param("state") else target)
    else:
        resp = html_response("<html><body><p>You signed out of your account.</p></body></html>")
    resp.add_header("Set-Cookie", sessions.clear_cookie())
    return resp


def _logout_hint_problem(app, req, ctx):
    hint = req.param("id_token_hint")
    if not hint:
        return None
    key = issuers.signer(app, ctx.issuer_name) if ctx.issuer_name else app.signer
    try:
        claims = key.verify(hint)
    except ValueError as exc:
        return "AADSTS50000: id_token_hint is not a valid ID token (%s)." % exc
    client_id = req.param("client_id")
    if client_id and claims.get("aud") != client_id:
        return "AADSTS50000: id_token_hint was not issued to client_id %s." % client_id
    return None
