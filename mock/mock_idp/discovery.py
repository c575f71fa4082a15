"""OpenID Connect discovery, the JWKS and instance discovery (api-version 1.1)."""

from urllib.parse import urlsplit

from .http_util import json_response

MICROSOFT_PUBLIC_CLOUD = {
    "preferred_network": "login.microsoftonline.com",
    "preferred_cache": "login.windows.net",
    "aliases": ["login.microsoftonline.com", "login.windows.net",
                "login.microsoft.com", "sts.windows.net"],
}


def openid_configuration(app, req, ctx):
    base = app.base_url
    prefix = base + ctx.endpoint_path
    doc = {
        "issuer": ctx.discovery_issuer(base),
        "authorization_endpoint": prefix + "/oauth2/v2.0/authorize",
        "token_endpoint": prefix + "/oauth2/v2.0/token",
        "end_session_endpoint": prefix + "/oauth2/v2.0/logout",
        "jwks_uri": prefix + "/discovery/v2.0/keys",
        "response_modes_supported": ["query", "fragment", "form_post"],
        "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
        "scopes_supported": ["openid", "profile", "email", "offline_access"],
        "subject_types_supported": ["pairwise"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt",
                                                  "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "name",
                             "preferred_username", "oid", "tid", "ver", "at_hash", "c_hash", "email"],
        "request_uri_parameter_supported": False,
        "userinfo_endpoint": base + "/oidc/userinfo",
        "tenant_region_scope": None,
        "cloud_instance_name": urlsplit(base).netloc,
        "cloud_graph_host_name": "graph.windows.net",
        "msgraph_host": urlsplit(base).netloc,
    }
    if ctx.b2c:
        doc["claims_supported"] += ["emails", "tfp", "idp"]
    else:
        doc["device_authorization_endpoint"] = prefix + "/oauth2/v2.0/devicecode"
        doc["kerberos_endpoint"] = prefix + "/kerberos"
        doc["frontchannel_logout_supported"] = True
        doc["http_logout_supported"] = True
    return json_response(doc)


def jwks(app, req, ctx):
    issuer = None if ctx.b2c else app.base_url + "/{tenantid}/v2.0"
    return json_response(app.signer.jwks(issuer))


def _aliases(base_url):
    netloc = urlsplit(base_url).netloc
    port = urlsplit(base_url).port
    return {"preferred_network": netloc, "preferred_cache": netloc,
            "aliases": [netloc, "localhost:%d" % port]}


def instance(app, req):
    """GET /common/discovery/instance?api-version=1.1&authorization_endpoint=..."""
    version = req.query.get("api-version")
    endpoint = req.query.get("authorization_endpoint", "")
    ours = _aliases(app.base_url)
    if version not in ("1.0", "1.1"):
        return json_response({"error": "invalid_request",
                              "error_description": "AADSTS90003: Api version '%s' is not supported."
                              % version, "error_codes": [90003]}, 400)
    host = urlsplit(endpoint).netloc.lower()
    known = ours["aliases"] + MICROSOFT_PUBLIC_CLOUD["aliases"]
    if endpoint and host not in known and host.split(":")[0] not in ("127.0.0.1", "localhost"):
        return json_response({
            "error": "invalid_instance",
            "error_description": "AADSTS50049: Unknown or invalid instance.",
            "error_codes": [50049], "correlation_id": req.correlation_id}, 400)
    path = urlsplit(endpoint).path.split("/")
    tenant = path[1] if len(path) > 1 and path[1] else "common"
    return json_response({
        "tenant_discovery_endpoint": "%s/%s/v2.0/.well-known/openid-configuration"
                                     % (app.base_url, tenant),
        "api-version": "1.1",
        "metadata": [ours, MICROSOFT_PUBLIC_CLOUD],
    })
