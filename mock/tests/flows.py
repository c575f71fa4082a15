"""Raw-HTTP helpers for the mock's own tests (no MSAL)."""

import base64
import hashlib
import html.parser
import json
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit

from mock_idp.jwtsign import unverified_claims  # noqa: F401  (re-exported for tests)
from mock_idp.testing import http

REDIRECT = "http://localhost:8765"
SCOPE = "User.Read openid profile offline_access"


def pkce():
    verifier = secrets.token_urlsafe(40)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


class _Inputs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""


def redirect_params(resp):
    """Parameters delivered to the redirect URI (query, fragment or form_post)."""
    if resp.status == 302:
        location = resp.headers["Location"]
        parts = urlsplit(location)
        return dict(parse_qsl(parts.fragment or parts.query))
    parser = _Inputs()
    parser.feed(resp.text)
    return parser.fields


def endpoint_url(mock, tenant, name):
    """URL of the endpoint `name` (authorize, token, devicecode, logout) of an authority:
    a tenant ("organizations", "tfp/…") or a generic issuer ("issuers/a")."""
    if tenant.startswith("issuers/"):
        return "%s/%s/%s" % (mock.url, tenant, "device" if name == "devicecode" else name)
    return "%s/%s/oauth2/v2.0/%s" % (mock.url, tenant, name)


def authorize(mock, tenant="organizations", cookie=None, **params):
    """GET /authorize with sane defaults; None values drop a parameter."""
    verifier, challenge = pkce()
    query = {"client_id": mock.client_id, "redirect_uri": REDIRECT, "response_type": "code",
             "scope": SCOPE, "state": "st-" + secrets.token_hex(4), "nonce": "n-123",
             "code_challenge": challenge, "code_challenge_method": "S256", "client_info": "1"}
    query.update(params)
    query = {k: v for k, v in query.items() if v is not None}
    headers = {"Cookie": cookie} if cookie else {}
    resp = http("GET", endpoint_url(mock, tenant, "authorize") + "?" + urlencode(query),
                mock.ca_file, headers=headers)
    resp.verifier, resp.sent = verifier, query
    return resp


def session_cookie(resp):
    value = resp.headers.get("Set-Cookie", "")
    return value.split(";")[0] if value else None


def token(mock, tenant="organizations", headers=None, **form):
    form.setdefault("client_id", mock.client_id)
    return http("POST", endpoint_url(mock, tenant, "token"), mock.ca_file,
                form=form, headers=headers)


def sign_in(mock, tenant="organizations", scope=SCOPE, **params):
    """Authorize + redeem the code. Returns (token response json, session cookie)."""
    resp = authorize(mock, tenant, scope=scope, **params)
    got = redirect_params(resp)
    assert "code" in got, got
    tok = token(mock, tenant, grant_type="authorization_code", code=got["code"],
                redirect_uri=REDIRECT, code_verifier=resp.verifier, scope=scope, client_info="1")
    assert tok.status == 200, tok.text
    return tok.json(), session_cookie(resp)


def refresh(mock, rt, tenant="organizations", scope=SCOPE, **form):
    return token(mock, tenant, grant_type="refresh_token", refresh_token=rt, scope=scope, **form)


def assert_error_shape(body, error, code, suberror=None):
    """Every field Microsoft sends with an error, and the AADSTS prefix."""
    prefix = code if isinstance(code, str) else "AADSTS%d" % code
    number = int(code[6:]) if isinstance(code, str) else code
    assert body["error"] == error, body
    assert body["error_description"].startswith(prefix + ":"), body
    assert "Trace ID: " in body["error_description"]
    assert "Correlation ID: " in body["error_description"]
    assert body["error_codes"] == [number]
    for key in ("timestamp", "trace_id", "correlation_id", "error_uri"):
        assert body[key], key
    assert body.get("suberror") == suberror
    return body


def decode_client_info(value):
    return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_jwt(jwt, jwks):
    """Verify an ES256 (signature = r || s) or RS256 JWT against a JWKS document with
    `cryptography`; return (header, claims). Raises InvalidSignature when it does not verify."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    head, body, sig = jwt.split(".")
    header, raw, data = json.loads(b64url_decode(head)), b64url_decode(sig), (head + "." + body).encode()
    jwk = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
    number = lambda name: int.from_bytes(b64url_decode(jwk[name]), "big")  # noqa: E731
    assert header["alg"] == jwk["alg"] and jwk["use"] == "sig", (header, jwk)
    if header["alg"] == "ES256":
        assert (jwk["kty"], jwk["crv"], len(raw)) == ("EC", "P-256", 64)
        key = ec.EllipticCurvePublicNumbers(number("x"), number("y"), ec.SECP256R1()).public_key()
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        key.verify(der, data, ec.ECDSA(hashes.SHA256()))
    else:
        assert header["alg"] == "RS256" and jwk["kty"] == "RSA"
        key = rsa.RSAPublicNumbers(number("e"), number("n")).public_key()
        key.verify(raw, data, padding.PKCS1v15(), hashes.SHA256())
    return header, json.loads(b64url_decode(body))
