"""callGraph against the mock's Microsoft Graph (graphEndpoint "<mock>/"): results, API
versions, query, paging, throttling, claims challenges, timeout, non-JSON bodies."""
from __future__ import annotations

import base64
import json
import time

import pytest

from authorities_e2e import ALICE, ALICE_OID, CONTOSO_TID, token_calls

GRAPH_SCOPES = ["User.Read", "User.ReadBasic.All"]
# The mock's /v1.0/users: 25 users in pages of 10.
PAGE, COLLECTION = 10, 25


@pytest.fixture
def graph(launch, mock):
    """A sidecar with the mock as its Graph, alice signed in with Graph scopes."""
    p = launch(graphEndpoint=mock.url + "/", scopes=GRAPH_SCOPES)
    p.sign_in(scopes=GRAPH_SCOPES, loginHint=ALICE)
    mock.admin.counts__reset()
    mock.admin.log__clear()
    return p


def graph_count(mock, key="graph"):
    return mock.admin.counts().get(key, 0)


def test_me(graph, mock):
    r = graph.ok("callGraph", {"path": "/me"})
    assert r["status"] == 200, r
    assert isinstance(r["body"], dict), r
    assert r["body"]["userPrincipalName"] == ALICE and r["body"]["id"] == ALICE_OID
    assert "application/json" in r["headers"].get("content-type", ""), r["headers"]
    assert "/v1.0/" in r["body"]["@odata.context"]
    assert graph_count(mock, "graph:/v1.0/me") == 1
    assert token_calls(mock) == {}, "the cached token should serve Graph"
    seen = mock.admin.log("graph")
    assert seen[0]["method"] == "GET" and seen[0]["path"] == "/v1.0/me", seen


def test_beta(graph, mock):
    r = graph.ok("callGraph", {"path": "/me", "apiVersion": "beta"})
    assert r["status"] == 200, r
    assert "/beta/" in r["body"]["@odata.context"]
    assert r["body"]["userType"] == "Member"
    assert mock.admin.log("graph")[0]["path"] == "/beta/me"


def test_query(graph, mock):
    r = graph.ok("callGraph", {"path": "/me", "query": {"$select": "displayName,id"}})
    assert r["status"] == 200, r
    sent = mock.admin.log("graph")[0]
    # The mock does not implement $select (it answers the whole user); check what was sent.
    assert sent["query"].get("$select") in ("displayName,id", ["displayName,id"]), sent


def test_paging_all_pages(graph, mock):
    r = graph.ok("callGraph", {"path": "/users", "allPages": True}, timeout=20)
    assert r["status"] == 200, r
    assert len(r["body"]["value"]) == COLLECTION
    assert len({u["id"] for u in r["body"]["value"]}) == COLLECTION
    assert "@odata.nextLink" not in r["body"], r["body"].get("@odata.nextLink")
    assert graph_count(mock, "graph:/v1.0/users") == 3


def test_paging_max_pages(graph, mock):
    r = graph.ok("callGraph", {"path": "/users", "allPages": True, "maxPages": 1})
    assert r["status"] == 200, r
    assert len(r["body"]["value"]) == PAGE
    assert "@odata.nextLink" in r["body"]
    assert graph_count(mock, "graph:/v1.0/users") == 1
    # Without allPages: one page, the nextLink left for the caller.
    one = graph.ok("callGraph", {"path": "/users"})
    assert len(one["body"]["value"]) == PAGE and "@odata.nextLink" in one["body"]


def test_throttled_then_retried(graph, mock):
    mock.admin.fault(endpoint="graph", type="status", status=429, retry_after=1, times=1)
    started = time.monotonic()
    r = graph.ok("callGraph", {"path": "/me"}, timeout=15)
    assert r["status"] == 200, r
    assert r["body"]["userPrincipalName"] == ALICE
    assert graph_count(mock) == 2
    assert time.monotonic() - started >= 0.9, "Retry-After 1 was not honoured"


def test_throttled_long_retry_after_is_the_result(graph, mock):
    mock.admin.fault(endpoint="graph", type="status", status=429, retry_after=120, times=1)
    started = time.monotonic()
    r = graph.ok("callGraph", {"path": "/me"}, timeout=15)
    assert r["status"] == 429, r
    assert r["headers"].get("retry-after") == "120", r["headers"]
    assert r["body"]["error"]["code"] == "TooManyRequests"
    assert graph_count(mock) == 1
    assert time.monotonic() - started < 10


def test_claims_challenge_once_retried_silently(graph, mock):
    claims = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
    mock.admin.graph__challenge(claims=claims, times=1)
    r = graph.ok("callGraph", {"path": "/me"}, timeout=20)
    assert r["status"] == 200, r
    assert graph_count(mock) == 2
    counts = token_calls(mock)
    assert counts.get("authorize", 0) == 0, counts
    assert counts.get("token:refresh_token") == 1, counts
    form = mock.admin.log("token")[0]["form"]
    sent = form.get("claims")
    sent = sent[0] if isinstance(sent, list) else sent
    assert sent and json.loads(sent)["access_token"]["acrs"]["value"] == "c1", form


def test_claims_challenge_not_satisfiable_silently(graph, mock):
    # A challenge the refreshed token cannot meet (no acrs asked, so the mock's token never
    # has one and the challenge repeats until a satisfying token arrives).
    claims = '{"access_token":{"nbf":{"essential":true,"value":"1700000000"}}}'
    mock.admin.graph__challenge(claims=claims, until_satisfied=True, times=-1)
    e = graph.error("callGraph", {"path": "/me"}, -50002, timeout=20, name="interactionRequired")
    assert json.loads(e["data"]["claims"]) == json.loads(claims), e
    assert mock.admin.counts().get("authorize", 0) == 0


def test_claims_challenge_refresh_needs_interaction(graph, mock):
    # The silent retry itself fails (MFA now required): -50002 carrying Graph's claims.
    mock.admin.graph__challenge(times=-1, until_satisfied=True)
    mock.admin.mfa(username=ALICE, required=True)
    e = graph.error("callGraph", {"path": "/me"}, -50002, timeout=20, name="interactionRequired")
    assert e["data"].get("claims"), e
    assert "acrs" in json.loads(e["data"]["claims"])["access_token"], e
    assert mock.admin.counts().get("authorize", 0) == 0


def test_timeout(graph, mock):
    mock.admin.fault(endpoint="graph", type="latency", delay_ms=15000, times=1)
    started = time.monotonic()
    graph.error("callGraph", {"path": "/me", "timeoutSeconds": 1}, -51002, timeout=25, name="timeout")
    assert time.monotonic() - started < 10, "timeoutSeconds 1 was not applied (the answer takes 15 s)"


def test_non_json_body(graph, mock):
    mock.admin.fault(endpoint="graph", type="malformed", times=1)
    r = graph.ok("callGraph", {"path": "/me"})
    assert r["status"] == 200, r
    assert isinstance(r["body"], str), r
    assert r["body"].startswith('{"token_type": "Bearer"') and "<html>" in r["body"], r["body"]


def test_no_signed_in_account(launch, mock):
    p = launch(graphEndpoint=mock.url + "/")
    e = p.error("callGraph", {"path": "/me"}, -50002, name="interactionRequired")
    assert e["data"].get("suberror") == "no_account", e
    assert mock.admin.counts().get("graph", 0) == 0
