"""The directory and housekeeping controls."""

import pytest

from flows import authorize, decode_client_info, redirect_params, sign_in
from mock_idp.testing import http


def test_state_and_reset(mock):
    state = mock.admin.call("state")
    assert state["base_url"] == mock.url
    assert {u["username"] for u in state["users"]} >= {"alice@contoso.com", "dave@fabrikam.example"}
    mock.admin.config(access_token_lifetime=7)
    mock.admin.advance_clock(100)
    mock.admin.reset()
    state = mock.admin.call("state")
    assert state["config"]["access_token_lifetime"] == 3600 and state["clock_offset"] == 0


def test_config_rejects_unknown_keys(mock):
    with pytest.raises(RuntimeError):
        mock.admin.config(no_such_key=1)


def test_default_user(mock):
    mock.admin.config(default_user="bob@contoso.com")
    got = redirect_params(authorize(mock))
    assert decode_client_info(got["client_info"])["uid"].startswith("b0b0")


def test_users_create_update_delete(mock):
    user = mock.admin.users(username="erin@contoso.com", name="Erin New", tenant="contoso.com")
    assert user["tid"] == "aaaabbbb-0000-cccc-1111-dddd2222eeee"
    tokens, _ = sign_in(mock, login_hint="erin@contoso.com")
    me = http("GET", mock.url + "/v1.0/me", mock.ca_file,
              headers={"Authorization": "Bearer " + tokens["access_token"]}).json()
    assert me["displayName"] == "Erin New"
    mock.admin.users(username="erin@contoso.com", name="Erin Renamed")
    mock.admin.users__delete(username="erin@contoso.com")
    with pytest.raises(RuntimeError):
        mock.admin.users__delete(username="erin@contoso.com")
    with pytest.raises(RuntimeError):
        mock.admin.users(username="x@y", tenant="no-such-tenant")


def test_tenants_and_clients(mock):
    mock.admin.tenants(id="cccccccc-0000-4000-8000-000000000000", domains=["tailspin.example"])
    mock.admin.users(username="tom@tailspin.example", tenant="tailspin.example")
    doc = http("GET", mock.url + "/tailspin.example/v2.0/.well-known/openid-configuration",
               mock.ca_file).json()
    assert doc["issuer"].endswith("/cccccccc-0000-4000-8000-000000000000/v2.0")
    mock.admin.clients(client_id="app-2", redirect_uris=["https://app.example/cb"])
    ok = authorize(mock, "tailspin.example", client_id="app-2", redirect_uri="https://app.example/cb")
    assert ok.headers["Location"].startswith("https://app.example/cb?code=")
    bad = authorize(mock, client_id="app-2")   # loopback not registered for app-2
    assert bad.status == 400 and "AADSTS50011" in bad.text
    with pytest.raises(RuntimeError):
        mock.admin.clients()


def test_new_b2c_tenant_with_policy(mock):
    mock.admin.tenants(id="dddddddd-0000-4000-8000-000000000000", domains=["woodgrove.example"],
                       b2c=True, policies=["B2C_1_signin"])
    mock.admin.users(username="wendy@woodgrove.example", tenant="woodgrove.example")
    got = redirect_params(authorize(mock, "tfp/woodgrove.example/B2C_1_signin",
                                    scope="openid offline_access"))
    assert decode_client_info(got["client_info"])["uid"].endswith("-b2c_1_signin")


def test_unknown_admin_endpoint(mock):
    resp = http("GET", mock.url + "/_admin/nope", mock.ca_file)
    assert resp.status == 404 and "reset" in resp.json()["endpoints"]
    with pytest.raises(RuntimeError):
        mock.admin.revoke(username="nobody@nowhere")
    with pytest.raises(RuntimeError):
        mock.admin.conditional_access(username="alice@contoso.com", mode="weird")
    with pytest.raises(RuntimeError):
        mock.admin.authorize__next(outcome="weird")


def test_clock_offset(mock):
    first = mock.admin.call("clock", {"offset": 50})
    assert first["offset"] == 50
    assert mock.admin.advance_clock(10)["offset"] == 60
