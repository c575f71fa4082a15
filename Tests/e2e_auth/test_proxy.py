"""Proxies: the sidecar's HTTPS traffic honours the standard proxy variables (libcurl reads
`https_proxy` and `no_proxy`), tunnelling through an HTTP CONNECT proxy on loopback."""
from __future__ import annotations

import socket

import pytest

import sidecar as sc
from auth_e2e import SCOPES
from connect_proxy import ConnectProxy, proxy_env


@pytest.fixture
def proxy():
    server = ConnectProxy().start()
    yield server
    server.stop()


def test_token_requests_go_through_the_proxy(launch, mock, proxy):
    p = launch(env=proxy_env(proxy.url))
    p.sign_in()
    before = len(proxy.targets)
    r = p.silent(forceRefresh=True)  # a token call: no browser involved
    assert not r["fromCache"]
    assert len(proxy.targets) > before, "the refresh did not go through the proxy"
    assert proxy.targets[-1] == mock.host, proxy.targets


def test_no_proxy_bypasses_the_proxy(launch, mock, proxy):
    p = launch(env=proxy_env(proxy.url, no_proxy="127.0.0.1,localhost"))
    p.sign_in()
    p.silent(forceRefresh=True)
    assert proxy.targets == [], proxy.targets  # neither the sidecar nor the browser used it


def test_an_unreachable_proxy_is_a_network_error(launch, mock):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]
    p = launch(env=proxy_env(dead), initialize=False)
    p.initialize(cache=str(p.tmp_path / "cache.json"))
    # Discovery is the first HTTPS call of any flow: it fails through the dead proxy.
    e = p.error("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"}, -51001, name="networkError")
    assert "network" in e["message"], e
