"""Injected faults, request counts and the request log."""

import http.client
import json
import socket
import ssl
import time

import pytest

from flows import SCOPE, refresh, sign_in
from mock_idp.testing import http as request

CONFIG = "/common/v2.0/.well-known/openid-configuration"


def get(mock, path=CONFIG):
    return request("GET", mock.url + path, mock.ca_file)


def test_status_faults_on_identity_endpoints(mock):
    mock.admin.fault(endpoint="openid-configuration", type="status", status=503, times=2)
    for _ in range(2):
        resp = get(mock)
        assert resp.status == 503 and resp.headers["Retry-After"] == "1"
        body = resp.json()
        assert body["error"] == "temporarily_unavailable" and body["error_codes"] == [90033]
    assert get(mock).status == 200
    mock.admin.fault(endpoint="*", type="status", status=500, retry_after=None)
    resp = get(mock)
    assert resp.status == 500 and resp.json()["error"] == "server_error"
    assert "Retry-After" not in resp.headers


def test_429_on_refresh_only(mock):
    tokens, _ = sign_in(mock)
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=429, retry_after=3)
    assert get(mock).status == 200
    resp = refresh(mock, tokens["refresh_token"])
    assert resp.status == 429 and resp.headers["Retry-After"] == "3"
    assert refresh(mock, tokens["refresh_token"]).status == 200


def test_latency(mock):
    mock.admin.fault(endpoint="jwks", type="latency", delay_ms=2000)
    started = time.monotonic()
    assert get(mock, "/common/discovery/v2.0/keys").status == 200
    assert time.monotonic() - started >= 2.0
    started = time.monotonic()
    get(mock, "/common/discovery/v2.0/keys")
    assert time.monotonic() - started < 1.5  # the fault hit once: no added 2 s


def _raw_get(mock, path=CONFIG):
    host, port = "127.0.0.1", int(mock.url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection(host, port, timeout=5,
                                       context=ssl.create_default_context(cafile=mock.ca_file))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_reset_connection(mock):
    mock.admin.fault(endpoint="openid-configuration", type="reset")
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected, ssl.SSLError,
                        socket.error)):
        _raw_get(mock)
    assert _raw_get(mock)[0] == 200


def test_malformed_body(mock):
    mock.admin.fault(endpoint="token", type="malformed")
    tokens = request("POST", mock.url + "/common/oauth2/v2.0/token", mock.ca_file,
                     form={"grant_type": "refresh_token"})
    assert tokens.status == 200
    with pytest.raises(ValueError):
        tokens.json()


def test_truncated_body(mock):
    mock.admin.fault(endpoint="openid-configuration", type="truncated")
    with pytest.raises((http.client.IncompleteRead, ConnectionError, ssl.SSLError, OSError)):
        _raw_get(mock)
    assert _raw_get(mock)[0] == 200


def test_faults_until_cleared(mock):
    mock.admin.fault(endpoint="openid-configuration", type="status", status=502, times=-1)
    assert [get(mock).status for _ in range(3)] == [502, 502, 502]
    assert len(mock.admin.call("state")["faults"]) == 1
    mock.admin.faults__clear()
    assert get(mock).status == 200


def test_multiple_faults_at_once(mock):
    mock.admin.call("faults", {"faults": [
        {"endpoint": "openid-configuration", "type": "latency", "delay_ms": 50},
        {"endpoint": "openid-configuration", "type": "status", "status": 504}]})
    assert get(mock).status == 504


def test_bad_fault_is_rejected(mock):
    with pytest.raises(RuntimeError):
        mock.admin.fault(type="explode")


def test_counts_and_log(mock):
    tokens, _ = sign_in(mock)
    refresh(mock, tokens["refresh_token"])
    counts = mock.admin.counts()
    assert counts["authorize"] == 1 and counts["token"] == 2
    assert counts["token:authorization_code"] == 1 and counts["token:refresh_token"] == 1
    assert "admin" not in counts
    log = mock.admin.log("token")
    assert [r["form"]["grant_type"] for r in log] == ["authorization_code", "refresh_token"]
    assert log[0]["status"] == 200 and log[0]["form"]["scope"] == SCOPE
    assert "authorization" not in log[0]["headers"]
    mock.admin.counts__reset()
    mock.admin.log__clear()
    assert mock.admin.counts() == {} and mock.admin.log() == []


def test_status_fault_with_a_body_of_ones_own(mock):
    tokens, _ = sign_in(mock)
    # An empty 400 (a provider refusing a refresh token without saying why).
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=400, body="")
    resp = refresh(mock, tokens["refresh_token"])
    assert resp.status == 400 and resp.body == b""
    # A 200 with a token response of one's own (an object is sent as JSON).
    own = {"access_token": "x" * 10, "token_type": "bearer", "expires_in": "soon"}
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=200, body=own)
    resp = refresh(mock, tokens["refresh_token"])
    assert resp.status == 200 and resp.json() == own
    assert refresh(mock, tokens["refresh_token"]).json()["token_type"] == "Bearer"  # the fault hit once


def _timed_raw_get(mock, path=CONFIG):
    started = time.monotonic()
    status, body = _raw_get(mock, path)
    return status, body, time.monotonic() - started


def test_slow_body_sends_the_real_answer_slowly(mock):
    mock.admin.fault(endpoint="openid-configuration", type="slow_body", delay_ms=1000)
    status, body, took = _timed_raw_get(mock)
    assert status == 200 and json.loads(body)["issuer"]
    assert took >= 0.9, "the body came at once"
    assert _timed_raw_get(mock)[2] < 0.9  # hit once


def test_slow_body_headers_come_first(mock):
    # The status line and headers arrive at once; only the body trickles.
    mock.admin.fault(endpoint="openid-configuration", type="slow_body", delay_ms=1500)
    host, port = "127.0.0.1", int(mock.url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection(host, port, timeout=5,
                                       context=ssl.create_default_context(cafile=mock.ca_file))
    try:
        started = time.monotonic()
        conn.request("GET", CONFIG)
        resp = conn.getresponse()
        headers_after = time.monotonic() - started
        body = resp.read()
        body_after = time.monotonic() - started
    finally:
        conn.close()
    assert resp.status == 200 and json.loads(body)
    assert headers_after < 1.0 <= body_after, (headers_after, body_after)


def test_wrong_content_type_captive_portal_page(mock):
    mock.admin.fault(endpoint="token", type="wrong_content_type")
    resp = request("POST", mock.url + "/common/oauth2/v2.0/token", mock.ca_file,
                   form={"grant_type": "refresh_token"})
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/html")
    assert resp.body.startswith(b"<!DOCTYPE html>")


def test_wrong_content_type_keeping_the_body(mock):
    mock.admin.fault(endpoint="openid-configuration", type="wrong_content_type",
                     content_type="text/plain", keep_body=True)
    resp = get(mock)
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/plain"
    assert resp.json()["issuer"]


def test_missing_fields_removes_members_of_the_real_answer(mock):
    tokens, _ = sign_in(mock)
    mock.admin.fault(endpoint="token:refresh_token", type="missing_fields",
                     fields=["access_token", "expires_in"])
    resp = refresh(mock, tokens["refresh_token"])
    assert resp.status == 200
    answer = resp.json()
    assert "access_token" not in answer and "expires_in" not in answer
    assert answer["refresh_token"] and answer["token_type"] == "Bearer"
    assert "access_token" in refresh(mock, answer["refresh_token"]).json()


def test_missing_fields_needs_a_list(mock):
    with pytest.raises(RuntimeError):
        mock.admin.fault(type="missing_fields", fields="access_token")
