"""Azure AD B2C: policies, per-policy issuers, home account ids, B2C errors."""

from flows import (assert_error_shape, authorize, decode_client_info, redirect_params, refresh,
                   sign_in, unverified_claims)
from mock_idp.state import B2C_TENANT_ID

DAVE = "da7e0000-0000-4000-8000-000000000004"
SCOPE = "https://fabrikamb2c.onmicrosoft.com/api/demo.read openid offline_access"


def test_sign_in_per_policy(mock):
    for tenant, policy in [("tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", "B2C_1_susi"),
                           ("fabrikamb2c.onmicrosoft.com/b2c_1_edit_profile", "B2C_1_edit_profile"),
                           (B2C_TENANT_ID + "/B2C_1_reset", "B2C_1_reset")]:
        tokens, _ = sign_in(mock, tenant, scope=SCOPE)
        info = decode_client_info(tokens["client_info"])
        assert info == {"uid": "%s-%s" % (DAVE, policy.lower()), "utid": B2C_TENANT_ID}
        idt = unverified_claims(tokens["id_token"])
        assert idt["tfp"] == policy and idt["iss"] == "%s/tfp/%s/%s/v2.0/" % (
            mock.url, B2C_TENANT_ID, policy)
        assert idt["emails"] == ["dave@fabrikam.example"] and "preferred_username" not in idt
        assert unverified_claims(tokens["access_token"])["aud"] == \
            "https://fabrikamb2c.onmicrosoft.com/api"
        assert tokens["refresh_token_expires_in"] > 0 and tokens["id_token_expires_in"] > 0


def test_b2c_only_b2c_users_and_preferred_username_option(mock):
    mock.admin.config(b2c_preferred_username=True)
    got = redirect_params(authorize(mock, "tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi",
                                    login_hint="alice@contoso.com", scope=SCOPE))
    assert decode_client_info(got["client_info"])["uid"].startswith(DAVE)
    tokens, _ = sign_in(mock, "tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", scope=SCOPE)
    assert unverified_claims(tokens["id_token"])["preferred_username"] == "dave@fabrikam.example"


def test_b2c_openid_only_gives_app_token(mock):
    tokens, _ = sign_in(mock, "tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi",
                        scope="openid offline_access")
    assert unverified_claims(tokens["access_token"])["aud"] == mock.client_id


def test_b2c_refresh_and_revocation(mock):
    tenant = "fabrikamb2c.onmicrosoft.com/b2c_1_susi"
    tokens, _ = sign_in(mock, tenant, scope=SCOPE)
    assert refresh(mock, tokens["refresh_token"], tenant, scope=SCOPE).status == 200
    other_policy = refresh(mock, tokens["refresh_token"], "fabrikamb2c.onmicrosoft.com/B2C_1_reset",
                           scope=SCOPE)
    assert other_policy.json()["error"] == "invalid_grant"
    mock.admin.revoke(username="dave@fabrikam.example")
    assert_error_shape(refresh(mock, tokens["refresh_token"], tenant, scope=SCOPE).json(),
                       "invalid_grant", "AADB2C90080")


def test_b2c_forgot_password_and_cancel(mock):
    tenant = "tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi"
    mock.admin.authorize__next(outcome="forgot_password")
    mock.admin.authorize__next(outcome="b2c_cancel")
    first = redirect_params(authorize(mock, tenant, scope=SCOPE))
    assert first["error"] == "access_denied" and first["error_description"].startswith("AADB2C90118:")
    second = redirect_params(authorize(mock, tenant, scope=SCOPE))
    assert second["error_description"].startswith("AADB2C90091:")
