"""The device code grant and its polling errors; the approve/decline controls."""

import pytest

from flows import assert_error_shape, endpoint_url, token, unverified_claims
from mock_idp.testing import http

GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def start(mock, tenant="organizations", scope="User.Read openid profile offline_access", **form):
    form.setdefault("client_id", mock.client_id)
    form.setdefault("scope", scope)
    return http("POST", endpoint_url(mock, tenant, "devicecode"), mock.ca_file,
                form={k: v for k, v in form.items() if v is not None})


def poll(mock, flow, tenant="organizations"):
    return token(mock, tenant, grant_type=GRANT, device_code=flow["device_code"])


def test_pending_then_approved(mock):
    mock.admin.config(device_code_interval=2, device_code_lifetime=60)
    flow = start(mock).json()
    assert flow["interval"] == 2 and flow["expires_in"] == 60 and len(flow["user_code"]) == 9
    assert flow["user_code"] in flow["message"] and flow["verification_uri"] in flow["message"]
    assert_error_shape(poll(mock, flow).json(), "authorization_pending", 70016)
    assert mock.admin.device("approve", flow["user_code"], "bob@contoso.com")["polls"] == 1
    result = poll(mock, flow)
    assert result.status == 200
    assert unverified_claims(result.json()["id_token"])["preferred_username"] == "bob@contoso.com"
    assert_error_shape(poll(mock, flow).json(), "invalid_grant", 70000)    # single use
    assert mock.admin.count("devicecode") == 1 and mock.admin.count("token:device_code") == 3


@pytest.mark.parametrize("action,error,code", [
    ("decline", "authorization_declined", 70000),
    ("expire", "expired_token", 70020),
])
def test_decline_and_expire(mock, action, error, code):
    flow = start(mock).json()
    mock.admin.device(action)          # "latest" device code
    assert_error_shape(poll(mock, flow).json(), error, code)


def test_slow_down(mock):
    flow = start(mock).json()
    mock.admin.device("slow_down", flow["user_code"])
    assert_error_shape(poll(mock, flow).json(), "slow_down", 70019)
    assert_error_shape(poll(mock, flow).json(), "authorization_pending", 70016)


def test_expiry_by_clock(mock):
    flow = start(mock).json()
    mock.admin.advance_clock(flow["expires_in"] + 1)
    assert_error_shape(poll(mock, flow).json(), "expired_token", 70020)


def test_errors(mock):
    assert_error_shape(start(mock, client_id="nope").json(), "unauthorized_client", 700016)
    assert_error_shape(start(mock, scope=None).json(), "invalid_scope", 70011)
    assert_error_shape(token(mock, grant_type=GRANT, device_code="bogus").json(),
                       "invalid_grant", 70000)
    assert_error_shape(token(mock, grant_type=GRANT).json(), "invalid_request", 900144)
    with pytest.raises(RuntimeError):
        mock.admin.device("approve", "NOSUCHCOD")


def test_devicelogin_page(mock):
    flow = start(mock).json()
    page = http("GET", flow["verification_uri"], mock.ca_file)
    assert page.status == 200 and "user_code" in page.text
    done = http("POST", flow["verification_uri"], mock.ca_file,
                form={"user_code": flow["user_code"].lower(), "mock_action": "approve"})
    assert "signed in" in done.text
    assert poll(mock, flow).status == 200
    flow2 = start(mock).json()
    http("POST", flow["verification_uri"], mock.ca_file,
         form={"user_code": flow2["user_code"], "mock_action": "decline"})
    assert poll(mock, flow2).json()["error"] == "authorization_declined"


def test_a_tenant_can_refuse_the_device_code_flow(mock):
    contoso = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
    mock.admin.tenants(id=contoso, device_code_blocked=True)
    # At the tenant's own authority: refused before any code is given.
    assert_error_shape(start(mock, tenant="contoso.com").json(), "invalid_grant", 53003, suberror="message_only")
    # At organizations: the code is given, and refused once a user of that tenant approved it.
    flow = start(mock).json()
    mock.admin.device("approve", flow["user_code"], "bob@contoso.com")
    assert_error_shape(poll(mock, flow).json(), "invalid_grant", 53003, suberror="message_only")
    # Switched off, the flow works again.
    mock.admin.tenants(id=contoso, device_code_blocked=False)
    flow = start(mock).json()
    mock.admin.device("approve", flow["user_code"], "bob@contoso.com")
    assert poll(mock, flow).status == 200
