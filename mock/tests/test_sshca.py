"""token_type=ssh-cert: OpenSSH user certificates signed by the mock's SSH user CA."""

import base64
import hashlib
import json
import os

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from flows import assert_error_shape, refresh, sign_in
from mock_idp.testing import http

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"


def _b64url(number):
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def ssh_form(key):
    """The form `az ssh cert` sends: req_cnf = the JWK with kid, key_id = kid."""
    numbers = key.public_key().public_numbers()
    n, e = _b64url(numbers.n), _b64url(numbers.e)
    kid = hashlib.sha256((n + e).encode()).hexdigest()
    jwk = {"kty": "RSA", "n": n, "e": e, "kid": kid}
    return {"token_type": "ssh-cert", "req_cnf": json.dumps(jwk), "key_id": kid}


@pytest.fixture(scope="module")
def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _rt(mock):
    tokens, _ = sign_in(mock)
    return tokens["refresh_token"]


def _ca(mock):
    resp = http("GET", mock.url + "/_admin/ssh-user-ca.pub", mock.ca_file)
    assert resp.status == 200
    return serialization.load_ssh_public_key(resp.text.encode())


def test_ssh_cert_for_the_requested_key(mock, rsa_key):
    mock.admin.config(ssh_cert_lifetime=120)
    form = ssh_form(rsa_key)
    resp = refresh(mock, _rt(mock), scope=PAS + " openid offline_access", **form)
    assert resp.status == 200, resp.text
    body = resp.json()
    assert body["token_type"] == "ssh-cert" and body["expires_in"] == 120
    assert body["scope"] == PAS and body["refresh_token"]
    cert = serialization.load_ssh_public_identity(
        b"ssh-rsa-cert-v01@openssh.com " + body["access_token"].encode())
    assert cert.type == serialization.SSHCertificateType.USER
    assert cert.valid_principals == [b"alice@contoso.com"]
    assert cert.key_id == form["key_id"].encode()
    assert cert.valid_before - cert.valid_after == 120
    assert cert.public_key().public_numbers() == rsa_key.public_key().public_numbers()
    assert b"permit-pty" in cert.extensions
    cert.verify_cert_signature()
    ca = _ca(mock)
    assert cert.signature_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) == ca.public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)


def test_ca_file_in_state_dir(mock):
    path = os.path.join(mock.process.ready["stateDir"], "ssh_user_ca.pub")
    with open(path) as f:
        line = f.read()
    assert line.startswith("ssh-ed25519 ")
    assert http("GET", mock.url + "/_admin/ssh-user-ca.pub", mock.ca_file).text == line


def test_default_lifetime_and_bearer_unchanged(mock, rsa_key):
    rt = _rt(mock)
    body = refresh(mock, rt, scope=PAS, **ssh_form(rsa_key)).json()
    assert body["expires_in"] == 3600
    assert refresh(mock, rt).json()["token_type"] == "Bearer"


@pytest.mark.parametrize("change", [
    {"req_cnf": "not json"},
    {"req_cnf": json.dumps({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "kid": "k"})},
    {"req_cnf": json.dumps({"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "k"})},
    {"req_cnf": json.dumps({"kty": "RSA", "e": "AQAB", "kid": "k"})},
    {"req_cnf": json.dumps(["RSA"])},
])
def test_malformed_req_cnf(mock, rsa_key, change):
    form = dict(ssh_form(rsa_key), **change)
    resp = refresh(mock, _rt(mock), scope=PAS, **form)
    assert resp.status == 400
    assert_error_shape(resp.json(), "invalid_request", 5002710)


def test_missing_kid_and_missing_req_cnf(mock, rsa_key):
    form = ssh_form(rsa_key)
    jwk = json.loads(form["req_cnf"])
    del jwk["kid"]
    rt = _rt(mock)
    assert_error_shape(refresh(mock, rt, scope=PAS, **dict(form, req_cnf=json.dumps(jwk))).json(),
                       "invalid_request", 5002710)
    del form["req_cnf"]
    assert_error_shape(refresh(mock, rt, scope=PAS, **form).json(), "invalid_request", 900144)


def test_not_consented_client(mock, rsa_key):
    rt = _rt(mock)
    mock.admin.config(ssh_cert_unconsented_clients=[mock.client_id])
    resp = refresh(mock, rt, scope=PAS, **ssh_form(rsa_key))
    assert resp.status == 400
    assert_error_shape(resp.json(), "invalid_grant", 65001, suberror="consent_required")

