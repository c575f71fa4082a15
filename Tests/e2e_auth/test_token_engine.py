"""The token engine end to end: offline first, one refresh across processes.

* A fresh process serves a valid cached token with the identity service stopped (no network).
* The same for a cache MSAL for Python wrote.
* Eight processes that want the same expired token at the same moment make one refresh
  (the mock counts the refresh_token grants).
* A fresh process that must refresh makes one request: the token request (discovery kept).
"""
from __future__ import annotations

import os
import threading

import pytest

from auth_e2e import ALICE, AuthSidecar, Mock, SCOPES
from connect_proxy import DefaultPort
from mock_idp.testing import AdminClient, start_mock, stop_mock


@pytest.fixture
def own_mock(tmp_path_factory):
    """A mock of this test's own, so it can be stopped."""
    url, ca_file, process = start_mock(tmp_path_factory.mktemp("own-mock"))
    mock = Mock(url, ca_file, process, AdminClient(url, ca_file))
    yield mock
    stop_mock(process)


def test_fresh_process_serves_the_cached_token_with_the_service_stopped(sidecar_bin, own_mock, tmp_path):
    cache = str(tmp_path / "cache" / "cache.json")
    p = AuthSidecar.start(sidecar_bin, own_mock, tmp_path, [], stderr_path=str(tmp_path / "signin.log"))
    p.initialize(cache=cache)
    signed_in = p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    stop_mock(own_mock.process)

    q = AuthSidecar.start(sidecar_bin, own_mock, tmp_path, [], stderr_path=str(tmp_path / "offline.log"))
    q.initialize(cache=cache)
    r = q.silent()
    assert r["fromCache"] is True, r
    assert r["accessToken"] == signed_in["accessToken"]
    assert r["account"]["username"] == ALICE and r.get("idToken"), r
    assert q.ok("getCurrentAccount")["account"]["username"] == ALICE
    # Only a refresh needs the service: forced, it reports the network error.
    q.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -51001)
    assert q.finish()[1] == 0


def test_cache_written_by_msal_python_is_served_offline(sidecar_bin, own_mock, tmp_path, monkeypatch):
    """At an authority on the default port (https://localhost, the mock behind a proxy),
    where the cache environment is the bare host, as MSAL for Python writes it."""
    msal = pytest.importorskip("msal")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", own_mock.ca_file)
    monkeypatch.setenv("SSL_CERT_FILE", own_mock.ca_file)
    default_port = DefaultPort(own_mock.host)
    for name, value in default_port.env.items():
        monkeypatch.setenv(name, value)
    requests = pytest.importorskip("requests")
    session = requests.Session()
    session.verify = own_mock.ca_file
    token_cache = msal.SerializableTokenCache()
    app = msal.PublicClientApplication(
        "00001111-aaaa-2222-bbbb-3333cccc4444", authority=default_port.url + "/organizations",
        instance_discovery=False, http_client=session, token_cache=token_cache)
    flow = app.initiate_device_flow(scopes=SCOPES)
    own_mock.admin.device("approve", flow["user_code"], username=ALICE)
    result = app.acquire_token_by_device_flow(flow)
    assert "access_token" in result, result
    path = tmp_path / "msal" / "cache.json"
    path.parent.mkdir(mode=0o700)
    path.write_text(token_cache.serialize())
    os.chmod(path, 0o600)
    stop_mock(own_mock.process)
    default_port.stop()

    p = AuthSidecar.start(sidecar_bin, own_mock, tmp_path, [], stderr_path=str(tmp_path / "offline.log"))
    p.initialize(cache=str(path), authority=default_port.url + "/organizations", knownAuthorities=[default_port.host])
    r = p.silent()
    assert r["fromCache"] is True and r["accessToken"] == result["access_token"], r
    assert p.finish()[1] == 0


def test_eight_processes_refresh_an_expired_token_once(sidecar_bin, mock, tmp_path):
    cache = str(tmp_path / "cache" / "cache.json")
    mock.admin.config(access_token_lifetime=120)  # inside the 5-minute margin: due at once
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / "signin.log"))
    p.initialize(cache=cache)
    first = p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    mock.admin.config(access_token_lifetime=3600)  # the refreshed token is good for an hour
    before = mock.admin.counts().get("token:refresh_token", 0)

    procs = []
    for n in range(8):
        q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / f"p{n}.log"))
        q.initialize(cache=cache)
        procs.append(q)
    barrier = threading.Barrier(len(procs))
    tokens: list = [None] * len(procs)

    def ask(n: int) -> None:
        barrier.wait()
        tokens[n] = procs[n].silent(timeout=40)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(len(procs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(t is not None for t in tokens), tokens
    refreshed = mock.admin.counts().get("token:refresh_token", 0) - before
    assert refreshed == 1, f"{refreshed} refresh requests for 8 processes"
    assert len({t["accessToken"] for t in tokens}) == 1
    assert tokens[0]["accessToken"] != first["accessToken"]
    for q in procs:
        assert q.finish()[1] == 0


def test_a_fresh_process_refreshes_with_one_request(sidecar_bin, mock, tmp_path):
    cache = str(tmp_path / "cache" / "cache.json")
    mock.admin.config(access_token_lifetime=120)
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / "signin.log"))
    p.initialize(cache=cache)
    p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    before = mock.admin.counts()
    q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / "fresh.log"))
    q.initialize(cache=cache)
    assert q.silent()["fromCache"] is False
    after = mock.admin.counts()
    changed = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    assert changed == {"token": 1, "token:refresh_token": 1}, changed
    assert q.finish()[1] == 0
