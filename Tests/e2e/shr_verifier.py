"""An independent verifier of signed HTTP requests (SHR), for the tests.

Written from the format, not from the sidecar's code nor the mock's: the SHR is a JWS
(draft-ietf-oauth-signed-http-request, as msal-common's PopTokenGenerator fills it) whose
payload is {at, ts, m, u, p, q?, nonce?, client_claims?, cnf: {jwk}}; the access token `at`
carries `cnf: {"kid": …}`, the RFC 7638 thumbprint of the key that signs the SHR. PyJWT checks
the signature, `cryptography` (through PyJWT's PyJWK) holds the key, hashlib the thumbprint.
"""

import base64
import hashlib
import json
import time
from urllib.parse import urlsplit

import jwt

# RFC 7638 section 3.2: the required members of each key type, lexicographic order.
REQUIRED_MEMBERS = {"RSA": ["e", "kty", "n"], "EC": ["crv", "kty", "x", "y"], "OKP": ["crv", "kty", "x"]}


class SHRRejected(AssertionError):
    """The SHR is not valid for the request (the message says why)."""


def jwk_thumbprint(jwk):
    """RFC 7638: SHA-256 of the required members, no whitespace, sorted; base64url, no padding."""
    members = REQUIRED_MEMBERS[jwk["kty"]]
    text = "{" + ",".join('"%s":"%s"' % (m, jwk[m]) for m in members) + "}"
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify(shr, method, url, nonce=None, now=None, window=300, client_claims=None):
    """The SHR's payload when `shr` signs a `method` request to `url` (and `nonce`, when given);
    raises SHRRejected otherwise."""
    try:
        header = jwt.get_unverified_header(shr)
        unverified = jwt.decode(shr, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise SHRRejected("not a JWS: %s" % exc) from None
    cnf = unverified.get("cnf")
    if not isinstance(cnf, dict) or not isinstance(cnf.get("jwk"), dict):
        raise SHRRejected("no cnf.jwk in the SHR")
    jwk = cnf["jwk"]
    if header.get("alg") not in ("RS256", "ES256", "PS256"):
        raise SHRRejected("unexpected alg %r" % header.get("alg"))
    try:
        key = jwt.PyJWK(jwk, algorithm=header["alg"]).key
        payload = jwt.decode(shr, key=key, algorithms=[header["alg"]],
                             options={"verify_aud": False, "verify_exp": False, "verify_iat": False})
    except jwt.PyJWTError as exc:
        raise SHRRejected("signature: %s" % exc) from None
    if any(k in jwk for k in ("d", "p", "q", "dp", "dq", "qi")):
        raise SHRRejected("the SHR's cnf.jwk carries private key members")
    token = jwt.decode(payload.get("at", ""), options={"verify_signature": False})
    kid = (token.get("cnf") or {}).get("kid")
    if kid != jwk_thumbprint(jwk):
        raise SHRRejected("the token's cnf.kid %r is not the SHR key's thumbprint %r" % (kid, jwk_thumbprint(jwk)))
    parts = urlsplit(url)
    want = {"m": method.upper(), "u": parts.netloc.lower(), "p": parts.path or "/"}
    for name, value in want.items():
        if payload.get(name) != value:
            raise SHRRejected("%s is %r, the request's %r" % (name, payload.get(name), value))
    if parts.query:
        if payload.get("q") != [[], parts.query]:
            raise SHRRejected("q is %r for the query %r" % (payload.get("q"), parts.query))
    elif "q" in payload:
        raise SHRRejected("q given for a request without a query")
    ts = payload.get("ts")
    now = time.time() if now is None else now
    if not isinstance(ts, int) or abs(now - ts) > window:
        raise SHRRejected("ts %r is not within %d s of now" % (ts, window))
    if nonce is not None and payload.get("nonce") != nonce:
        raise SHRRejected("nonce is %r, not %r" % (payload.get("nonce"), nonce))
    if client_claims is not None and payload.get("client_claims") != client_claims:
        raise SHRRejected("client_claims is %r, not %r" % (payload.get("client_claims"), client_claims))
    return payload


def header_value(authorization):
    """The SHR in an `Authorization` header value `PoP <SHR>`."""
    scheme, _, value = authorization.partition(" ")
    if scheme != "PoP" or not value:
        raise SHRRejected("not a PoP authorization: %r" % authorization[:12])
    return value


def sign(private_key, jwk, at, method, url, nonce=None, ts=None, alg="RS256"):
    """A test SHR made with PyJWT (the tests' own client, for the mock's tests)."""
    parts = urlsplit(url)
    payload = {"at": at, "ts": int(time.time()) if ts is None else ts, "m": method.upper(),
               "u": parts.netloc.lower(), "p": parts.path or "/", "cnf": {"jwk": jwk}}
    if parts.query:
        payload["q"] = [[], parts.query]
    if nonce is not None:
        payload["nonce"] = nonce
    return jwt.encode(payload, private_key, algorithm=alg, headers={"typ": "pop", "kid": jwk_thumbprint(jwk)})


def public_jwk(private_key):
    """The public JWK of an RSA or P-256 `cryptography` private key (members only, no kid)."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    algorithm = jwt.algorithms.RSAAlgorithm if isinstance(private_key, rsa.RSAPrivateKey) else jwt.algorithms.ECAlgorithm
    jwk = json.loads(algorithm.to_jwk(private_key.public_key()))
    return {k: v for k, v in jwk.items() if k in REQUIRED_MEMBERS[jwk["kty"]]}
