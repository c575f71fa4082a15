"""initialize / shutdown / exit, end of input and signals."""
import signal
import time

import pytest

import sidecar as sc

LSP_KEYS = {"processId": 1234, "clientInfo": {"name": "e2e", "version": "1"}, "capabilities": {},
            "trace": "off", "locale": "en", "rootUri": None, "workspaceFolders": None}


def test_initialize_requires_client_id(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    e = sc.assert_error(p.request("initialize", {}, 1), -32602, id=1, name="invalidParams")
    assert e["data"].get("member") == "clientId", e
    # still not initialized, and a correct initialize works afterwards
    r = sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 2), id=2)
    assert r["serverInfo"]["name"] == "auth-sidecar"


def test_initialize_without_params_member(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    e = sc.assert_error(p.request("initialize", id=1, no_params=True), -32602, id=1)
    assert e["data"].get("member") == "clientId", e


def test_initialize_result_shape(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    r = sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 1), id=1)
    assert r["serverInfo"] == {"name": "auth-sidecar", "version": "0.1.0"}
    assert r["protocolVersion"] == "1.0"
    caps = r["capabilities"]
    assert "ping" in caps["methods"] and "getDeviceInformation" in caps["methods"], caps
    # protocol/openrpc.json's x-status says which requests this build answers.
    for implemented in sc.protocol_requests("implemented"):
        assert implemented in caps["methods"], f"{implemented} is implemented (openrpc.json) but not listed: {caps}"
    for planned in sc.protocol_requests("planned"):
        assert planned not in caps["methods"], f"{planned} is planned (openrpc.json) but listed: {caps}"
    assert caps["notifications"] == ["$/cancelRequest", "exit"]
    assert caps["serverRequests"] == ["openUrl", "pasteSignIn"]
    assert caps["serverNotifications"] == ["deviceCode"]
    assert sorted(caps["framings"]) == ["lsp", "ndjson"]


def test_initialize_accepts_lsp_keys(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    sc.assert_result(p.request("initialize", dict(LSP_KEYS, clientId="11111111-2222-3333-4444-555555555555"), 1), id=1)


def test_initialize_with_all_contract_keys(spawn, framing, tmp_path):
    p = spawn(framing=framing, client_id=None)
    params = {
        "clientId": "11111111-2222-3333-4444-555555555555", "authority": "https://login.microsoftonline.com/organizations",
        "redirectUri": "http://localhost", "knownAuthorities": ["login.example.com"],
        "scopes": ["user.read", "mail.read"], "graphEndpoint": "https://graph.microsoft.com/",
        "cache": {"path": str(tmp_path / "cache.json")}, "cacheProtection": "plaintext", "sharedDeviceMode": False,
        "clientCapabilities": ["cp1"], "browser": "client",
    }
    sc.assert_result(p.request("initialize", params, 1), id=1)


def test_initialize_twice(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 1), id=1)
    sc.assert_error(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 2), -32600, id=2, name="alreadyInitialized")


def test_initialize_after_command_line_client_id(spawn, framing):
    p = spawn(framing=framing)  # --client-id given
    sc.assert_result(p.request("initialize", {}, 1), id=1)
    sc.assert_error(p.request("initialize", {}, 2), -32600, id=2, name="alreadyInitialized")


def default_config_file(env: dict) -> str:
    """The file the sidecar reads by default (Sources/Sidecar/UserPaths.swift)."""
    if env.get("AUTH_SIDECAR_CONFIG", "").startswith("/"):
        return env["AUTH_SIDECAR_CONFIG"]
    if env.get("XDG_CONFIG_HOME", "").startswith("/"):
        return env["XDG_CONFIG_HOME"] + "/auth-sidecar/config.json"
    return env["HOME"] + "/.config/auth-sidecar/config.json"


def test_methods_before_initialize(spawn, framing, sidecar_env):
    p = spawn(framing=framing, client_id=None)
    e = sc.assert_error(p.request("getDeviceInformation", {}, 1), -32002, id=1, name="serverNotInitialized")
    # #52: the server's own words name the file to write (as this process reads it: $HOME's
    # default here) and the other two ways, so a shell pipe or an editor relaying it shows the fix
    assert "no client id configured" in e["message"] and "--client-id" in e["message"], e
    assert f'write {{"clientId": "ID"}} to {default_config_file(sidecar_env)},' in e["message"], e
    sc.assert_error(p.request("diagnostics/echo", {"a": 1}, 2), -32002, id=2, name="serverNotInitialized")
    p.ping("allowed")
    sc.assert_result(p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 3), id=3)
    sc.assert_result(p.request("getDeviceInformation", {}, 4), id=4)


def test_command_line_configures(spawn, framing):
    p = spawn(framing=framing)
    sc.assert_result(p.request("getDeviceInformation", {}, 1), id=1)


def test_config_file_configures(spawn, framing, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text('{"clientId": "11111111-2222-3333-4444-555555555555", "sharedDeviceMode": true}')
    p = spawn("--config", str(cfg), framing=framing, client_id=None)
    r = sc.assert_result(p.request("getDeviceInformation", {}, 1), id=1)
    assert r["deviceMode"] == "shared" and r["sharedDeviceModeSource"] == "configuration", r


def test_shutdown_then_exit(spawn, framing):
    p = spawn(framing=framing)
    sc.assert_result(p.request("shutdown", id=1, no_params=True), id=1, result=None)
    p.send(sc.note("exit"))
    assert p.wait_exit(5) == 0
    assert p.drain() == []


def test_shutdown_then_exit_with_null_params(spawn, framing):
    # What Emacs's jsonrpc.el (Eglot) sends (clients/emacs tests it with jsonrpc.el itself).
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","id":1,"method":"shutdown","params":null}', framing))
    sc.assert_result(p.next_message(), id=1, result=None)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"exit","params":null}', framing))
    assert p.wait_exit(5) == 0
    assert p.drain() == []


def test_shutdown_and_exit_in_one_write(spawn, framing):
    p = spawn(framing=framing)
    p.send_many([sc.req("shutdown", None, "s"), sc.note("exit")])
    assert p.wait_exit(5) == 0
    msgs = p.drain()
    assert len(msgs) == 1, msgs
    sc.assert_result(msgs[0], id="s", result=None)


def test_shutdown_before_initialize(spawn, framing):
    p = spawn(framing=framing, client_id=None)
    sc.assert_result(p.request("shutdown", {}, 1), id=1, result=None)
    p.send(sc.note("exit"))
    assert p.wait_exit(5) == 0


def test_exit_without_shutdown(spawn, framing):
    p = spawn(framing=framing)
    p.ping()
    p.send(sc.note("exit"))
    assert p.wait_exit(5) == 1


def test_requests_after_shutdown(spawn, framing):
    p = spawn(framing=framing)
    sc.assert_result(p.request("shutdown", {}, 1), id=1, result=None)
    sc.assert_error(p.request("getDeviceInformation", {}, 2), -32600, id=2, name="shuttingDown")
    sc.assert_error(p.request("ping", {}, 3), -32600, id=3, name="shuttingDown")
    sc.assert_error(p.request("shutdown", {}, 4), -32600, id=4, name="shuttingDown")
    p.send(sc.note("exit"))
    assert p.wait_exit(5) == 0


def test_eof_exits_zero(spawn, framing):
    p = spawn(framing=framing)
    msgs, code = p.finish(5)
    assert msgs == [] and code == 0


def test_eof_after_traffic_exits_zero(spawn, framing):
    p = spawn(framing=framing)
    p.ping()
    msgs, code = p.finish(5)
    assert msgs == [] and code == 0


def test_eof_with_request_in_flight(spawn, framing):
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 400}, "inflight"))
    time.sleep(0.05)
    t0 = time.monotonic()
    msgs, code = p.finish(5)
    assert len(msgs) == 1, msgs
    sc.assert_result(msgs[0], id="inflight", result={"sleptMs": 400})
    assert code == 0
    assert time.monotonic() - t0 >= 0.2, "exited before the in-flight request finished"


def test_eof_with_many_in_flight(spawn, framing):
    p = spawn(framing=framing)
    p.send_many(sc.req("diagnostics/sleep", {"ms": 100 + i}, i) for i in range(20))
    msgs, code = p.finish(5)
    assert sorted(m["id"] for m in msgs) == list(range(20))
    assert code == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_with_request_in_flight(spawn, framing, sig):
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 60000}, "inflight"))
    p.ping()  # the sleep is surely in flight now
    t0 = time.monotonic()
    p.signal(sig)
    m = p.next_message(15)
    sc.assert_error(m, -32800, id="inflight", name="requestCancelled")
    assert p.wait_exit(15) == 0
    assert time.monotonic() - t0 < 20.0  # did not wait for the 60 s sleep
    assert p.drain() == []


def _blocked_waiting(pid: int, timeout: float = 10.0) -> None:
    """Until process `pid` blocks SIGTERM (its start-up is past) and sleeps (it waits for input)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        if int(status["SigBlk"], 16) & (1 << (signal.SIGTERM - 1)) and status["State"].startswith("S"):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never blocked SIGTERM and waited")


def test_sigterm_before_any_input(spawn):
    """A fresh process that has read nothing yet ends cleanly on SIGTERM: its signal thread is
    started before its first read blocks (it is started lazily, for the first answer's sake)."""
    p = spawn()
    _blocked_waiting(p.proc.pid)
    time.sleep(0.05)  # into the read itself
    p.signal(signal.SIGTERM)
    assert p.wait_exit(5) == 0
    assert p.drain() == []


def test_sigterm_idle(spawn, framing):
    p = spawn(framing=framing)
    p.ping()
    p.signal(signal.SIGTERM)
    assert p.wait_exit(5) == 0
    assert p.drain() == []
