"""JSON Web Tokens: RS256 (the Microsoft-shaped endpoints) and ES256 (the generic issuers).

Signing, RS256 verification and the JWKS documents.
"""

import base64
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature


def b64url(data):
    """Base64url without padding (bytes or str in, str out)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    text = text + "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(text.encode("ascii"))


def _int_b64(value, length=None):
    return b64url(value.to_bytes(length or (value.bit_length() + 7) // 8, "big"))


def _signing_input(header, claims):
    return (b64url(json.dumps(header, separators=(",", ":"))) + "." +
            b64url(json.dumps(claims, separators=(",", ":"))))


class Signer:
    """One RSA key pair; signs JWTs and publishes its JWKS."""

    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "use": "sig", "alg": "RS256",
                    "n": _int_b64(numbers.n), "e": _int_b64(numbers.e)}
        self.kid = b64url(hashlib.sha256(self.jwk["n"].encode()).digest()[:15])
        self.jwk["kid"] = self.kid
        self.jwk["x5t"] = self.kid

    def jwks(self, issuer=None):
        key = dict(self.jwk)
        if issuer:
            key["issuer"] = issuer
        return {"keys": [key]}

    def sign(self, claims, typ="JWT"):
        header = {"typ": typ, "alg": "RS256", "kid": self.kid, "x5t": self.kid}
        signing_input = _signing_input(header, claims)
        signature = self.key.sign(signing_input.encode("ascii"),
                                  padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def verify(self, token):
        """Return the claims if the signature is ours and valid, else raise ValueError."""
        signing_input, claims, signature = _checked_parts(token, "RS256", self.kid)
        try:
            self.key.public_key().verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature as exc:
            raise ValueError("invalid signature") from exc
        return claims


class ECSigner:
    """One EC P-256 key pair (a generic issuer's); signs ES256 JWTs and publishes its JWKS."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        x, y = _int_b64(numbers.x, 32), _int_b64(numbers.y, 32)
        # kid = the RFC 7638 thumbprint of the public key
        thumbprint = json.dumps({"crv": "P-256", "kty": "EC", "x": x, "y": y}, separators=(",", ":"))
        self.kid = b64url(hashlib.sha256(thumbprint.encode()).digest())
        self.jwk = {"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": self.kid,
                    "use": "sig", "alg": "ES256"}

    def jwks(self):
        return {"keys": [dict(self.jwk)]}

    def sign(self, claims, typ="JWT"):
        """JWS signature = r || s, 32 bytes each (RFC 7518 section 3.4), not DER."""
        signing_input = _signing_input({"typ": typ, "alg": "ES256", "kid": self.kid}, claims)
        r, s = decode_dss_signature(self.key.sign(signing_input.encode("ascii"),
                                                  ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def verify(self, token):
        """Return the claims if the ES256 signature is ours and valid, else raise ValueError."""
        signing_input, claims, raw = _checked_parts(token, "ES256", self.kid)
        if len(raw) != 64:
            raise ValueError("malformed signature")
        signature = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            self.key.public_key().verify(signature, signing_input, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature as exc:
            raise ValueError("invalid signature") from exc
        return claims


def _checked_parts(token, alg, kid):
    """(signing input bytes, claims, signature bytes) of a JWT whose header names `alg` and
    `kid`; ValueError when it is malformed or names another key or algorithm."""
    try:
        head, body, sig = token.split(".")
        header = json.loads(b64url_decode(head))
        claims = json.loads(b64url_decode(body))
        signature = b64url_decode(sig)
    except (ValueError, TypeError) as exc:
        raise ValueError("malformed token") from exc
    if header.get("alg") != alg or header.get("kid") != kid:
        raise ValueError("unknown signing key or algorithm")
    return (head + "." + body).encode("ascii"), claims, signature


def unverified_claims(token):
    """Decode a JWT's payload without checking anything (for tests and diagnostics)."""
    return json.loads(b64url_decode(token.split(".")[1]))
