"""Workload identity federation: federated identity credentials on apps, and the token
endpoint's client_credentials grant with a client assertion, validated as Entra does.

    POST /_admin/federation {client_id, issuer, subject, audience?, roles?}
        registers a federated identity credential on the app (the app is made if needed);
        GET /_admin/federation lists them.

    POST /{tenant}/oauth2/v2.0/token grant_type=client_credentials
        client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer
        client_assertion=JWT client_id=... scope=RESOURCE/.default

The assertion's signature is checked against its issuer's JWKS, found through
`{iss}/.well-known/openid-configuration` (https, or http on loopback for tests); `iss`, `sub`
and `aud` must equal a registered credential's; `exp`/`nbf` are checked (no leeway, as
Entra's answers in CI show). The reply is an app token: `appid`/`azp` = the client id,
`roles`, `idtyp: app`, no `scp`, no refresh token, no ID token.
"""

import hashlib
import json
import secrets
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from .errors import CATALOG, OAuthError
from .http_util import json_response
from .issue import parse_scopes
from .jwtsign import b64url_decode

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
DEFAULT_AUDIENCE = "api://AzureADTokenExchange"
FETCH_TIMEOUT = 5.0

CATALOG.update({
    "assertion_expired": ("invalid_client", 700024,
                          "Client assertion is not within its valid time range. Current time: {now}, "
                          "assertion valid from {nbf}, expiry time of assertion {exp}. Review the "
                          "documentation at https://docs.microsoft.com/azure/active-directory/develop/"
                          "active-directory-certificate-credentials .", 401),
    "no_federated_match": ("invalid_request", 70021,
                           "No matching federated identity record found for presented assertion. "
                           "Assertion Issuer: '{iss}'. Assertion Subject: '{sub}'. Assertion "
                           "Audience: '{aud}'. https://docs.microsoft.com/en-us/azure/active-directory/"
                           "develop/workload-identity-federation", 400),
    "assertion_signature": ("invalid_client", 700027,
                            "Client assertion failed signature validation. Reason: {reason}.", 401),
    "assertion_malformed": ("invalid_client", 50027,
                            "JWT token is invalid or malformed.", 400),
    "assertion_type": ("invalid_request", 9002344,
                       "Client assertion type must be '%s'." % JWT_BEARER, 400),
    "client_credentials_scope": ("invalid_scope", 1002012,
                                 "The provided value for scope {scope} is not valid. Client credential "
                                 "flows must have a scope value with /.default suffixed to the resource "
                                 "identifier (application ID URI).", 400),
    "no_client_credential": ("invalid_client", 7000218,
                             "The request body must contain the following parameter: "
                             "'client_assertion' or 'client_secret'.", 401),
})


# -- the admin control -----------------------------------------------------------------------

def admin(app, req, body):
    """POST: register a federated identity credential; GET: list them."""
    state = app.state
    if req.method == "POST" and body:
        for key in ("client_id", "issuer", "subject"):
            if not body.get(key):
                raise ValueError("%s is required" % key)
        client = state.clients.setdefault(body["client_id"], {
            "client_id": body["client_id"], "name": body.get("name", "federated app"),
            "redirect_uris": [], "family": None})
        client["roles"] = list(body.get("roles", client.get("roles", [])))
        client.setdefault("sp_oid", str(uuid.UUID(bytes=hashlib.sha256(
            body["client_id"].encode()).digest()[:16], version=4)))
        state.federations.append({"client_id": body["client_id"], "issuer": body["issuer"],
                                  "subject": body["subject"],
                                  "audience": body.get("audience") or DEFAULT_AUDIENCE})
    return {"federations": list(state.federations)}


# -- the grant --------------------------------------------------------------------------------

def client_credentials(app, req, ctx):
    """The client_credentials grant: validate the assertion, answer an app token."""
    p, state = req.param, app.state
    client_id, scope = p("client_id"), p("scope") or ""
    assertion = p("client_assertion")
    if not assertion:
        raise OAuthError("no_client_credential")
    if p("client_assertion_type") != JWT_BEARER:
        raise OAuthError("assertion_type")
    resource, names, _ = parse_scopes(scope, client_id)
    if resource is None or names != [".default"]:
        raise OAuthError("client_credentials_scope", scope=scope or "''")
    header, claims, signing_input, signature = _parts(assertion)
    with state.lock:
        registered = [f for f in state.federations if f["client_id"] == client_id]
    now = state.now()
    _check_time(claims, now)
    if not any(f["issuer"] == claims.get("iss") and f["subject"] == claims.get("sub")
               and f["audience"] in _audiences(claims) for f in registered):
        raise OAuthError("no_federated_match", iss=claims.get("iss", ""), sub=claims.get("sub", ""),
                         aud=" ".join(_audiences(claims)))
    _verify(header, signing_input, signature, _issuer_keys(claims["iss"]))
    with state.lock:
        client = state.clients[client_id]
        return json_response(_app_token(app, ctx, client, resource, int(now)))


def _app_token(app, ctx, client, resource, now):
    life = int(app.state.config["access_token_lifetime"])
    tid = ctx.tenant_id()
    claims = {"aud": resource, "iss": ctx.issuer(app.base_url, tid), "iat": now, "nbf": now,
              "exp": now + life, "appid": client["client_id"], "azp": client["client_id"],
              "appidacr": "2", "azpacr": "2", "idtyp": "app", "oid": client["sp_oid"],
              "sub": client["sp_oid"], "tid": tid, "roles": list(client.get("roles", [])),
              "ver": "2.0", "uti": secrets.token_urlsafe(16)}
    return {"token_type": "Bearer", "expires_in": life,
            "ext_expires_in": int(app.state.config["ext_expires_in"] or life),
            "access_token": app.signer.sign(claims)}


def _parts(token):
    try:
        head, body, sig = token.split(".")
        header = json.loads(b64url_decode(head))
        claims = json.loads(b64url_decode(body))
        signature = b64url_decode(sig)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise OAuthError("assertion_malformed")
    if not isinstance(header, dict) or not isinstance(claims, dict) or not claims.get("iss"):
        raise OAuthError("assertion_malformed")
    return header, claims, (head + "." + body).encode("ascii"), signature


def _audiences(claims):
    aud = claims.get("aud")
    return [aud] if isinstance(aud, str) else [a for a in aud or [] if isinstance(a, str)]


def _stamp(t):
    # Entra prints any exp; gmtime refuses the far ones (an assertion's exp near Int64.min)
    return time.strftime("%Y-%m-%dT%H:%M:%S.0000000Z", time.gmtime(min(max(t, 0), 253402300799)))


def _check_time(claims, now):
    exp, nbf = claims.get("exp"), claims.get("nbf", claims.get("iat"))
    if not isinstance(exp, (int, float)) or now >= exp or (isinstance(nbf, (int, float)) and now < nbf):
        raise OAuthError("assertion_expired", now=_stamp(now),
                         nbf=_stamp(nbf) if isinstance(nbf, (int, float)) else "unknown",
                         exp=_stamp(exp) if isinstance(exp, (int, float)) else "unknown")


def _issuer_keys(issuer):
    """The issuer's JWKS keys, through its OpenID configuration (fetched at each exchange)."""
    try:
        config = _fetch_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
        return _fetch_json(config["jwks_uri"]).get("keys", [])
    except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError) as exc:
        raise OAuthError("assertion_signature", reason="the issuer's keys could not be read (%s)"
                         % type(exc).__name__)


def _fetch_json(url):
    parts = urllib.parse.urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise ValueError("not https: " + url)
    context = ssl.create_default_context()
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT, context=context) as resp:
        return json.loads(resp.read(1 << 20))


def _verify(header, signing_input, signature, keys):
    kid, alg = header.get("kid"), header.get("alg")
    matching = [k for k in keys if isinstance(k, dict) and (kid is None or k.get("kid") == kid)]
    if not matching:
        raise OAuthError("assertion_signature", reason="the key was not found")
    for jwk in matching:
        try:
            if alg == "RS256" and jwk.get("kty") == "RSA":
                public = rsa.RSAPublicNumbers(_int(jwk["e"]), _int(jwk["n"])).public_key()
                public.verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
                return
            if alg == "ES256" and jwk.get("kty") == "EC" and len(signature) == 64:
                public = ec.EllipticCurvePublicNumbers(_int(jwk["x"]), _int(jwk["y"]),
                                                       ec.SECP256R1()).public_key()
                der = encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                           int.from_bytes(signature[32:], "big"))
                public.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
                return
        except (InvalidSignature, KeyError, ValueError):
            continue
    raise OAuthError("assertion_signature", reason="the signature does not verify")


def _int(text):
    return int.from_bytes(b64url_decode(text), "big")
