"""Microsoft Graph: /v1.0/me, /beta/me and the paged collection /v1.0/users.

The bearer token must be one of ours: RS256 signature, audience Graph, not expired
(by the mock's clock), and carry a scope the endpoint needs.
"""

import base64
import json
import time
import uuid

from . import pop
from .http_util import json_response
from .issue import GRAPH_AUDIENCES

ME_SCOPES = {"user.read", "user.readwrite", "user.readbasic.all", "user.read.all",
             "user.readwrite.all", "directory.read.all"}
USERS_SCOPES = ME_SCOPES - {"user.read", "user.readwrite"}
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"


def graph_error(status, code, message, req, headers=None):
    return json_response({"error": {"code": code, "message": message, "innerError": {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
        "request-id": str(uuid.uuid4()), "client-request-id": req.correlation_id}}},
        status, headers)


def _www_authenticate(app, extra=""):
    return ('Bearer realm="", authorization_uri="%s/common/oauth2/authorize", client_id="%s"%s'
            % (app.base_url, GRAPH_APP_ID, extra))


def _unauthorized(app, req, message):
    return graph_error(401, "InvalidAuthenticationToken", message, req,
                       {"WWW-Authenticate": _www_authenticate(app)})


def authenticate(app, req):
    """Return (claims, None) for a good token, or (None, error response)."""
    auth = req.headers.get("Authorization", "")
    if auth[:4].lower() == "pop ":   # a proof-of-possession token with its signed HTTP request
        claims, error = pop.authenticate(app, req)
        if error is None and claims.get("aud") not in GRAPH_AUDIENCES:
            return None, pop.challenge(app, req, "Access token validation failure. Invalid audience.")
        return claims, error
    if not auth.startswith("Bearer ") or not auth[7:].strip():
        return None, _unauthorized(app, req, "Access token is empty.")
    try:
        claims = app.signer.verify(auth[7:].strip())
    except ValueError as exc:
        return None, _unauthorized(app, req, "Access token validation failure. %s." % exc)
    if claims.get("aud") not in GRAPH_AUDIENCES:
        return None, _unauthorized(app, req, "Access token validation failure. Invalid audience.")
    if claims.get("cnf"):   # a bound token is useless without its key's signed HTTP request
        return None, pop.challenge(app, req, "a PoP token is presented only with its signed HTTP request")
    if claims.get("exp", 0) <= app.state.now():
        return None, _unauthorized(app, req, "Lifetime validation failed, the token is expired.")
    return claims, None


def _challenge(app, req, claims):
    """The claims challenge armed with POST /_admin/graph/challenge, if it applies."""
    state = app.state
    with state.lock:
        ch = state.graph_challenge
        if not ch or ch["times"] == 0 or (ch.get("until_satisfied") and claims.get("acrs")):
            return None
        if ch["times"] > 0:
            ch["times"] -= 1
    encoded = base64.b64encode(ch["claims"].encode()).decode()
    header = _www_authenticate(app, ', error="insufficient_claims", claims="%s"' % encoded)
    return graph_error(401, "InvalidAuthenticationToken",
                       "Continuous access evaluation resulted in challenge.", req,
                       {"WWW-Authenticate": header})


def handle(app, req):
    claims, error = authenticate(app, req)
    if error:
        return error
    challenge = _challenge(app, req, claims)
    if challenge:
        return challenge
    version, rest = req.segments[0], req.segments[1:]
    scopes = {s.lower() for s in claims.get("scp", "").split()}
    user = app.state.users.get(claims.get("oid"))
    if rest == ["me"]:
        if not scopes & ME_SCOPES:
            return graph_error(403, "Authorization_RequestDenied",
                               "Insufficient privileges to complete the operation.", req)
        if user is None:
            return graph_error(404, "Request_ResourceNotFound",
                               "Resource '%s' does not exist." % claims.get("oid"), req)
        return json_response(user_resource(app, user, version))
    if rest == ["users"] and version == "v1.0":
        if not scopes & USERS_SCOPES:
            return graph_error(403, "Authorization_RequestDenied",
                               "Insufficient privileges to complete the operation.", req)
        return users_page(app, req, claims)
    return graph_error(400, "BadRequest", "Resource not found for the segment '%s'."
                       % (rest[0] if rest else version), req)


def user_resource(app, user, version="v1.0"):
    given, _, surname = user["name"].partition(" ")
    doc = {"@odata.context": "%s/%s/$metadata#users/$entity" % (app.base_url, version),
           "businessPhones": [], "displayName": user["name"], "givenName": given,
           "jobTitle": None, "mail": user["username"], "mobilePhone": None,
           "officeLocation": None, "preferredLanguage": "en-US", "surname": surname or None,
           "userPrincipalName": user["username"], "id": user["oid"]}
    if version == "beta":
        doc.update({"accountEnabled": True, "createdDateTime": "2024-01-01T00:00:00Z",
                    "userType": "Member", "identities": [], "otherMails": []})
    return doc


def users_page(app, req, claims):
    cfg = app.state.config
    people = [u for u in app.state.users.values() if u["tid"] == claims.get("tid")]
    items = [user_resource(app, u) for u in people]
    for i in range(len(items), int(cfg["graph_collection_size"])):
        items.append({"id": "00000000-0000-4000-9000-%012d" % i, "displayName": "User %03d" % i,
                      "userPrincipalName": "user%03d@example.test" % i,
                      "mail": "user%03d@example.test" % i, "businessPhones": []})
    for item in items:
        item.pop("@odata.context", None)
    try:
        top = max(1, min(999, int(req.query.get("$top") or cfg["graph_page_size"])))
        skip = int(base64.urlsafe_b64decode(req.query.get("$skiptoken", "MA==")).decode() or 0)
    except ValueError:
        return graph_error(400, "BadRequest", "Invalid $top or $skiptoken.", req)
    body = {"@odata.context": "%s/v1.0/$metadata#users" % app.base_url,
            "value": items[skip: skip + top]}
    if skip + top < len(items):
        token = base64.urlsafe_b64encode(str(skip + top).encode()).decode()
        body["@odata.nextLink"] = "%s/v1.0/users?$top=%d&$skiptoken=%s" % (app.base_url, top, token)
    return json_response(body)
