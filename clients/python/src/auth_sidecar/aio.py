"""The asyncio client. Cancelling the task that awaits a call (``task.cancel()``,
``asyncio.wait_for``, ``asyncio.timeout``) sends ``$/cancelRequest`` to the sidecar."""
from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from . import _common as c
from ._transport import AsyncTransport, open_async_transport
from .errors import BrowserUnavailableError, RequestTimeoutError, SidecarError, SidecarExitedError
from .types import (Account, AccountLike, CurrentAccount, DeviceCode, DeviceInformation, GraphResponse,
                    ServerInfo, SignedHttpRequest, SignoutResult, TokenResult)

__all__ = ["AsyncSidecarClient"]

Callback = Callable[..., Union[Any, Awaitable[Any]]]


class AsyncSidecarClient:
    """``async with AsyncSidecarClient(binary=None, *, socket=None, args=(), env=None, **config) as client:``

    Same options as :class:`auth_sidecar.SidecarClient` (``socket``: the agent's Unix socket,
    default ``$AUTH_SIDECAR_SOCK``, checked and connected by :meth:`start`); callbacks (``on_device_code``,
    ``on_open_url``, ``on_paste_sign_in``, ``on_notification``) may be plain functions or
    coroutine functions (a plain ``on_open_url`` or ``on_paste_sign_in`` runs in the default
    executor, so it may block). Without ``async
    with``, call ``await client.start()`` and ``await client.close()``.
    """

    def __init__(self, binary: Optional[str] = None, *, socket: c.SocketOption = None, args=(),
                 env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, initialize: Optional[bool] = None,
                 on_device_code: Optional[Callback] = None, on_open_url: Optional[Callback] = None,
                 on_paste_sign_in: Optional[Callback] = None,
                 on_notification: Optional[Callback] = None, timeout: Optional[float] = None,
                 start_timeout: float = 15.0, shutdown_timeout: float = 5.0, stderr=None, **config: Any):
        self._socket, self._socket_explicit = c.agent_socket(socket)
        # the binary is checked now unless the agent may serve (then start() finds it if needed)
        self.binary: Optional[str] = binary if self._socket else c.find_binary(binary)
        #: the agent's socket once connected to it
        self.socket: Optional[str] = None
        self.args = list(args)
        self.env, self.cwd = env, cwd
        self.on_device_code = on_device_code
        self.on_open_url = on_open_url
        self.on_paste_sign_in = on_paste_sign_in
        self.on_notification = on_notification
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.shutdown_timeout = shutdown_timeout
        if on_open_url is not None and "browser" not in config:
            config["browser"] = "client"
        self._config = config
        self._initialize = initialize or (initialize is None and bool(config))
        self.server_info: Optional[ServerInfo] = None
        self._ids = itertools.count(1)
        self._pending: Dict[Any, asyncio.Future] = {}
        self._device_code_handlers: Dict[Any, Callback] = {}
        self._dead: Optional[SidecarExitedError] = None
        self._closed = False
        self._stderr = stderr
        self._transport: Optional[AsyncTransport] = None
        self._tasks: set = set()

    # ---- lifecycle -----------------------------------------------------------------------

    async def start(self) -> "AsyncSidecarClient":
        if self._transport is not None:
            return self
        self._transport = await open_async_transport(self.binary, self._socket, self._socket_explicit, self.args,
                                                     self.env, self.cwd, self._stderr)
        self.binary, self.socket = self._transport.binary, self._transport.socket
        self._write_lock = asyncio.Lock()
        self._reader_task = asyncio.ensure_future(self._read_incoming())
        if self._initialize:
            try:
                await self.initialize(timeout=self.start_timeout, **self._config)
            except BaseException:
                await self.close(graceful=False)
                raise
        return self

    async def __aenter__(self) -> "AsyncSidecarClient":
        return await self.start()

    async def __aexit__(self, exc_type, exc, tb) -> None:
        await self.close()

    @property
    def pid(self) -> Optional[int]:
        """The process id; None before start() and for an agent connection."""
        return self._transport.pid if self._transport else None

    @property
    def returncode(self) -> Optional[int]:
        """The exit code once the process has exited; None while it runs, and for an agent connection."""
        return self._transport.returncode if self._transport else None

    @property
    def stderr_tail(self) -> str:
        """The end of the process's stderr; empty for an agent connection."""
        return self._transport.stderr_tail if self._transport else ""

    async def initialize(self, *, timeout: Optional[float] = None, **config: Any) -> ServerInfo:
        self.server_info = await self._call("initialize", c.config_params(config), timeout,
                                            c.DECODERS["initialize"])
        return self.server_info

    async def close(self, graceful: bool = True) -> Optional[int]:
        """Cancel what is in flight, ``shutdown`` + ``exit``, wait; kill after ``shutdown_timeout``.
        Returns the exit code (None for an agent connection: it is closed, the agent runs on)."""
        transport = self._transport
        if self._closed or transport is None:
            return transport.returncode if transport else None
        self._closed = True
        if graceful and self._dead is None and transport.returncode is None:
            for rid in list(self._pending):
                await self._try_send(c.notification_message("$/cancelRequest", {"id": rid}))
            try:
                await self._call("shutdown", None, self.shutdown_timeout, None)
                await self._try_send(c.notification_message("exit"))
            except SidecarError:
                pass
        transport.end_output()
        await transport.wait(self.shutdown_timeout if graceful else 0.5)
        await asyncio.wait({self._reader_task}, timeout=5)
        await transport.release()
        for task in list(self._tasks):
            task.cancel()
        return transport.returncode

    def kill(self) -> None:
        """Kill the process (or drop the agent connection) at once."""
        if self._transport is not None:
            self._transport.kill()

    # ---- raw JSON-RPC --------------------------------------------------------------------

    async def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Send any request; return its ``result`` as parsed JSON, or raise its error."""
        return await self._call(method, params, timeout, None)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._send(c.notification_message(method, params))

    # ---- methods -------------------------------------------------------------------------

    async def ping(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        return await self._call("ping", {}, timeout, None)

    async def get_device_information(self, *, timeout: Optional[float] = None) -> DeviceInformation:
        return await self._call("getDeviceInformation", {}, timeout, c.DECODERS["getDeviceInformation"])

    async def get_current_account(self, *, timeout: Optional[float] = None) -> CurrentAccount:
        return await self._call("getCurrentAccount", {}, timeout, c.DECODERS["getCurrentAccount"])

    async def get_accounts(self, username: Optional[str] = None, *,
                           timeout: Optional[float] = None) -> List[Account]:
        return await self._call("getAccounts", c.drop_unset(username=username), timeout, c.DECODERS["getAccounts"])

    async def get_cache_summary(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """See :meth:`SidecarClient.get_cache_summary`."""
        return await self._call("getCacheSummary", {}, timeout, None)

    async def set_current_account(self, account: AccountLike, *, timeout: Optional[float] = None) -> CurrentAccount:
        """See :meth:`SidecarClient.set_current_account`."""
        return await self._call("setCurrentAccount", c.set_current_account_params(account), timeout,
                                c.DECODERS["setCurrentAccount"])

    async def acquire_token(self, scopes=None, *, prompt_type: Optional[str] = None,
                            login_hint: Optional[str] = None, domain_hint: Optional[str] = None,
                            account: Optional[AccountLike] = None, authority: Optional[str] = None,
                            claims: Optional[str] = None, extra_scopes_to_consent=None,
                            extra_query_parameters: Optional[Dict[str, str]] = None, flow: Optional[str] = None,
                            correlation_id: Optional[str] = None, on_device_code: Optional[Callback] = None,
                            ssh_public_key: Optional[str] = None,
                            proof_of_possession: Optional[Dict[str, str]] = None,
                            timeout: Optional[float] = None) -> TokenResult:
        params = c.acquire_token_params(scopes, prompt_type, login_hint, domain_hint, account, authority, claims,
                                        extra_scopes_to_consent, extra_query_parameters, flow, correlation_id,
                                        ssh_public_key, proof_of_possession)
        return await self._call("acquireToken", params, timeout, c.DECODERS["acquireToken"], on_device_code)

    async def acquire_token_silent(self, scopes=None, *, account: Optional[AccountLike] = None,
                                   authority: Optional[str] = None, force_refresh: Optional[bool] = None,
                                   claims: Optional[str] = None, correlation_id: Optional[str] = None,
                                   ssh_public_key: Optional[str] = None,
                                   proof_of_possession: Optional[Dict[str, str]] = None,
                                   timeout: Optional[float] = None) -> TokenResult:
        params = c.acquire_token_silent_params(scopes, account, authority, force_refresh, claims, correlation_id,
                                               ssh_public_key, proof_of_possession)
        return await self._call("acquireTokenSilent", params, timeout, c.DECODERS["acquireTokenSilent"])

    async def signout(self, account: Optional[AccountLike] = None, *, signout_from_browser: Optional[bool] = None,
                      timeout: Optional[float] = None) -> SignoutResult:
        return await self._call("signout", c.signout_params(account, signout_from_browser), timeout,
                                c.DECODERS["signout"])

    async def call_graph(self, path: Optional[str] = None, *, method: Optional[str] = None,
                         api_version: Optional[str] = None, query: Optional[Dict[str, str]] = None,
                         headers: Optional[Dict[str, str]] = None, body: Any = c.UNSET,
                         account: Optional[AccountLike] = None, scopes=None, all_pages: Optional[bool] = None,
                         max_pages: Optional[int] = None, timeout_seconds: Optional[int] = None,
                         correlation_id: Optional[str] = None,
                         timeout: Optional[float] = None) -> GraphResponse:
        params = c.call_graph_params(path, method, api_version, query, headers, body, account, scopes,
                                     all_pages, max_pages, timeout_seconds, correlation_id)
        return await self._call("callGraph", params, timeout, c.DECODERS["callGraph"])

    async def sign_http_request(self, method: Optional[str] = None, url: Optional[str] = None, *,
                                nonce: Optional[str] = None, client_claims: Optional[str] = None, scopes=None,
                                account: Optional[AccountLike] = None, correlation_id: Optional[str] = None,
                                timeout: Optional[float] = None, resource_id: Optional[str] = None) -> SignedHttpRequest:
        """A fresh signed HTTP request (PoP) with the cached PoP token (see SidecarClient)."""
        params = c.sign_http_request_params(method, url, nonce, client_claims, scopes, account, correlation_id, resource_id)
        return await self._call("signHttpRequest", params, timeout, c.DECODERS["signHttpRequest"])

    # ---- engine --------------------------------------------------------------------------

    async def _call(self, method: str, params: Any, timeout: Optional[float], decode: Optional[c.Decoder],
                    on_device_code: Optional[Callback] = None) -> Any:
        if self._transport is None:
            await self.start()
        if timeout is None:
            timeout = self.timeout
        if self._dead is not None:
            raise self._dead_error("before %s was sent" % method)
        loop = asyncio.get_running_loop()
        rid = next(self._ids)
        fut: asyncio.Future = loop.create_future()
        self._pending[rid] = fut
        if on_device_code is not None:
            self._device_code_handlers[rid] = on_device_code
        try:
            await self._send(c.request_message(rid, method, params))
            try:
                done, _ = await asyncio.wait({fut}, timeout=timeout)
            except asyncio.CancelledError:
                await self._cancel_remote(rid, fut)
                raise
            if not done:
                await self._cancel_remote(rid, fut)
                error = None
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    reply = fut.result()
                    error = reply.get("error") if isinstance(reply.get("error"), dict) else None
                data = error.get("data") if error and error.get("code") == -32800 else None
                raise RequestTimeoutError("%s timed out after %ss and was cancelled" % (method, timeout),
                                          data=data or {"name": "requestCancelled"}, raw=error if data else None)
        finally:
            self._pending.pop(rid, None)
            self._device_code_handlers.pop(rid, None)
        ok, value = c.outcome(fut.result(), self.env)  # raises SidecarExitedError set by the reader
        if not ok:
            raise value
        return decode(value) if decode is not None else value

    async def _cancel_remote(self, rid: Any, fut: asyncio.Future) -> None:
        """$/cancelRequest, then give the server a moment to answer -32800 (so that, e.g.,
        its interactive sign-in slot is free again when the caller goes on)."""
        try:
            await self._try_send(c.notification_message("$/cancelRequest", {"id": rid}))
            await asyncio.wait({fut}, timeout=c.CANCEL_GRACE)
        except asyncio.CancelledError:
            pass

    async def _send(self, data: bytes) -> None:
        if self._dead is not None:
            raise self._dead_error("before a message could be sent")
        async with self._write_lock:
            try:
                await self._transport.send(data)  # type: ignore[union-attr]
                return
            except (OSError, RuntimeError, AttributeError):
                pass
        await asyncio.wait({self._reader_task}, timeout=3)
        raise self._dead_error("(its input is closed)")

    async def _try_send(self, data: bytes) -> None:
        try:
            await self._send(data)
        except SidecarError:
            pass

    def _dead_error(self, what: str) -> SidecarExitedError:
        return self._transport.ended(what)  # type: ignore[union-attr]

    async def _read_incoming(self) -> None:
        transport = self._transport
        assert transport is not None
        stream = transport.incoming
        try:
            while True:
                try:
                    line = await stream.readline()
                except ValueError:  # a line over the limit: skip it
                    continue
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                for m in (msg if isinstance(msg, list) else [msg]):
                    self._dispatch(m)
        except (OSError, asyncio.IncompleteReadError):
            pass
        await transport.input_ended()
        self._dead = transport.ended("")
        for rid, fut in list(self._pending.items()):
            if not fut.done():
                fut.set_exception(self._dead_error("while request %r was pending" % (rid,)))

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _dispatch(self, msg: Any) -> None:
        kind = c.classify(msg)
        if kind == "response":
            fut = self._pending.get(msg.get("id"))
            if fut is not None and not fut.done():
                fut.set_result(msg)
        elif kind == "notification":
            method, params = msg["method"], msg.get("params")
            callback, args = None, ()
            if method == "deviceCode" and isinstance(params, dict):
                callback = self._device_code_handlers.get(params.get("requestId")) or self.on_device_code
                args = (DeviceCode.from_json(params),)
            if callback is None and self.on_notification is not None:
                callback, args = self.on_notification, (method, params)
            if callback is not None:
                self._spawn(_invoke(callback, args, in_executor=False))
        elif kind == "request":
            self._spawn(self._answer_server_request(msg))

    async def _answer_server_request(self, msg: Dict[str, Any]) -> None:
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if method == "openUrl":
            if self.on_open_url is None:
                reply = {"error": _client_error("the client has no on_open_url handler")}
            else:
                try:
                    ok = await _invoke(self.on_open_url, (params.get("url"),), in_executor=True, reraise=True)
                    reply = {"result": {}} if ok is not False else {
                        "error": _client_error("the client could not open the URL")}
                except Exception as err:  # noqa: BLE001 - reported to the server
                    reply = {"error": _client_error("on_open_url failed: %s" % err)}
        elif method == "pasteSignIn" and self.on_paste_sign_in is not None:
            try:
                pasted = await _invoke(self.on_paste_sign_in, (params.get("url"),), in_executor=True, reraise=True)
                reply = c.paste_reply(lambda url: pasted, params)
            except Exception as err:  # noqa: BLE001 - reported to the server
                reply = {"error": {"code": -32000, "message": "on_paste_sign_in failed: %s" % err,
                                   "data": {"name": "noPastedAddress"}}}
        else:
            reply = {"error": {"code": -32601, "message": "Method not found", "data": {"name": "methodNotFound"}}}
        await self._try_send(c.encode(dict({"jsonrpc": "2.0", "id": rid}, **reply)))


def _client_error(message: str) -> Dict[str, Any]:
    return {"code": BrowserUnavailableError.code, "message": message,
            "data": {"name": BrowserUnavailableError.error_name}}


async def _invoke(callback: Callback, args: tuple, in_executor: bool, reraise: bool = False) -> Any:
    try:
        if inspect.iscoroutinefunction(callback):
            return await callback(*args)
        if in_executor:
            result = await asyncio.get_running_loop().run_in_executor(None, lambda: callback(*args))
        else:
            result = callback(*args)
        if inspect.isawaitable(result):
            result = await result
        return result
    except Exception:  # noqa: BLE001
        if reraise:
            raise
        import traceback
        traceback.print_exc()
        return None
