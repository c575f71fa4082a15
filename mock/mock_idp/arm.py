"""Azure Resource Manager's two listings Azure CLI reads at sign-in, under {url}/arm/:
GET /arm/tenants and GET /arm/subscriptions (api-version 2022-12-01 shapes).

The bearer token must be one of ours for Resource Manager (RS256, a management audience, not
expired by the mock's clock). Subscriptions are set per user with
POST /_admin/subscriptions {"username", "subscriptions": [{"id", "name", "tenant_id",
"state"?, "managed_by"?: [tenant ids]}]}; /arm/subscriptions lists the caller's subscriptions
in the token's tenant, /arm/tenants the caller's home tenant and every tenant holding one.
With config `arm_page_size` N (0: one answer, the default) the subscriptions come N to a page,
each page but the last with a `nextLink` (`$skiptoken`), as Resource Manager pages them.
"""

import uuid

from .http_util import json_response

API_VERSION = "2022-12-01"
ARM_AUDIENCES = {"https://management.core.windows.net/", "https://management.core.windows.net",
                 "https://management.azure.com/", "https://management.azure.com"}


def _error(status, code, message):
    return json_response({"error": {"code": code, "message": message}}, status)


def _caller(app, req):
    """(user, token claims, None) for a good Resource Manager token, else (None, None, error)."""
    auth = req.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        return None, None, _error(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
    try:
        claims = app.signer.verify(auth[7:].strip())
    except ValueError as exc:
        return None, None, _error(401, "InvalidAuthenticationToken", "The access token is invalid: %s." % exc)
    if claims.get("aud") not in ARM_AUDIENCES:
        return None, None, _error(401, "InvalidAuthenticationToken", "The access token has an invalid audience.")
    if claims.get("exp", 0) <= app.state.now():
        return None, None, _error(401, "ExpiredAuthenticationToken", "The access token expiry UTC time is in the past.")
    user = app.state.users.get(claims.get("oid"))
    if user is None:
        return None, None, _error(401, "InvalidAuthenticationToken", "The access token's user is unknown.")
    return user, claims, None


def _tenant(app, tid):
    tenant = app.state.tenants.get(tid) or {"id": tid, "domains": ["%s.onmicrosoft.com" % tid[:8]]}
    default = next((d for d in tenant["domains"] if d.endswith(".onmicrosoft.com")), tenant["domains"][0])
    return {"id": "/tenants/" + tid, "tenantId": tid, "countryCode": "US", "displayName": default.split(".")[0].title(),
            "domains": tenant["domains"], "tenantCategory": "Home", "defaultDomain": default, "tenantType": "AAD"}


def _subscription(entry):
    return {"id": "/subscriptions/" + entry["id"], "authorizationSource": "RoleBased",
            "managedByTenants": [{"tenantId": t} for t in entry.get("managed_by", [])],
            "subscriptionId": entry["id"], "tenantId": entry["tenant_id"], "displayName": entry["name"],
            "state": entry.get("state", "Enabled"),
            "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01", "quotaId": "PayAsYouGo_2014-09-01",
                                     "spendingLimit": "Off"}}


def handle(app, req):
    """GET /arm/tenants or /arm/subscriptions."""
    if req.method != "GET" or req.param("api-version") is None:
        return _error(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required.")
    with app.state.lock:
        user, claims, error = _caller(app, req)
        if error:
            return error
        mine = app.state.arm_subscriptions.get(user["oid"], [])
        if req.segments[1:] == ["tenants"]:
            tids = [user["tid"]] + [s["tenant_id"] for s in mine if s["tenant_id"] != user["tid"]]
            return json_response({"value": [_tenant(app, t) for t in dict.fromkeys(tids)]})
        if req.segments[1:] == ["subscriptions"]:
            value = [_subscription(s) for s in mine if s["tenant_id"] == claims.get("tid")]
            size = int(app.state.config.get("arm_page_size") or 0)
            if size <= 0:
                return json_response({"value": value, "count": {"type": "Total", "value": len(value)}})
            skip = int(req.param("$skiptoken") or 0)
            body = {"value": value[skip: skip + size]}
            if skip + size < len(value):
                body["nextLink"] = "%s/arm/subscriptions?api-version=%s&$skiptoken=%d" % (app.base_url, API_VERSION, skip + size)
            return json_response(body)
    return _error(404, "InvalidResourceType", "The resource type '%s' could not be found." % "/".join(req.segments[1:]))


def set_subscriptions(app, req, body):
    """POST /_admin/subscriptions {"username", "subscriptions": [...]}: the user's, replaced."""
    user = app.state.find_user(body.get("username", ""))
    if user is None:
        raise ValueError("no such user: %r" % body.get("username"))
    entries = []
    for s in body.get("subscriptions", []):
        entries.append({"id": s.get("id") or str(uuid.uuid4()), "name": s["name"], "tenant_id": s.get("tenant_id", user["tid"]),
                        "state": s.get("state", "Enabled"), "managed_by": list(s.get("managed_by", []))})
    app.state.arm_subscriptions[user["oid"]] = entries
    return {"username": user["username"], "subscriptions": entries}
