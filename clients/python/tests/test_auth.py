"""The synchronous client against the mock identity platform: browser, client-opened browser
and device-code sign-in, the cache, silent renewal, Graph, sign-out, cancellation."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

import auth_sidecar as a
from conftest import ALICE, BOB, SCRIPTED_BROWSER

QUICK = 10.0
SIGN_IN = 25.0
SCOPES = ["User.Read"]


def test_browser_sign_in_cache_graph_signout(sidecar_bin, auth_env, auth_config, mock):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        token = sidecar.acquire_token(SCOPES, timeout=SIGN_IN)
        assert isinstance(token, a.TokenResult) and not token.from_cache
        assert token.token_type == "Bearer" and token.access_token.count(".") == 2
        assert token.expires_on > time.time() and "User.Read" in token.scopes
        assert token.account.username == ALICE and token.account.home_account_id
        assert token.access_token not in repr(token)
        assert token.authorization_header == "Bearer " + token.access_token

        current = sidecar.get_current_account()
        assert current.account == token.account and current.previous_account is None
        assert sidecar.get_accounts() == [token.account]
        assert sidecar.get_accounts(ALICE.upper()) == [token.account]
        summary = sidecar.get_cache_summary()
        assert summary["refreshTokenAccounts"] == [token.account.home_account_id]
        assert [t["homeAccountId"] for t in summary["accessTokens"]] == [token.account.home_account_id]
        assert token.access_token not in repr(summary)

        silent = sidecar.acquire_token_silent(SCOPES)
        assert silent.from_cache and silent.access_token == token.access_token
        cid = "12345678-1234-4123-8123-123456789abc"
        refreshed = sidecar.acquire_token_silent(SCOPES, account=token.account, force_refresh=True, correlation_id=cid)
        assert not refreshed.from_cache and refreshed.access_token != token.access_token
        assert refreshed.correlation_id == cid
        assert mock.admin.count("token:refresh_token") == 1

        me = sidecar.call_graph("/me")
        assert isinstance(me, a.GraphResponse) and me.ok and me.status == 200
        assert me.body["userPrincipalName"] == ALICE
        assert me.headers.get("content-type", "").startswith("application/json")
        missing = sidecar.call_graph("/users", query={"$top": "2"})  # needs User.ReadBasic.All: 403 is a result
        assert missing.status == 403 and not missing.ok

        out = sidecar.signout()
        assert out.signed_out and out.account == token.account
        assert sidecar.get_accounts() == []
        current = sidecar.get_current_account()
        assert current.account is None and current.previous_account == token.account
        with pytest.raises(a.InteractionRequiredError):
            sidecar.acquire_token_silent(SCOPES)


def test_cache_survives_restart(sidecar_bin, auth_env, auth_config):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        first = sidecar.acquire_token(SCOPES, login_hint=BOB, timeout=SIGN_IN)
        assert first.account.username == BOB
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        again = sidecar.acquire_token_silent(SCOPES, account=BOB)
        assert again.from_cache and again.access_token == first.access_token


def test_set_current_account_switches_what_silent_calls_use(sidecar_bin, auth_env, auth_config):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        alice = sidecar.acquire_token(SCOPES, login_hint=ALICE, timeout=SIGN_IN).account
        sidecar.acquire_token(SCOPES, login_hint=BOB, timeout=SIGN_IN)
        assert sidecar.get_current_account().account.username == BOB
        switched = sidecar.set_current_account(ALICE)
        assert switched.account.username == ALICE and switched.previous_account.username == BOB
        assert sidecar.acquire_token_silent(SCOPES).account.username == ALICE
        assert sidecar.set_current_account(alice).account.home_account_id == alice.home_account_id  # an Account
        with pytest.raises(a.AccountNotFoundError):
            sidecar.set_current_account("nobody@contoso.com")
        with pytest.raises(TypeError):
            sidecar.set_current_account(None)


def test_revoked_refresh_token_needs_interaction(sidecar_bin, auth_env, auth_config, mock):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        sidecar.acquire_token(SCOPES, timeout=SIGN_IN)
        mock.admin.revoke(username=ALICE)
        with pytest.raises(a.InteractionRequiredError) as info:
            sidecar.acquire_token_silent(SCOPES, force_refresh=True)
        assert info.value.oauth_error == "invalid_grant"


def test_service_failure_is_server_error(sidecar_bin, auth_env, auth_config, mock):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        sidecar.acquire_token(SCOPES, timeout=SIGN_IN)
        mock.admin.fault(endpoint="token", type="status", status=500, times=-1)
        with pytest.raises(a.ServerError) as info:
            sidecar.acquire_token_silent(SCOPES, force_refresh=True)
        assert info.value.code == -50006 and info.value.data.get("httpStatus") == 500


def test_device_code_flow(sidecar_bin, auth_env, auth_config, mock):
    seen = []

    def on_device_code(code: a.DeviceCode):
        seen.append(code)
        mock.admin.device("approve", code.user_code, username=BOB)

    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=SIGN_IN, on_device_code=on_device_code,
                         **auth_config) as sidecar:
        token = sidecar.acquire_token(SCOPES, flow="deviceCode")
        assert token.account.username == BOB
        assert len(seen) == 1 and seen[0].user_code and seen[0].user_code in seen[0].message
        assert seen[0].verification_uri.startswith(mock.url)


def test_device_code_declined_per_call_callback(sidecar_bin, auth_env, auth_config, mock):
    client_level = []
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=SIGN_IN, on_device_code=client_level.append,
                         **auth_config) as sidecar:
        with pytest.raises(a.UserCanceledError) as info:
            sidecar.acquire_token(SCOPES, flow="deviceCode",
                                  on_device_code=lambda code: mock.admin.device("decline", code.user_code))
        assert info.value.oauth_error == "authorization_declined"
        assert client_level == []


def test_open_url_callback(sidecar_bin, auth_env, auth_config):
    env = auth_env(SCRIPTED_BROWSER_WAIT="1")
    opened = []

    def open_url(url: str):
        opened.append(url)
        # run the scripted browser in the background (a real app would call webbrowser.open)
        subprocess.Popen([sys.executable, str(SCRIPTED_BROWSER), url], env=env)

    with a.SidecarClient(sidecar_bin, env=dict(env, BROWSER="/bin/false"), timeout=SIGN_IN,
                         on_open_url=open_url, **auth_config) as sidecar:
        assert sidecar.server_info.configuration["browser"] == "client"
        token = sidecar.acquire_token(SCOPES, prompt_type="selectAccount")
        assert token.account.username == ALICE
        assert len(opened) == 1 and "/oauth2/v2.0/authorize?" in opened[0] and "prompt=select_account" in opened[0]


def _browse_to_address(env, url: str) -> str:
    """The user of a paste-back sign-in: the address the scripted browser ends on."""
    done = subprocess.run([sys.executable, str(SCRIPTED_BROWSER), url], env=dict(env, SCRIPTED_BROWSER_ADDRESS="1"),
                          capture_output=True, text=True, timeout=SIGN_IN)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_paste_sign_in_callback(sidecar_bin, auth_env, auth_config, mock):
    env = auth_env()
    shown = []

    def paste(url: str) -> str:
        shown.append(url)
        return _browse_to_address(env, url)

    with a.SidecarClient(sidecar_bin, env=env, timeout=SIGN_IN, on_paste_sign_in=paste, **auth_config) as sidecar:
        token = sidecar.acquire_token(SCOPES, flow="paste")
        assert token.account.username == ALICE
        assert len(shown) == 1 and "redirect_uri=http%3A%2F%2Flocalhost&" in shown[0]
        assert sidecar.acquire_token(SCOPES, flow="paste", prompt_type="login").account.username == ALICE
        assert len(shown) == 2 and "prompt=login" in shown[1]
    with a.SidecarClient(sidecar_bin, env=env, timeout=SIGN_IN, on_paste_sign_in=lambda url: None,
                         **auth_config) as sidecar:
        with pytest.raises(a.UserCanceledError):
            sidecar.acquire_token(SCOPES, flow="paste")


def test_paste_sign_in_wrong_state_and_blocked_device_code(sidecar_bin, auth_env, auth_config, mock):
    env = auth_env()

    def tampered(url: str) -> str:
        return _browse_to_address(env, url).replace("state=", "state=x")

    with a.SidecarClient(sidecar_bin, env=env, timeout=SIGN_IN, on_paste_sign_in=tampered, **auth_config) as sidecar:
        with pytest.raises(a.PastedAddressRefusedError) as info:
            sidecar.acquire_token(SCOPES, flow="paste")
        assert info.value.data["name"] == "pastedStateMismatch"
    mock.admin.tenants(id="aaaabbbb-0000-cccc-1111-dddd2222eeee", device_code_blocked=True)
    mock.admin.config(device_code_interval=1)
    with a.SidecarClient(sidecar_bin, env=env, timeout=SIGN_IN, **auth_config) as sidecar:
        with pytest.raises(a.DeviceCodeBlockedError) as blocked:
            sidecar.acquire_token(SCOPES, flow="deviceCode",
                                  on_device_code=lambda code: mock.admin.device("approve", code.user_code))
        assert blocked.value.code == -51018 and 'flow "paste"' in str(blocked.value)


def test_open_url_refused(sidecar_bin, auth_env, auth_config):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=SIGN_IN, on_open_url=lambda url: False,
                         **auth_config) as sidecar:
        with pytest.raises(a.BrowserUnavailableError) as info:
            sidecar.acquire_token(SCOPES)
        assert info.value.code == -51006

    def broken(url):
        raise RuntimeError("no display")

    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=SIGN_IN, on_open_url=broken, **auth_config) as sidecar:
        with pytest.raises(a.BrowserUnavailableError):
            sidecar.acquire_token(SCOPES)


def test_user_cancels_in_the_browser(sidecar_bin, auth_env, auth_config):
    with a.SidecarClient(sidecar_bin, env=auth_env("deny"), timeout=SIGN_IN, **auth_config) as sidecar:
        with pytest.raises(a.UserCanceledError):
            sidecar.acquire_token(SCOPES)


def test_cancel_interactive_sign_in(sidecar_bin, auth_env, auth_config, tmp_path):
    """The browser never answers (the user closed it); the app cancels. The sidecar must have
    received $/cancelRequest: a second interactive sign-in is not 'interactiveInProgress'."""
    with a.SidecarClient(sidecar_bin, env=auth_env("cancel"), timeout=SIGN_IN, **auth_config) as sidecar:
        token = a.CancelToken()
        threading.Timer(1.0, token.cancel).start()
        start = time.monotonic()
        with pytest.raises(a.RequestCancelledError) as info:
            sidecar.acquire_token(SCOPES, cancel=token)
        assert time.monotonic() - start < 8
        assert info.value.raw["code"] == -32800  # answered by the server
        with pytest.raises(a.RequestTimeoutError):
            sidecar.acquire_token(SCOPES, timeout=1.0)
        assert sidecar.ping() == {}


def test_concurrent_silent_calls_share_one_refresh(sidecar_bin, auth_env, auth_config, mock):
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
        mock.admin.config(access_token_lifetime=60)  # inside the 5-minute refresh margin
        first = sidecar.acquire_token(SCOPES, timeout=SIGN_IN)
        mock.admin.config(access_token_lifetime=3600)
        results = []
        threads = [threading.Thread(target=lambda: results.append(sidecar.acquire_token_silent(SCOPES)))
                   for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(QUICK)
        assert len(results) == 10
        assert any(not r.from_cache for r in results) and results[0].access_token != first.access_token
        assert len({r.access_token for r in results}) == 1
        assert mock.admin.count("token:refresh_token") == 1
