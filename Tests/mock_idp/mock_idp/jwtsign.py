"""RS256 JSON Web Tokens: signing, verification and the JWKS document."""

import base64
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def b64url(data):
    """Base64url without padding (bytes or str in, str out)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    text = text + "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(text.encode("ascii"))


def _int_b64(value):
    return b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))


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
        signing_input = (b64url(json.dumps(header, separators=(",", ":"))) + "." +
                         b64url(json.dumps(claims, separators=(",", ":"))))
        signature = self.key.sign(signing_input.encode("ascii"),
                                  padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def verify(self, token):
        """Return the claims if the signature is ours and valid, else raise ValueError."""
        try:
            head, body, sig = token.split(".")
            header = json.loads(b64url_decode(head))
            claims = json.loads(b64url_decode(body))
            signature = b64url_decode(sig)
        except (ValueError, TypeError) as exc:
            raise ValueError("malformed token") from exc
        if header.get("alg") != "RS256" or header.get("kid") != self.kid:
            raise ValueError("unknown signing key or algorithm")
        try:
            self.key.public_key().verify(signature, (head + "." + body).encode("ascii"),
                                         padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature as exc:
            raise ValueError("invalid signature") from exc
        return claims


def unverified_claims(token):
    """Decode a JWT's payload without checking anything (for tests and diagnostics)."""
    return json.loads(b64url_decode(token.split(".")[1]))
