"""OpenID configuration, JWKS, instance discovery."""

import pytest

from flows import assert_error_shape, sign_in
from mock_idp.state import B2C_TENANT_ID, CONTOSO_TENANT_ID, MSA_TENANT_ID
from mock_idp.testing import http


@pytest.mark.parametrize("tenant,issuer_tid", [
    ("common", "{tenantid}"), ("organizations", "{tenantid}"), ("consumers", MSA_TENANT_ID),
    (CONTOSO_TENANT_ID, CONTOSO_TENANT_ID), ("contoso.onmicrosoft.com", CONTOSO_TENANT_ID),
])
def test_openid_configuration(mock, tenant, issuer_tid):
    doc = http("GET", "%s/%s/v2.0/.well-known/openid-configuration" % (mock.url, tenant),
               mock.ca_file).json()
    assert doc["issuer"] == "%s/%s/v2.0" % (mock.url, issuer_tid)
    for name in ("authorize", "token", "devicecode", "logout"):
        assert "%s/%s/oauth2/v2.0/%s" % (mock.url, tenant, name) in doc.values()
    assert doc["jwks_uri"] == "%s/%s/discovery/v2.0/keys" % (mock.url, tenant)
    assert mock.admin.count("openid-configuration") == 1


def test_unknown_tenant(mock):
    resp = http("GET", mock.url + "/nosuch.example/v2.0/.well-known/openid-configuration",
                mock.ca_file, headers={"client-request-id": "corr-1"})
    assert resp.status == 400
    body = assert_error_shape(resp.json(), "invalid_tenant", 90002)
    assert body["correlation_id"] == "corr-1"


def test_jwks_verifies_issued_tokens(mock):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from mock_idp.jwtsign import b64url_decode

    keys = http("GET", mock.url + "/common/discovery/v2.0/keys", mock.ca_file).json()["keys"]
    tokens, _ = sign_in(mock)
    head, body, sig = tokens["id_token"].split(".")
    key = rsa.RSAPublicNumbers(int.from_bytes(b64url_decode(keys[0]["e"]), "big"),
                               int.from_bytes(b64url_decode(keys[0]["n"]), "big")).public_key()
    key.verify(b64url_decode(sig), (head + "." + body).encode(), padding.PKCS1v15(),
               hashes.SHA256())
    assert keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256"


def test_instance_discovery(mock):
    endpoint = mock.url + "/contoso.com/oauth2/v2.0/authorize"
    resp = http("GET", mock.url + "/common/discovery/instance?api-version=1.1&"
                "authorization_endpoint=" + endpoint, mock.ca_file).json()
    assert resp["tenant_discovery_endpoint"] == \
        mock.url + "/contoso.com/v2.0/.well-known/openid-configuration"
    host = mock.url.split("//")[1]
    assert host in resp["metadata"][0]["aliases"]
    assert "login.microsoftonline.com" in resp["metadata"][1]["aliases"]
    assert mock.admin.count("instance-discovery") == 1


def test_instance_discovery_errors(mock):
    bad = http("GET", mock.url + "/common/discovery/instance?api-version=1.1&"
               "authorization_endpoint=https://evil.example/common/oauth2/v2.0/authorize",
               mock.ca_file)
    assert bad.status == 400 and bad.json()["error"] == "invalid_instance"
    assert bad.json()["error_codes"] == [50049]
    version = http("GET", mock.url + "/common/discovery/instance?api-version=9", mock.ca_file)
    assert version.status == 400 and version.json()["error_codes"] == [90003]


def test_b2c_discovery_both_forms(mock):
    for path in ("/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", "/fabrikamb2c.onmicrosoft.com/b2c_1_susi"):
        doc = http("GET", mock.url + path + "/v2.0/.well-known/openid-configuration",
                   mock.ca_file).json()
        assert doc["issuer"] == "%s/tfp/%s/B2C_1_susi/v2.0/" % (mock.url, B2C_TENANT_ID)
        assert doc["token_endpoint"] == mock.url + \
            "/fabrikamb2c.onmicrosoft.com/b2c_1_susi/oauth2/v2.0/token"
        assert "device_authorization_endpoint" not in doc
    other = http("GET", mock.url + "/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_edit_profile"
                 "/v2.0/.well-known/openid-configuration", mock.ca_file).json()
    assert other["issuer"].endswith("/B2C_1_edit_profile/v2.0/")


def test_b2c_unknown_policy(mock):
    resp = http("GET", mock.url + "/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_nope"
                "/v2.0/.well-known/openid-configuration", mock.ca_file)
    assert resp.status == 400
    assert_error_shape(resp.json(), "invalid_request", "AADB2C90008")


def test_unknown_path_is_404(mock):
    assert http("GET", mock.url + "/nothing-here", mock.ca_file).status == 404
    assert http("GET", mock.url + "/common/oauth2/v2.0/nothing", mock.ca_file).status == 404
