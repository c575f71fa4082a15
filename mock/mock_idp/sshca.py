"""The SSH user CA: `token_type=ssh-cert` token requests get an OpenSSH user certificate.

As Entra ID does for `az ssh cert` (scope https://pas.windows.net/CheckMyAccess/Linux/.default):
the request carries `req_cnf`, the JWK of the user's RSA public key as a JSON string
(`{"kty":"RSA","n":...,"e":...,"kid":...}`) and `key_id`; the answer's `token_type` is `ssh-cert`
and its `access_token` the certificate, base64 (the blob after `ssh-rsa-cert-v01@openssh.com`).
The certificate names the user's UPN as its one principal and the JWK's `kid` as its key id; it is
valid from now for config `ssh_cert_lifetime` seconds. The CA key is made once per mock process
(kept across resets); its public key is STATE_DIR/ssh_user_ca.pub and GET /_admin/ssh-user-ca.pub.
"""

import base64
import binascii
import json
import os
import secrets

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from .errors import OAuthError
from .http_util import Response
from .issue import OIDC_SCOPES

CA_FILE = "ssh_user_ca.pub"
EXTENSIONS = (b"permit-X11-forwarding", b"permit-agent-forwarding", b"permit-port-forwarding",
              b"permit-pty", b"permit-user-rc")


class UserCA:
    """The CA key and its public line, written to STATE_DIR/ssh_user_ca.pub."""

    def __init__(self, state_dir):
        self.key = ed25519.Ed25519PrivateKey.generate()
        self.public_line = self.key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b" mock-idp-ssh-user-ca\n"
        self.path = os.path.join(state_dir, CA_FILE)
        with open(self.path, "wb") as f:
            f.write(self.public_line)


def public_key_response(app):
    """GET /_admin/ssh-user-ca.pub: the CA's public key line (TrustedUserCAKeys)."""
    return Response(200, app.ssh_ca.public_line, content_type="text/plain; charset=utf-8")


def requested(req):
    """True when the token request asks for an SSH certificate."""
    return (req.param("token_type") or "").lower() == "ssh-cert"


def _b64url_int(text, name):
    if not isinstance(text, str) or not text:
        raise OAuthError("bad_req_cnf", reason="'%s' is missing" % name)
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise OAuthError("bad_req_cnf", reason="'%s' is not base64url" % name) from None
    return int.from_bytes(raw, "big")


def request_key(req):
    """The RSA public key and kid of the request's `req_cnf`, or invalid_request."""
    text = req.param("req_cnf")
    if not text:
        raise OAuthError("missing_parameter", param="req_cnf")
    try:
        jwk = json.loads(text)
    except ValueError:
        raise OAuthError("bad_req_cnf", reason="not JSON") from None
    if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
        raise OAuthError("bad_req_cnf", reason="'kty' must be 'RSA'")
    n, e = _b64url_int(jwk.get("n"), "n"), _b64url_int(jwk.get("e"), "e")
    kid = jwk.get("kid")
    if not isinstance(kid, str) or not kid:
        raise OAuthError("bad_req_cnf", reason="'kid' is missing")
    if n.bit_length() < 2048 or e < 3 or e % 2 == 0:
        raise OAuthError("bad_req_cnf", reason="not a usable RSA key")
    try:
        key = rsa.RSAPublicNumbers(e, n).public_key()
    except ValueError:
        raise OAuthError("bad_req_cnf", reason="not a usable RSA key") from None
    return key, kid


def check_consent(state, client_id):
    """A client config `ssh_cert_unconsented_clients` names has not been consented the scope."""
    if client_id in state.config["ssh_cert_unconsented_clients"]:
        raise OAuthError("consent_required", suberror="consent_required", client_id=client_id)


def certify(app, response, user, key, kid, scope):
    """Turn a token response into an ssh-cert one for `key` (principal: the user's UPN)."""
    now = int(app.state.now())
    life = int(app.state.config["ssh_cert_lifetime"])
    builder = (serialization.SSHCertificateBuilder()
               .public_key(key)
               .serial(secrets.randbits(64))
               .type(serialization.SSHCertificateType.USER)
               .key_id(kid.encode())
               .valid_principals([user["username"].encode()])
               .valid_after(now)
               .valid_before(now + life))
    for name in EXTENSIONS:
        builder = builder.add_extension(name, b"")
    cert = builder.sign(app.ssh_ca.key)
    blob = cert.public_bytes().split(b" ")[1].decode("ascii")
    response.update({"token_type": "ssh-cert", "access_token": blob, "expires_in": life,
                     "ext_expires_in": life,
                     "scope": " ".join(s for s in scope.split() if s.lower() not in OIDC_SCOPES)})
    response.pop("refresh_in", None)
    return response
