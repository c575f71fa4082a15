"""The synchronous client without the identity service: lifecycle, errors, cancellation,
a missing / crashing / killed process."""
from __future__ import annotations

import os
import threading
import time

import pytest

import auth_sidecar as a
from conftest import CLIENT_ID, APP_ID

QUICK = 10.0


def test_initialize_and_no_service_methods(sidecar_bin, base_env, tmp_path):
    with a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory",
                         known_authorities="example.b2clogin.com", timeout=QUICK) as sidecar:
        info = sidecar.server_info
        assert info.name == "auth-sidecar" and info.protocol_version == "1.0"
        assert info.configuration["cache"] == {"persistence": "memory"}
        assert info.configuration["knownAuthorities"] == ["example.b2clogin.com"]
        assert set(info.capabilities["methods"]) >= {"getAccounts", "acquireToken", "callGraph"}
        assert sidecar.ping() == {}
        device = sidecar.get_device_information()
        assert isinstance(device, a.DeviceInformation)
        assert device.device_mode == "private" and not device.shared
        assert device.extra_device_information["os"] == "Linux"
        current = sidecar.get_current_account()
        assert current == a.CurrentAccount(None, None)
        assert sidecar.get_accounts() == [] and sidecar.get_accounts("nobody@example.com") == []
        assert sidecar.returncode is None
    assert sidecar.returncode == 0
    assert sidecar.close() == 0  # idempotent


def test_camel_case_keys_and_shared_device(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, env=base_env, clientId=CLIENT_ID, sharedDeviceMode=True,
                         cache={"persistence": "memory"}, timeout=QUICK) as sidecar:
        assert sidecar.get_device_information().shared


def test_timeout_keys(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory", http_timeout_seconds=7,
                         interactive_timeout_seconds=120, timeout=QUICK) as sidecar:
        assert sidecar.server_info.configuration["httpTimeoutSeconds"] == 7
        assert sidecar.server_info.configuration["interactiveTimeoutSeconds"] == 120
    with pytest.raises(a.InvalidParamsError):
        a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory", http_timeout_seconds=0,
                        timeout=QUICK)


def test_command_line_configuration_without_initialize(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--cache", "memory"], env=base_env,
                         timeout=QUICK) as sidecar:
        assert sidecar.server_info is None
        assert sidecar.get_accounts() == []


def test_binary_from_environment(sidecar_bin, base_env, monkeypatch):
    monkeypatch.setenv("AUTH_SIDECAR_BIN", sidecar_bin)
    with a.SidecarClient(env=base_env, client_id=CLIENT_ID, cache="memory", timeout=QUICK) as sidecar:
        assert sidecar.binary == sidecar_bin
        assert sidecar.ping() == {}


def test_missing_binary(tmp_path, monkeypatch):
    missing = str(tmp_path / "no-such-auth-sidecar")
    with pytest.raises(a.SidecarNotFoundError) as info:
        a.SidecarClient(missing, client_id=CLIENT_ID)
    assert missing in str(info.value) and isinstance(info.value, FileNotFoundError)
    monkeypatch.setenv("AUTH_SIDECAR_BIN", missing)
    with pytest.raises(a.SidecarNotFoundError, match="AUTH_SIDECAR_BIN"):
        a.SidecarClient()
    monkeypatch.delenv("AUTH_SIDECAR_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(a.SidecarNotFoundError, match=r"on PATH \(scripts/install.sh installs it"):
        a.SidecarClient()
    not_executable = tmp_path / "auth-sidecar"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(a.SidecarNotFoundError, match="not executable"):
        a.SidecarClient(str(not_executable))


def test_process_that_exits_at_start_reports_stderr(sidecar_bin, base_env):
    start = time.monotonic()
    with pytest.raises(a.SidecarExitedError) as info:
        a.SidecarClient(sidecar_bin, args=["--no-such-option"], env=base_env, client_id=CLIENT_ID)
    assert time.monotonic() - start < QUICK
    err = info.value
    assert err.returncode == 64, err
    assert "no-such-option" in err.stderr_tail and "no-such-option" in str(err)


def test_non_sidecar_binary_that_dies(tmp_path, base_env):
    fake = tmp_path / "fake-sidecar"
    fake.write_text("#!/bin/sh\necho 'fake sidecar: something broke' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(a.SidecarExitedError, match="something broke") as info:
        a.SidecarClient(str(fake), env=base_env, client_id=CLIENT_ID, start_timeout=QUICK)
    assert info.value.returncode == 3 and info.value.code is None


def test_killed_while_a_call_is_pending(sidecar_bin, base_env):
    sidecar = a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"], env=base_env)
    try:
        threading.Timer(0.3, sidecar.kill).start()
        start = time.monotonic()
        with pytest.raises(a.SidecarExitedError) as info:
            sidecar.call("diagnostics/sleep", {"ms": 20000}, timeout=QUICK)
        assert time.monotonic() - start < 5
        assert info.value.returncode == -9 and "signal 9" in str(info.value)
        with pytest.raises(a.SidecarExitedError):  # later calls fail at once
            sidecar.ping()
    finally:
        sidecar.close()


def test_process_exits_between_calls(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID], env=base_env, timeout=QUICK) as sidecar:
        sidecar.call("shutdown")
        sidecar.notify("exit")
        deadline = time.monotonic() + QUICK
        while sidecar.returncode is None and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(a.SidecarExitedError, match="exited with code 0"):
            sidecar.ping()


def test_not_configured_names_the_default_file_as_the_sidecar_reads_it():
    error = {"code": -32002, "message": "Server not initialized", "data": {"name": "serverNotInitialized"}}
    for environ, path in [({"HOME": "/h"}, "/h/.config/auth-sidecar/config.json"),
                          ({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/x/auth-sidecar/config.json"),
                          ({"HOME": "/h", "XDG_CONFIG_HOME": "rel", "AUTH_SIDECAR_CONFIG": "/c.json"}, "/c.json"),
                          ({"XDG_CONFIG_HOME": "rel"}, "$XDG_CONFIG_HOME/auth-sidecar/config.json")]:
        err = a.error_from_object(error, environ)
        assert isinstance(err, a.ServerNotInitializedError) and err.code == -32002
        assert err.message.endswith(" to " + path) and err.message.startswith("no client id configured: "), err.message


def test_error_classes(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, env=base_env, initialize=False, timeout=QUICK) as sidecar:
        with pytest.raises(a.ServerNotInitializedError) as info:
            sidecar.get_accounts()
        assert info.value.code == -32002 and info.value.name == "serverNotInitialized"
        # The command line's sentence: what is missing and the file to write (the sidecar's
        # $AUTH_SIDECAR_CONFIG here); the server's own words stay in raw.
        assert info.value.message == ('no client id configured: pass client_id="ID", or write '
                                      '{"clientId": "ID"} to ' + base_env["AUTH_SIDECAR_CONFIG"])
        assert "initialize" in info.value.raw["message"]
        with pytest.raises(a.InvalidParamsError) as info:
            sidecar.initialize(client_id=CLIENT_ID, client_secret="nope")
        assert info.value.member == "clientSecret" and isinstance(info.value, a.JsonRpcError)
        sidecar.initialize(client_id=CLIENT_ID, cache="memory")
        with pytest.raises(a.InvalidRequestError) as info:
            sidecar.initialize(client_id=CLIENT_ID)
        assert info.value.name == "alreadyInitialized"
        with pytest.raises(a.MethodNotFoundError):
            sidecar.call("noSuchMethod")
        with pytest.raises(a.InvalidParamsError) as info:
            sidecar.call_graph("me")  # must start with /
        assert info.value.member == "path"
        with pytest.raises(a.InteractionRequiredError) as info:
            sidecar.acquire_token_silent(["User.Read"])
        assert info.value.code == -50002 and isinstance(info.value, a.MsalError)
        with pytest.raises(a.AccountNotFoundError) as info:
            sidecar.signout("nobody@contoso.example")
        assert info.value.code == -51011 and isinstance(info.value, a.PlatformError)


def test_account_ref_with_both_members_is_invalid_params(sidecar_bin, base_env):
    """protocol/examples/signout.json: an AccountRef naming both members is -32602."""
    with a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory", timeout=QUICK) as sidecar:
        with pytest.raises(a.InvalidParamsError):
            sidecar.signout({"username": "x@example.com", "homeAccountId": "a.b"})


def test_error_mapping_table():
    expected = {
        -32700: a.ParseError, -32600: a.InvalidRequestError, -32601: a.MethodNotFoundError,
        -32602: a.InvalidParamsError, -32603: a.InternalRpcError, -32002: a.ServerNotInitializedError,
        -32800: a.RequestCancelledError, -50000: a.InternalError, -50001: a.WorkplaceJoinRequiredError,
        -50002: a.InteractionRequiredError, -50003: a.ServerDeclinedScopesError,
        -50004: a.ServerProtectionPoliciesRequiredError, -50005: a.UserCanceledError, -50006: a.ServerError,
        -51001: a.NetworkError, -51002: a.ServiceTimeoutError, -51003: a.TlsError,
        -51004: a.MalformedResponseError, -51005: a.CacheUnavailableError, -51006: a.BrowserUnavailableError,
        -51007: a.InteractiveInProgressError, -51008: a.AuthorityNotTrustedError,
        -51009: a.InsecureAuthorityError, -51010: a.InvalidConfigurationError, -51011: a.AccountNotFoundError,
        -51012: a.AmbiguousAccountError, -51013: a.PasswordResetRequiredError, -51014: a.ForwardRefusedError,
        -51015: a.BrokerUnavailableError, -51016: a.TokenKindNotServedError,
    }
    for code, cls in expected.items():
        err = a.error_from_object({"code": code, "message": "m", "data": {"name": "n", "claims": "{}"}})
        assert type(err) is cls and err.code == code and err.data["name"] == "n" and err.claims == "{}"
    assert type(a.error_from_object({"code": -51999, "message": "new", "data": {"name": "x"}})) is a.PlatformError
    assert type(a.error_from_object({"code": -50999, "message": "new", "data": {"name": "x"}})) is a.MsalError
    assert issubclass(a.ServiceTimeoutError, TimeoutError) and issubclass(a.RequestTimeoutError, TimeoutError)
    err = a.error_from_object({"code": -50003, "message": "m",
                               "data": {"name": "serverDeclinedScopes", "declinedScopes": ["Mail.Read"]}})
    assert err.data["declinedScopes"] == ["Mail.Read"] and "-50003" in str(err)


def test_cancel_token(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"], env=base_env,
                         timeout=QUICK) as sidecar:
        token = a.CancelToken()
        threading.Timer(0.2, token.cancel).start()
        start = time.monotonic()
        with pytest.raises(a.RequestCancelledError) as info:
            sidecar.call("diagnostics/sleep", {"ms": 20000}, cancel=token)
        assert time.monotonic() - start < 5
        assert info.value.code == -32800 and info.value.name == "requestCancelled"
        assert info.value.raw["code"] == -32800  # the server's own answer
        with pytest.raises(a.RequestCancelledError):  # an already-cancelled token cancels at once
            sidecar.call("diagnostics/sleep", {"ms": 20000}, cancel=token)
        assert sidecar.ping() == {}


def test_timeout_cancels_the_request(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"], env=base_env) as sidecar:
        start = time.monotonic()
        with pytest.raises(a.RequestTimeoutError) as info:
            sidecar.call("diagnostics/sleep", {"ms": 20000}, timeout=0.3)
        assert time.monotonic() - start < 5
        assert isinstance(info.value, TimeoutError) and isinstance(info.value, a.RequestCancelledError)
        assert info.value.raw["code"] == -32800


def test_concurrent_calls_from_threads(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"], env=base_env,
                         timeout=QUICK) as sidecar:
        results, errors = [], []

        def work(i):
            try:
                if i % 5 == 0:
                    results.append(sidecar.call("diagnostics/sleep", {"ms": 200}))
                else:
                    results.append(sidecar.call("diagnostics/echo", {"i": i}))
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(QUICK)
        assert not errors and len(results) == 40
        assert sorted(r["i"] for r in results if "i" in r) == [i for i in range(40) if i % 5]


def test_close_cancels_in_flight_requests(sidecar_bin, base_env):
    sidecar = a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"], env=base_env)
    outcome = []

    def slow():
        try:
            sidecar.call("diagnostics/sleep", {"ms": 30000}, timeout=QUICK)
        except a.SidecarError as err:
            outcome.append(err)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.3)
    start = time.monotonic()
    assert sidecar.close() == 0
    assert time.monotonic() - start < 5
    t.join(QUICK)
    assert outcome and isinstance(outcome[0], (a.RequestCancelledError, a.SidecarExitedError))


def test_stderr_is_collected(sidecar_bin, base_env):
    with a.SidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--log-level", "debug"], env=base_env,
                         timeout=QUICK) as sidecar:
        sidecar.ping()
    assert sidecar.stderr_tail  # debug logs went to stderr, none to stdout
