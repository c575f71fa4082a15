"""Proof-of-possession (PoP) tokens and the resource that checks their signed HTTP requests.

Token requests: `token_type=pop` with `req_cnf` = base64url of `{"kid": <RFC 7638 thumbprint>}`
(msal-browser's shape; `xms_ksl` and other members are ignored) get an access token carrying
`cnf: {"kid": …}` and `token_type: "pop"` in the answer.

Resources: a request with `Authorization: PoP <SHR>` (to /pop/… or to Graph) is accepted only
when the SHR (a JWT, draft-ietf-oauth-signed-http-request as msal-common's PopTokenGenerator
makes it) is signed by the JWK in its `cnf.jwk` (RS256 or ES256), that JWK's RFC 7638 thumbprint
is the access token's `cnf.kid`, `at` is one of our access tokens (signature, expiry), `m`, `u`
(host[:port] as the request's Host header says), `p` (the path) and `q` (when it is sent) are the
request's, `ts` is within 5 minutes of the mock's clock, and, when config `pop_require_nonce` is
on, `nonce` is one this mock issued. Otherwise: 401 with `WWW-Authenticate: PoP nonce="…"` (a new
nonce every time) and a reason in the body.
"""

import base64
import binascii
import hashlib
import json
import secrets
from urllib.parse import parse_qsl

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from .errors import OAuthError
from .http_util import json_response
from .jwtsign import b64url, b64url_decode

TS_WINDOW = 300   # seconds either side of the mock's clock
THUMBPRINT_MEMBERS = {"RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y")}


def requested(req):
    """True when the token request asks for a PoP token."""
    return (req.param("token_type") or "").lower() == "pop"


def _b64_any(text):
    """base64url or standard base64, padded or not."""
    text = text.strip().replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def request_kid(req):
    """The `kid` of the request's `req_cnf`, or invalid_request."""
    text = req.param("req_cnf")
    if not text:
        raise OAuthError("missing_parameter", param="req_cnf")
    try:
        cnf = json.loads(_b64_any(text))
    except (binascii.Error, ValueError):
        raise OAuthError("bad_req_cnf", reason="not base64url of a JSON object") from None
    kid = cnf.get("kid") if isinstance(cnf, dict) else None
    if not isinstance(kid, str) or not kid:
        raise OAuthError("bad_req_cnf", reason="'kid' is missing")
    return kid


def thumbprint(jwk):
    """The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK, or ValueError."""
    members = THUMBPRINT_MEMBERS.get(jwk.get("kty"))
    if members is None or any(not isinstance(jwk.get(m), str) for m in members):
        raise ValueError("the SHR's cnf.jwk is not an RSA or EC public key")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def _verify_signature(jwk, alg, signing_input, signature):
    def number(name):
        return int.from_bytes(b64url_decode(jwk[name]), "big")
    try:
        if alg == "RS256" and jwk["kty"] == "RSA":
            key = rsa.RSAPublicNumbers(number("e"), number("n")).public_key()
            if key.key_size < 2048:
                raise ValueError("the SHR's key is shorter than 2048 bits")
            key.verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
        elif alg == "ES256" and jwk["kty"] == "EC" and jwk.get("crv") == "P-256" and len(signature) == 64:
            key = ec.EllipticCurvePublicNumbers(number("x"), number("y"), ec.SECP256R1()).public_key()
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
        else:
            raise ValueError("the SHR's alg %r does not fit its key" % alg)
    except InvalidSignature:
        raise ValueError("the SHR's signature does not verify with its cnf.jwk") from None
    except (KeyError, binascii.Error, TypeError) as exc:
        raise ValueError("the SHR's cnf.jwk is malformed (%s)" % exc) from None


def verify_shr(app, req, shr):
    """The access token's claims when `shr` is a valid SHR for `req`, else ValueError(reason)."""
    parts = shr.split(".")
    if len(parts) != 3:
        raise ValueError("the SHR is not a JWS")
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise ValueError("the SHR cannot be decoded") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise ValueError("the SHR's header or payload is not an object")
    jwk = (claims.get("cnf") or {}).get("jwk") if isinstance(claims.get("cnf"), dict) else None
    if not isinstance(jwk, dict):
        raise ValueError("the SHR carries no cnf.jwk")
    _verify_signature(jwk, header.get("alg"), (parts[0] + "." + parts[1]).encode("ascii"), signature)
    at = claims.get("at")
    if not isinstance(at, str):
        raise ValueError("the SHR carries no access token")
    try:
        token = app.signer.verify(at)
    except ValueError as exc:
        raise ValueError("the SHR's access token is not ours (%s)" % exc) from None
    now = app.state.now()
    if token.get("exp", 0) <= now:
        raise ValueError("the access token is expired")
    kid = (token.get("cnf") or {}).get("kid") if isinstance(token.get("cnf"), dict) else None
    if not kid:
        raise ValueError("the access token is not a PoP token (no cnf.kid)")
    if thumbprint(jwk) != kid:
        raise ValueError("the SHR's key is not the one the token is bound to")
    ts = claims.get("ts")
    if not isinstance(ts, (int, float)) or abs(now - ts) > TS_WINDOW:
        raise ValueError("the SHR's ts is missing or not within 5 minutes")
    host = (req.headers.get("Host") or "").lower()
    expected = {"m": req.method.upper(), "u": host, "p": req.path}
    for name, value in expected.items():
        if claims.get(name) != value:
            raise ValueError("the SHR's %s is %r, the request's %r" % (name, claims.get(name), value))
    if "q" in claims and not _query_matches(claims["q"], req.query_string):
        raise ValueError("the SHR's q does not match the request's query")
    if app.state.config["pop_require_nonce"]:
        with app.state.lock:
            if claims.get("nonce") not in app.state.pop_nonces:
                raise ValueError("the SHR carries no nonce this resource issued")
    return token


def _query_matches(q, query_string):
    """msal-common's `[[], "<query string>"]`, or the draft's `[[names], base64url(sha256)]`."""
    if not isinstance(q, list) or len(q) != 2 or not isinstance(q[0], list):
        return False
    names, value = q
    if not names:
        return value == query_string
    pairs = dict(parse_qsl(query_string, keep_blank_values=True))
    if any(n not in pairs for n in names):
        return False
    joined = "&".join("%s=%s" % (n, pairs[n]) for n in names)
    return value == b64url(hashlib.sha256(joined.encode("utf-8")).digest())


def challenge(app, req, reason):
    """401 with a fresh nonce in `WWW-Authenticate: PoP nonce="…"`."""
    nonce = secrets.token_urlsafe(24)
    with app.state.lock:
        app.state.pop_nonces.add(nonce)
        app.state.pop_refusals.append(reason)
    return json_response({"error": {"code": "InvalidAuthenticationToken", "message": reason,
                                    "client-request-id": req.correlation_id}}, 401,
                         {"WWW-Authenticate": 'PoP nonce="%s"' % nonce})


def authenticate(app, req):
    """(token claims, None) for a request whose `Authorization: PoP …` is valid, else (None, 401)."""
    auth = req.headers.get("Authorization", "")
    scheme, _, shr = auth.partition(" ")
    if scheme.lower() != "pop" or not shr.strip():
        return None, challenge(app, req, "a PoP authorization header is required")
    try:
        return verify_shr(app, req, shr.strip()), None
    except ValueError as exc:
        return None, challenge(app, req, str(exc))


def resource(app, req):
    """/pop/…: any method; answers what was asked and by whom when the SHR is valid."""
    claims, error = authenticate(app, req)
    if error:
        return error
    return json_response({"method": req.method, "path": req.path, "oid": claims.get("oid"),
                          "kid": claims["cnf"]["kid"], "scp": claims.get("scp")})
