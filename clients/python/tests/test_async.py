"""The asyncio client: the same flows, task cancellation sending $/cancelRequest, a crash."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

import auth_sidecar as a
from conftest import ALICE, BOB, CLIENT_ID, SCRIPTED_BROWSER, APP_ID

QUICK = 10.0
SIGN_IN = 25.0
SCOPES = ["User.Read"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 35))


def test_async_no_service_methods(sidecar_bin, base_env):
    async def main():
        async with a.AsyncSidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory",
                                        timeout=QUICK) as sidecar:
            assert sidecar.server_info.name == "auth-sidecar"
            results = await asyncio.gather(*[sidecar.ping() for _ in range(20)], sidecar.get_device_information(),
                                           sidecar.get_current_account(), sidecar.get_accounts())
            assert results[:20] == [{}] * 20
            assert results[20].device_mode == "private"
            assert results[21] == a.CurrentAccount(None, None) and results[22] == []
            with pytest.raises(a.InteractionRequiredError):
                await sidecar.acquire_token_silent(SCOPES)
            with pytest.raises(a.InvalidParamsError) as info:
                await sidecar.call("getAccounts", {"bogus": 1})
            assert info.value.member == "bogus"
        return sidecar.returncode
    assert run(main()) == 0


def test_async_task_cancellation_sends_cancel_request(sidecar_bin, base_env):
    async def main():
        async with a.AsyncSidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"],
                                        env=base_env, timeout=QUICK) as sidecar:
            task = asyncio.ensure_future(sidecar.call("diagnostics/sleep", {"ms": 20000}))
            await asyncio.sleep(0.3)
            task.cancel()
            start = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - start < 5
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(sidecar.call("diagnostics/sleep", {"ms": 20000}), 0.3)
            with pytest.raises(a.RequestTimeoutError) as info:
                await sidecar.call("diagnostics/sleep", {"ms": 20000}, timeout=0.3)
            assert info.value.raw["code"] == -32800  # the server confirmed the cancellation
            assert await sidecar.ping() == {}
    run(main())


def test_async_missing_and_crashing_binary(sidecar_bin, base_env, tmp_path):
    with pytest.raises(a.SidecarNotFoundError):
        a.AsyncSidecarClient(str(tmp_path / "missing"))

    async def main():
        with pytest.raises(a.SidecarExitedError) as info:
            async with a.AsyncSidecarClient(sidecar_bin, args=["--bogus"], env=base_env, client_id=CLIENT_ID):
                pass
        assert info.value.returncode == 64 and "bogus" in info.value.stderr_tail

        sidecar = await a.AsyncSidecarClient(sidecar_bin, args=["--client-id", APP_ID, "--enable-diagnostics"],
                                             env=base_env).start()
        try:
            asyncio.get_running_loop().call_later(0.3, sidecar.kill)
            with pytest.raises(a.SidecarExitedError) as info:
                await sidecar.call("diagnostics/sleep", {"ms": 20000}, timeout=QUICK)
            assert info.value.returncode == -9
            with pytest.raises(a.SidecarExitedError):
                await sidecar.ping()
        finally:
            await sidecar.close()
    run(main())


def test_async_sign_in_silent_graph_signout(sidecar_bin, auth_env, auth_config, mock):
    async def main():
        async with a.AsyncSidecarClient(sidecar_bin, env=auth_env(), timeout=QUICK, **auth_config) as sidecar:
            token = await sidecar.acquire_token(SCOPES, timeout=SIGN_IN)
            assert token.account.username == ALICE
            silent = await sidecar.acquire_token_silent(SCOPES, account=token.account)
            assert silent.from_cache
            me = await sidecar.call_graph("/me", api_version="beta")
            assert me.status == 200 and me.body["userPrincipalName"] == ALICE
            assert (await sidecar.signout(token.account)).signed_out
            assert await sidecar.get_accounts() == []
    run(main())


def test_async_device_code_with_coroutine_callback(sidecar_bin, auth_env, auth_config, mock):
    async def main():
        seen = []

        async def on_device_code(code):
            seen.append(code)
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: mock.admin.device("approve", code.user_code, username=BOB))

        async with a.AsyncSidecarClient(sidecar_bin, env=auth_env(), timeout=SIGN_IN,
                                        on_device_code=on_device_code, **auth_config) as sidecar:
            token = await sidecar.acquire_token(SCOPES, flow="deviceCode")
            assert token.account.username == BOB and len(seen) == 1
    run(main())


def test_async_open_url(sidecar_bin, auth_env, auth_config):
    env = auth_env(SCRIPTED_BROWSER_WAIT="1")

    def open_url(url):  # plain function: runs in the executor; launches the browser and returns
        subprocess.Popen([sys.executable, str(SCRIPTED_BROWSER), url], env=env)

    async def main():
        async with a.AsyncSidecarClient(sidecar_bin, env=dict(env, BROWSER="/bin/false"), timeout=SIGN_IN,
                                        on_open_url=open_url, **auth_config) as sidecar:
            token = await sidecar.acquire_token(SCOPES)
            assert token.account.username == ALICE

        async def refuse(url):
            return False

        async with a.AsyncSidecarClient(sidecar_bin, env=env, timeout=SIGN_IN, on_open_url=refuse,
                                        **auth_config) as sidecar:
            with pytest.raises(a.BrowserUnavailableError):
                await sidecar.acquire_token(SCOPES)
    run(main())


def test_async_cancel_interactive_sign_in(sidecar_bin, auth_env, auth_config):
    async def main():
        async with a.AsyncSidecarClient(sidecar_bin, env=auth_env("cancel"), timeout=SIGN_IN,
                                        **auth_config) as sidecar:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(sidecar.acquire_token(SCOPES), 1.0)
            # the sidecar got $/cancelRequest: no interactiveInProgress for the next one
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(sidecar.acquire_token(SCOPES), 1.0)
            assert await sidecar.ping() == {}
    run(main())
