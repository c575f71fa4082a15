"""The token engine end to end: offline first, one refresh across processes.

* A fresh process serves a valid cached token with the identity service stopped (no network).
* The same for a cache MSAL for Python wrote.
* Eight processes that want the same expired token at the same moment make one refresh
  (the mock counts the refresh_token grants).
* A fresh process that must refresh makes one request: the token request (discovery kept).
* Silent requests answered from memory keep their ids and correlation ids, in both framings,
  and see another process's refresh.
* Repeated request lines that differ only in their id (answered without a second parse) keep
  each id and get their own correlation ids; an odd id or a changed byte gets what it always got.
"""
from __future__ import annotations

import json
import os
import threading

import pytest

import sidecar as sc
from auth_e2e import ALICE, AuthSidecar, Mock, SCOPES, process_env
from connect_proxy import DefaultPort
from mock_idp.testing import AdminClient, start_mock, stop_mock


@pytest.fixture
def own_mock(tmp_path_factory):
    """A mock of this test's own, so it can be stopped."""
    url, ca_file, process = start_mock(tmp_path_factory.mktemp("own-mock"))
    mock = Mock(url, ca_file, process, AdminClient(url, ca_file))
    yield mock
    stop_mock(process)


def signed_in(sidecar_bin, mock, tmp_path, key_file=None) -> tuple[str | dict, dict]:
    """alice signed in by one process: (the cache, as `initialize` takes it; the sign-in's
    result). With `key_file`, the cache is encrypted with that key."""
    cache = str(tmp_path / "cache" / "cache.json")
    if key_file:
        cache = {"path": cache, "encryption": {"keyFile": key_file}}
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / "signin.log"))
    p.initialize(cache=cache)
    result = p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    return cache, result


def fresh(sidecar_bin, mock, tmp_path, cache: str | dict, name) -> AuthSidecar:
    """Another process on that cache, initialized."""
    q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / ("%s.log" % name)))
    q.initialize(cache=cache)
    return q


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


def test_silent_answers_from_memory_keep_ids_and_see_another_process_refresh(sidecar_bin, mock, tmp_path):
    """Repeated silent requests are answered from memory on the reader thread, with the
    reply text kept per cache version: each still carries its own id and correlation id, in
    both framings, and another process's refresh (a new file) is served at once."""
    cache, first = signed_in(sidecar_bin, mock, tmp_path)
    q = fresh(sidecar_bin, mock, tmp_path, cache, "memory")
    assert q.silent()["accessToken"] == first["accessToken"]  # found, remembered
    ids = ["s-%d" % n for n in range(40)] + list(range(1000, 1040))
    q.send_many([sc.req("acquireTokenSilent", {"scopes": SCOPES, "correlationId": "c0ffee-%s" % rid}, rid)
                 for rid in ids])                          # one write: answered from memory
    replies = [q.wait_for(rid) for rid in ids]
    for rid, reply in zip(ids, replies):
        result = sc.assert_result(reply)
        assert result["correlationId"] == "c0ffee-%s" % rid and result["accessToken"] == first["accessToken"]
        assert result["fromCache"] is True and result["account"]["username"] == ALICE
    generated = {q.silent()["correlationId"] for _ in range(3)}
    assert len(generated) == 3 and all(len(c) == 36 and c[14] == "4" for c in generated), generated

    r = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], stderr_path=str(tmp_path / "other.log"))
    r.initialize(cache=cache)
    renewed = r.silent(forceRefresh=True)
    assert r.finish()[1] == 0
    assert renewed["accessToken"] != first["accessToken"]
    assert q.silent()["accessToken"] == renewed["accessToken"]  # the other process's write, seen
    assert q.finish()[1] == 0

    lsp = AuthSidecar([sidecar_bin], framing=sc.LSP, env=process_env(mock, tmp_path),
                      stderr_path=str(tmp_path / "lsp.log"))
    lsp.mock, lsp.tmp_path = mock, tmp_path
    lsp.initialize(cache=cache)
    lsp.silent()
    lsp.send_many([sc.req("acquireTokenSilent", {"scopes": SCOPES}, n) for n in range(5)])
    assert all(sc.assert_result(lsp.wait_for(n))["accessToken"] == renewed["accessToken"] for n in range(5))
    assert lsp.finish()[1] == 0


@pytest.mark.parametrize("encrypted", [False, True], ids=["plaintext", "keyFile"])
def test_a_fresh_process_answers_its_first_cached_token_on_the_reading_thread(sidecar_bin, mock, tmp_path, encrypted):
    """A fresh process's first request for a token in a small cache (plaintext, or sealed with
    a key it holds) is answered by the thread that read it, which writes the reply too: no task
    threads, no writer thread (what a process started per token costs, README "The token
    path"). A token that must be refreshed still goes to a task."""
    key_file = None
    if encrypted:
        key_file = str(tmp_path / "cache.key")
        with open(key_file, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key_file, 0o600)
    cache, signed = signed_in(sidecar_bin, mock, tmp_path, key_file)
    if encrypted:
        assert open(cache["path"], "rb").read().startswith(b"auth-sidecar-aes256gcm-v1\n")
    token = signed["accessToken"]
    q = fresh(sidecar_bin, mock, tmp_path, cache, "fresh")
    r = q.silent()
    assert r["accessToken"] == token and r["fromCache"] is True, r
    threads = os.listdir("/proc/%d/task" % q.proc.pid)
    assert len(threads) == 2, threads                     # the reader and the signal waiter
    assert q.silent(forceRefresh=True)["accessToken"] != token  # a refresh: in a task, as ever
    assert len(os.listdir("/proc/%d/task" % q.proc.pid)) > 2
    assert q.finish()[1] == 0


def test_repeated_lines_keep_their_ids_and_odd_ones_take_the_normal_path(sidecar_bin, mock, tmp_path):
    """The same request line sent again with another id is not parsed again: each reply still
    carries its own id and a correlation id of its own; lines with an odd id or a changed byte
    in between get exactly what the normal path gives."""
    cache, signed = signed_in(sidecar_bin, mock, tmp_path)
    token = signed["accessToken"]
    q = fresh(sidecar_bin, mock, tmp_path, cache, "lines")
    line = (b'{"jsonrpc":"2.0","method":"acquireTokenSilent","params":{"scopes":%s},"id":%%s}\n'
            % json.dumps(SCOPES, separators=(",", ":")).encode())
    plain = list(range(1, 21)) + ["s-%d" % n for n in range(5)] + [0, 999999999999999, ""]
    odd = {b"-7": -7, b"1.5": 1.5, b'"\\u00e9"': "\u00e9", b'"x\\"y"': 'x"y',
           b"12345678901234567": 12345678901234567, "\"\u00e9t\u00e9\"".encode(): "\u00e9t\u00e9"}
    q.send_raw(line % b"100")  # parsed and kept
    data = b"".join(line % json.dumps(i).encode() for i in plain[:10])
    data += b"".join(line % text for text in odd)
    data += line.replace(b'"]}', b'"],"bogus":1}') % b"30"     # a changed byte: invalid params
    data += line.replace(b'}\n', b'}x\n') % b"31"              # a parse error, id null
    data += line % b"true"                                       # not an id: invalid request, id null
    data += b"".join(line % json.dumps(i).encode() for i in plain[10:])
    q.send_raw(data)
    correlation = set()
    for rid in [100] + plain + list(odd.values()):
        result = sc.assert_result(q.wait_for(rid))
        assert result["accessToken"] == token and result["fromCache"] is True, rid
        correlation.add(result["correlationId"])
    assert len(correlation) == 1 + len(plain) + len(odd)
    assert q.wait_for(30)["error"]["code"] == -32602
    assert sorted(q.wait_for(None)["error"]["code"] for _ in range(2)) == [-32700, -32600]
    assert q.finish()[1] == 0
