"""Params validation (-32602 naming the member) and the methods of session 1."""
import json

import pytest

import sidecar as sc

# What is built and what is planned comes from the protocol's single source of truth,
# the x-status of each method in protocol/openrpc.json (client-to-server requests).
PLANNED = sc.protocol_requests("planned")
IMPLEMENTED_AUTH = [m for m in ["getCurrentAccount", "getAccounts", "acquireToken", "acquireTokenSilent", "signout",
                                "callGraph", "signHttpRequest"] if m in sc.protocol_requests("implemented")]


def member_error(msg, id):
    e = sc.assert_error(msg, -32602, id=id, name="invalidParams")
    return e["data"].get("member")


def test_get_device_information_shape(spawn, framing):
    p = spawn(framing=framing)
    r = sc.assert_result(p.request("getDeviceInformation", {}, 1), id=1)
    assert r["deviceMode"] == "private"
    assert r["sharedDeviceModeSource"] == "default"
    assert r["brokerAvailable"] is False
    x = r["extraDeviceInformation"]
    assert x["os"] == "Linux"
    for k in ("osRelease", "kernelRelease", "architecture", "hostname"):
        assert k in x, x
    assert isinstance(x["canOpenBrowser"], bool) and isinstance(x["headless"], bool)
    assert x["browserCommand"] is None or isinstance(x["browserCommand"], str)


def test_get_device_information_without_params(spawn, framing):
    p = spawn(framing=framing)
    sc.assert_result(p.request("getDeviceInformation", id=1, no_params=True), id=1)


def test_get_device_information_policy_file(spawn, framing, tmp_path):
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps({"sharedDeviceMode": True}))
    p = spawn(framing=framing, env={"AUTH_SIDECAR_POLICY_FILE": str(pol)})
    r = sc.assert_result(p.request("getDeviceInformation", {}, 1), id=1)
    assert r["deviceMode"] == "shared" and r["sharedDeviceModeSource"] == "policyFile", r


def test_get_device_information_shared_by_initialize(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555", "sharedDeviceMode": True}, 1), id=1)
    r = sc.assert_result(p.request("getDeviceInformation", {}, 2), id=2)
    assert r["deviceMode"] == "shared" and r["sharedDeviceModeSource"] == "configuration", r


def test_get_device_information_unknown_member(spawn, framing):
    p = spawn(framing=framing)
    assert member_error(p.request("getDeviceInformation", {"bogus": 1}, 1), 1) == "bogus"


def test_get_device_information_positional(spawn, framing):
    p = spawn(framing=framing)
    sc.assert_error(p.request("getDeviceInformation", [], 1), -32602, id=1, name="invalidParams")


@pytest.mark.parametrize("params", ['"str"', "42", "true"])
def test_params_not_structured(spawn, framing, params):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"getDeviceInformation","id":1,"params":' +
                        params.encode() + b"}", framing))
    m = p.next_message()
    sc.check_response(m)
    assert "error" in m and m["error"]["code"] in (-32600, -32602), m


def test_explicit_null_params(spawn, framing):
    # "params": null is "no params" (Emacs's jsonrpc.el, so Eglot, sends it).
    p = spawn(framing=framing)
    for method in ("getDeviceInformation", "ping", "getAccounts"):
        p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"%s","id":1,"params":null}' % method.encode(), framing))
        m = p.next_message()
        sc.check_response(m)
        assert "result" in m, m


def test_scalar_params_message_does_not_contradict_array_rejection(spawn, framing):
    # The -32600 asks for an object; an array then gets -32602 saying the same.
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"ping","id":1,"params":5}', framing))
    scalar = sc.assert_error(p.next_message(), -32600, id=1)
    array = sc.assert_error(p.request("ping", [], 2), -32602, id=2)
    assert "object of named members" in scalar["message"], scalar
    assert "array" not in scalar["message"], scalar
    assert "object of named members" in array["message"], array


@pytest.mark.parametrize("params, member", [
    ({"clientId": 5}, "clientId"),
    ({"clientId": None}, "clientId"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "authority": 1}, "authority"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "scopes": "user.read"}, "scopes"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "sharedDeviceMode": "yes"}, "sharedDeviceMode"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "knownAuthorities": "x"}, "knownAuthorities"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "clientCapabilities": {}}, "clientCapabilities"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "cache": "file"}, "cache"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "browser": 3}, "browser"),
    ({"clientId": "11111111-2222-3333-4444-555555555555", "bogusKey": 1}, "bogusKey"),
])
def test_initialize_wrong_types(spawn, framing, params, member):
    p = spawn(framing=framing, client_id=None)
    got = member_error(p.request("initialize", params, 1), 1)
    assert got is not None and got.split(".")[0].split("[")[0] == member, f"member {got!r}, expected {member!r}"


def test_initialize_wrong_element_type(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    got = member_error(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555", "knownAuthorities": [1]}, 1), 1)
    assert got is not None and got.startswith("knownAuthorities"), got


# The listener's rule decides at initialize: what is accepted there can be served (one parser).
@pytest.mark.parametrize("uri", ["http://[::1]", "http://127.0.0.2", "http://localhost/cb?x=1", "http://localhost#f",
                                 "http://me@localhost", "http://localhost:99999", "https://localhost"])
def test_initialize_refuses_a_redirect_uri_the_listener_cannot_serve(spawn, framing, uri):
    p = spawn(framing=framing, client_id=None)
    e = sc.assert_error(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555", "redirectUri": uri}, 1), -32602, id=1,
                        name="invalidParams")
    assert e["data"].get("member") == "redirectUri", e
    assert "redirectUri" in e["message"], e


@pytest.mark.parametrize("uri", ["http://localhost", "http://127.0.0.1:0/cb", "http://localhost:8400/auth/done"])
def test_initialize_accepts_a_redirect_uri_the_listener_can_serve(spawn, framing, uri):
    p = spawn(framing=framing, client_id=None)
    sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555", "redirectUri": uri}, 1), id=1)


@pytest.mark.parametrize("params, member", [
    ({"ms": "100"}, "ms"),
    ({"ms": True}, "ms"),
    ({"ms": None}, "ms"),
    ({}, "ms"),
    ({"ms": 1, "extra": 2}, "extra"),
])
def test_sleep_wrong_params(spawn, framing, params, member):
    p = spawn(framing=framing)
    assert member_error(p.request("diagnostics/sleep", params, 1), 1) == member


def test_params_error_keeps_server_alive(spawn, framing):
    p = spawn(framing=framing)
    member_error(p.request("getDeviceInformation", {"x": 1}, 1), 1)
    sc.assert_result(p.request("getDeviceInformation", {}, 2), id=2)


@pytest.mark.parametrize("method", PLANNED or [pytest.param("none", marks=pytest.mark.skip("nothing is planned"))])
def test_planned_methods_not_found(spawn, framing, method):
    p = spawn(framing=framing)
    e = sc.assert_error(p.request(method, {}, 1), -32601, id=1, name="methodNotFound")
    assert e["data"].get("planned") is True, e


@pytest.mark.parametrize("method", IMPLEMENTED_AUTH)
def test_implemented_auth_methods_are_not_planned(spawn, framing, method):
    # Unknown params member: answered -32602 (not -32601), without touching the network.
    p = spawn(framing=framing)
    e = sc.assert_error(p.request(method, {"noSuchMember": 1}, 1), -32602, id=1, name="invalidParams")
    assert e["data"].get("member") == "noSuchMember", e


def test_unknown_method_not_planned(spawn, framing):
    p = spawn(framing=framing)
    e = sc.assert_error(p.request("noSuchMethod", {}, 1), -32601, id=1, name="methodNotFound")
    assert e["data"].get("planned") in (None, False), e


@pytest.mark.parametrize("method", ["diagnostics/echo", "diagnostics/sleep"])
def test_diagnostics_need_flag(spawn, framing, method):
    p = spawn(framing=framing, diagnostics=False)
    sc.assert_error(p.request(method, {"ms": 1}, 1), -32601, id=1, name="methodNotFound")


def test_echo_returns_params(spawn, framing):
    p = spawn(framing=framing)
    params = {"n": [1, 2.5, -3, 1e300], "o": {"a": None, "b": True}, "s": "x"}
    sc.assert_result(p.request("diagnostics/echo", params, 1), id=1, result=params)


@pytest.mark.parametrize("params, member", [
    ({"path": "/me\r\nX-Injected: 1"}, "path"),
    ({"path": "/me\n"}, "path"),
    ({"path": "/me\x00"}, "path"),
    ({"headers": {"X-A": "1\r\nX-Injected: 1"}}, "headers.X-A"),
    ({"headers": {"X-A\n": "1"}}, "headers.X-A\n"),
])
def test_call_graph_control_characters_are_bad_params(spawn, framing, params, member):
    # Checked before any token or network: -32602, not a transport error (-51009).
    p = spawn(framing=framing)
    assert member_error(p.request("callGraph", params, 1), 1) == member


def test_call_graph_query_may_hold_control_characters(spawn, framing):
    # Query values are percent-encoded: a newline in one is data, not bad params (this
    # process has no signed-in account, so the call ends -50002 before any network).
    p = spawn(framing=framing)
    sc.assert_error(p.request("callGraph", {"query": {"$search": "a\nb"}}, 1), -50002, id=1)
