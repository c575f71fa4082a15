"""Issue 35, item 6: a tenant `..` (or `.`, `%2e%2e`, anything that is not a tenant ID, a domain
name or common/organizations/consumers) was accepted and became a path escape on the
authority. Every door refuses it with -32602 (the JSON-RPC `authority` of each token method,
and the configured authority at `initialize`) before any request leaves; the verbs' doors
(`token --tenant`, az's `--tenant`, azd's `tenantId`) are tested with their verbs."""
from __future__ import annotations

import pytest

import sidecar as sc


@pytest.mark.parametrize("tenant", ["..", ".", "%2e%2e", "a_b", "contoso..com"])
def test_a_request_authority_whose_tenant_is_not_one_is_invalid_params(launch, mock, tenant):
    p = launch()
    authority = f"{mock.url}/{tenant}"
    mock.admin.counts__reset()
    for method, params in [
        ("acquireTokenSilent", {"scopes": ["User.Read"], "authority": authority}),
        ("acquireToken", {"scopes": ["User.Read"], "authority": authority}),
        ("acquireToken", {"scopes": ["User.Read"], "authority": authority, "flow": "deviceCode"}),
    ]:
        e = p.error(method, params, -32602, name="invalidParams")
        assert e["data"]["member"] == "authority", e
        assert "is not a tenant" in e["message"] or "segment" in e["message"], e
    assert sum(mock.admin.counts().values()) == 0, "no request left for the mock"


def test_a_dot_segment_anywhere_in_a_request_authority_is_invalid_params(launch, mock):
    p = launch()
    e = p.error("acquireTokenSilent", {"scopes": ["User.Read"], "authority": f"{mock.url}/organizations/../common"},
                -32602, name="invalidParams")
    assert "must not hold a '..' segment" in e["message"], e


def test_a_configured_authority_whose_tenant_is_not_one_is_refused_at_initialize(launch, mock):
    p = launch(initialize=False)
    r = p.call("initialize", p.config_for(None, authority=f"{mock.url}/.."))
    e = sc.assert_error(r, -32602, name="invalidParams")
    assert e["data"]["member"] == "authority" and "is not a tenant" in e["message"], e
