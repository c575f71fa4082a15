"""The synchronous client: one auth-sidecar process (or agent connection), driven from any
number of threads."""
from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Union

from . import _common as c
from ._transport import open_transport
from .errors import (BrowserUnavailableError, RequestCancelledError, RequestTimeoutError, SidecarError,
                     SidecarExitedError)
from .types import (Account, AccountLike, CurrentAccount, DeviceCode, DeviceInformation, GraphResponse,
                    ServerInfo, SignedHttpRequest, SignoutResult, TokenResult)

__all__ = ["SidecarClient", "CancelToken"]

DeviceCodeCallback = Callable[[DeviceCode], Any]
OpenUrlCallback = Callable[[str], Any]
#: ``on_paste_sign_in(url) -> str``: shows the sign-in URL, returns what the user pasted back
PasteSignInCallback = Callable[[str], Optional[str]]


class CancelToken:
    """Cancels the requests it is passed to (``cancel=token``), from any thread.

    ``token.cancel()`` sends ``$/cancelRequest`` for each of them; the calls then raise
    :class:`RequestCancelledError`. A token cancelled before the call cancels it at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._hooks: List[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def _register(self, hook: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            if not self._cancelled:
                self._hooks.append(hook)
                return lambda: self._unregister(hook)
        hook()
        return lambda: None

    def _unregister(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if hook in self._hooks:
                self._hooks.remove(hook)


class _Pending:
    __slots__ = ("wake", "reply", "cancel_requested", "on_device_code")

    def __init__(self, on_device_code: Optional[DeviceCodeCallback]):
        self.wake = threading.Event()
        self.reply: Optional[Dict[str, Any]] = None
        self.cancel_requested = False
        self.on_device_code = on_device_code


class SidecarClient:
    """Spawns auth-sidecar and talks JSON-RPC to it over its stdin/stdout, or connects to a
    running agent (``auth-sidecar agent``) on its Unix socket.

    ``SidecarClient(binary=None, *, socket=None, args=(), env=None, **config)``: ``socket``
    (a path; default ``$AUTH_SIDECAR_SOCK``; ``False``: always a process) connects to the
    agent there, after checking the socket is the user's own (:class:`UntrustedSocketError`
    otherwise); with the socket only from the environment and no agent answering, a process
    is started as without one. The process: ``binary`` or ``$AUTH_SIDECAR_BIN`` or
    ``auth-sidecar`` on PATH; ``args``, ``env``, ``cwd``, ``stderr`` apply to it only.
    Configuration keys are keyword
    arguments, snake_case or camelCase (``client_id``, ``authority``, ``known_authorities``,
    ``cache`` (a path, ``"memory"`` or a dict), ``graph_endpoint``, ``browser``,
    ``http_timeout_seconds``, ``interactive_timeout_seconds``, ...);
    ``profile="work"`` chooses a profile of the configuration file (its ``"profiles"``; the file
    the process or the agent read), the other keys layered over it;
    ``initialize`` is sent at start when any is given (or ``initialize=True``).

    ``on_device_code(DeviceCode)`` is called for each ``deviceCode`` notification (unless the
    acquire_token call has its own); ``on_open_url(url)`` answers the server's ``openUrl``
    requests (giving it makes ``browser`` default to ``"client"``): return normally to
    report success, return False or raise to refuse. ``on_paste_sign_in(url)`` answers
    ``pasteSignIn`` (``acquire_token(flow="paste")``): show the URL, return the address the
    user's browser ended on (or its code) as pasted; return None or raise to give up (the
    sign-in then fails with UserCanceledError). Callbacks run on their own threads.

    ``timeout`` (seconds, default None = none) applies to every call that gives none; a
    call that times out is cancelled with ``$/cancelRequest`` and raises
    :class:`RequestTimeoutError`. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, binary: Optional[str] = None, *, socket: c.SocketOption = None, args=(),
                 env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, initialize: Optional[bool] = None,
                 on_device_code: Optional[DeviceCodeCallback] = None,
                 on_open_url: Optional[OpenUrlCallback] = None,
                 on_paste_sign_in: Optional[PasteSignInCallback] = None,
                 on_notification: Optional[Callable[[str, Any], Any]] = None,
                 timeout: Optional[float] = None, start_timeout: float = 15.0, shutdown_timeout: float = 5.0,
                 stderr=None, **config: Any):
        self.on_device_code = on_device_code
        self.on_open_url = on_open_url
        self.on_paste_sign_in = on_paste_sign_in
        self.on_notification = on_notification
        self.timeout = timeout
        self.shutdown_timeout = shutdown_timeout
        self.server_info: Optional[ServerInfo] = None
        self._ids = itertools.count(1)
        self._pending: Dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._dead: Optional[SidecarExitedError] = None
        self._closed = False
        if on_open_url is not None and "browser" not in config:
            config["browser"] = "client"
        self._env = env
        self._transport = open_transport(binary, socket, args, env, cwd, stderr)
        #: the binary of the process, or the agent's socket (the other is None)
        self.binary, self.socket = self._transport.binary, self._transport.socket
        self._reader = threading.Thread(target=self._read_incoming, name="auth-sidecar-reader", daemon=True)
        self._reader.start()
        if initialize or (initialize is None and config):
            try:
                self.initialize(timeout=start_timeout, **config)
            except BaseException:
                self.close(graceful=False)
                raise

    # ---- lifecycle -----------------------------------------------------------------------

    @property
    def pid(self) -> Optional[int]:
        """The process id; None for an agent connection."""
        return self._transport.pid

    @property
    def returncode(self) -> Optional[int]:
        """The exit code once the process has exited; None while it runs, and for an agent connection."""
        return self._transport.returncode

    @property
    def stderr_tail(self) -> str:
        """The end of the process's stderr; empty for an agent connection."""
        return self._transport.stderr_tail

    def __enter__(self) -> "SidecarClient":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def initialize(self, *, timeout: Optional[float] = None, **config: Any) -> ServerInfo:
        """Send ``initialize`` with these configuration keys (done by the constructor when given)."""
        self.server_info = self._call("initialize", c.config_params(config), timeout, None, c.DECODERS["initialize"])
        return self.server_info

    def close(self, graceful: bool = True) -> Optional[int]:
        """Cancel what is in flight, ``shutdown`` + ``exit``, wait; kill after
        ``shutdown_timeout``. Idempotent. Returns the exit code (None for an agent
        connection: the connection is closed, the agent keeps running)."""
        if self._closed:
            return self._transport.returncode
        self._closed = True
        if graceful and self._dead is None and self._transport.returncode is None:
            with self._lock:
                ids = list(self._pending)
            for rid in ids:
                self._try_send(c.notification_message("$/cancelRequest", {"id": rid}))
            try:
                self._call("shutdown", None, self.shutdown_timeout, None, None)
                self._try_send(c.notification_message("exit"))
            except SidecarError:
                pass
        self._transport.end_output()
        self._transport.wait(self.shutdown_timeout if graceful else 0.5)
        self._reader.join(5)
        self._transport.release()
        return self._transport.returncode

    def kill(self) -> None:
        """Kill the process (or drop the agent connection) at once: pending calls raise
        SidecarExitedError."""
        self._transport.kill()

    # ---- raw JSON-RPC --------------------------------------------------------------------

    def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None,
             cancel: Optional[CancelToken] = None) -> Any:
        """Send any request; return its ``result`` as parsed JSON, or raise its error."""
        return self._call(method, params, timeout, cancel, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self._send(c.notification_message(method, params))

    # ---- methods -------------------------------------------------------------------------

    def ping(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self._call("ping", {}, timeout, None, None)

    def get_device_information(self, *, timeout: Optional[float] = None) -> DeviceInformation:
        return self._call("getDeviceInformation", {}, timeout, None, c.DECODERS["getDeviceInformation"])

    def get_current_account(self, *, timeout: Optional[float] = None) -> CurrentAccount:
        return self._call("getCurrentAccount", {}, timeout, None, c.DECODERS["getCurrentAccount"])

    def get_accounts(self, username: Optional[str] = None, *, timeout: Optional[float] = None) -> List[Account]:
        return self._call("getAccounts", c.drop_unset(username=username), timeout, None, c.DECODERS["getAccounts"])

    def get_cache_summary(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """What the cache holds for this client, without a secret (``accessTokens``: account,
        tenant, scopes, expiry; ``refreshTokenAccounts``; ``lastRefreshError``), as the protocol's
        JSON."""
        return self._call("getCacheSummary", {}, timeout, None, None)

    def set_current_account(self, account: AccountLike, *, timeout: Optional[float] = None) -> CurrentAccount:
        """Make a cached account the current one for every process sharing the cache (MSAL.js's
        ``setActiveAccount``); returns it (``account``) and the one current before
        (``previous_account``)."""
        return self._call("setCurrentAccount", c.set_current_account_params(account), timeout, None,
                          c.DECODERS["setCurrentAccount"])

    def acquire_token(self, scopes=None, *, prompt_type: Optional[str] = None, login_hint: Optional[str] = None,
                      domain_hint: Optional[str] = None, account: Optional[AccountLike] = None,
                      authority: Optional[str] = None, claims: Optional[str] = None,
                      extra_scopes_to_consent=None, extra_query_parameters: Optional[Dict[str, str]] = None,
                      flow: Optional[str] = None, correlation_id: Optional[str] = None,
                      ssh_public_key: Optional[str] = None,
                      proof_of_possession: Optional[Dict[str, str]] = None,
                      on_device_code: Optional[DeviceCodeCallback] = None,
                      timeout: Optional[float] = None, cancel: Optional[CancelToken] = None) -> TokenResult:
        """Interactive sign-in: ``flow="browser"`` (default), ``"deviceCode"`` (then
        ``on_device_code``, or the client's, gets the code to show) or ``"paste"`` (the
        paste-back sign-in: the client's ``on_paste_sign_in`` shows the URL and returns the
        address pasted back)."""
        params = c.acquire_token_params(scopes, prompt_type, login_hint, domain_hint, account, authority, claims,
                                        extra_scopes_to_consent, extra_query_parameters, flow, correlation_id,
                                        ssh_public_key, proof_of_possession)
        return self._call("acquireToken", params, timeout, cancel, c.DECODERS["acquireToken"], on_device_code)

    def acquire_token_silent(self, scopes=None, *, account: Optional[AccountLike] = None,
                             authority: Optional[str] = None, force_refresh: Optional[bool] = None,
                             claims: Optional[str] = None, correlation_id: Optional[str] = None,
                             ssh_public_key: Optional[str] = None,
                             proof_of_possession: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
                             cancel: Optional[CancelToken] = None) -> TokenResult:
        """A token from the cache or by refresh; raises InteractionRequiredError when the user is needed.
        ``ssh_public_key`` (an OpenSSH RSA public key line): an SSH certificate for it instead
        (``token_type`` ``"ssh-cert"``, see ``TokenResult.ssh_certificate_line``)."""
        params = c.acquire_token_silent_params(scopes, account, authority, force_refresh, claims, correlation_id,
                                               ssh_public_key, proof_of_possession)
        return self._call("acquireTokenSilent", params, timeout, cancel, c.DECODERS["acquireTokenSilent"])

    def signout(self, account: Optional[AccountLike] = None, *, signout_from_browser: Optional[bool] = None,
                timeout: Optional[float] = None) -> SignoutResult:
        return self._call("signout", c.signout_params(account, signout_from_browser), timeout, None,
                          c.DECODERS["signout"])

    def call_graph(self, path: Optional[str] = None, *, method: Optional[str] = None,
                   api_version: Optional[str] = None, query: Optional[Dict[str, str]] = None,
                   headers: Optional[Dict[str, str]] = None, body: Any = c.UNSET,
                   account: Optional[AccountLike] = None, scopes=None, all_pages: Optional[bool] = None,
                   max_pages: Optional[int] = None, timeout_seconds: Optional[int] = None,
                   correlation_id: Optional[str] = None,
                   timeout: Optional[float] = None, cancel: Optional[CancelToken] = None) -> GraphResponse:
        """A Microsoft Graph call with the account's token (``path`` default ``/me``)."""
        params = c.call_graph_params(path, method, api_version, query, headers, body, account, scopes,
                                     all_pages, max_pages, timeout_seconds, correlation_id)
        return self._call("callGraph", params, timeout, cancel, c.DECODERS["callGraph"])

    def sign_http_request(self, method: Optional[str] = None, url: Optional[str] = None, *, nonce: Optional[str] = None,
                          client_claims: Optional[str] = None, scopes=None, account: Optional[AccountLike] = None,
                          correlation_id: Optional[str] = None, timeout: Optional[float] = None,
                          cancel: Optional[CancelToken] = None, resource_id: Optional[str] = None) -> SignedHttpRequest:
        """A fresh signed HTTP request (PoP) for ``method`` ``url`` (or ``resource_id``, kubelogin's
        Azure Arc shape: the SHR's ``u`` for every request) with the cached PoP token for
        ``scopes``; send ``result.authorization_header`` as the request's ``Authorization``."""
        params = c.sign_http_request_params(method, url, nonce, client_claims, scopes, account, correlation_id, resource_id)
        return self._call("signHttpRequest", params, timeout, cancel, c.DECODERS["signHttpRequest"])

    # ---- engine --------------------------------------------------------------------------

    def _call(self, method: str, params: Any, timeout: Optional[float], cancel: Optional[CancelToken],
              decode: Optional[c.Decoder], on_device_code: Optional[DeviceCodeCallback] = None) -> Any:
        if timeout is None:
            timeout = self.timeout
        rid = next(self._ids)
        pending = _Pending(on_device_code)
        with self._lock:
            if self._dead is not None:
                raise self._dead_error("before %s was sent" % method)
            self._pending[rid] = pending
        unregister = lambda: None  # noqa: E731
        try:
            self._send(c.request_message(rid, method, params))

            def on_cancel() -> None:
                pending.cancel_requested = True
                pending.wake.set()

            if cancel is not None:
                unregister = cancel._register(on_cancel)
            deadline = None if timeout is None else time.monotonic() + timeout
            cancelled_why: Optional[str] = None
            grace_deadline = 0.0
            while True:
                if cancelled_why is not None:
                    wait: Optional[float] = grace_deadline - time.monotonic()
                elif deadline is not None:
                    wait = deadline - time.monotonic()
                else:
                    wait = None
                if wait is None or wait > 0:
                    pending.wake.wait(wait)
                pending.wake.clear()
                if pending.reply is not None:
                    break
                if self._dead is not None:
                    raise self._dead_error("while %s was pending" % method)
                now = time.monotonic()
                if cancelled_why is None:
                    if pending.cancel_requested:
                        cancelled_why = "cancel"
                    elif deadline is not None and now >= deadline:
                        cancelled_why = "timeout"
                    if cancelled_why is not None:
                        self._try_send(c.notification_message("$/cancelRequest", {"id": rid}))
                        grace_deadline = now + c.CANCEL_GRACE
                elif now >= grace_deadline:
                    break
        finally:
            unregister()
            with self._lock:
                self._pending.pop(rid, None)
        if cancelled_why is not None:
            return self._raise_cancelled(method, cancelled_why, timeout, pending.reply)
        ok, value = c.outcome(pending.reply, self._env)
        if not ok:
            raise value
        return decode(value) if decode is not None else value

    @staticmethod
    def _raise_cancelled(method: str, why: str, timeout: Optional[float], reply: Optional[Dict[str, Any]]):
        error = reply.get("error") if reply else None
        data = error.get("data") if isinstance(error, dict) and error.get("code") == -32800 else None
        if why == "timeout":
            raise RequestTimeoutError("%s timed out after %ss and was cancelled" % (method, timeout),
                                      data=data or {"name": "requestCancelled"}, raw=error if data else None)
        raise RequestCancelledError(error["message"] if data else "%s was cancelled" % method,
                                    data=data or {"name": "requestCancelled"}, raw=error if data else None)

    def _send(self, data: bytes) -> None:
        with self._write_lock:
            if self._dead is not None:
                raise self._dead_error("before a message could be sent")
            try:
                self._transport.send(data)
                return
            except (OSError, ValueError):
                pass
        # the pipe is broken: let the reader see EOF so the error names the exit code and stderr
        self._reader.join(3)
        raise self._dead_error("(its input is closed)")

    def _try_send(self, data: bytes) -> None:
        try:
            self._send(data)
        except SidecarError:
            pass

    def _dead_error(self, what: str) -> SidecarExitedError:
        return self._transport.ended(what)

    def _read_incoming(self) -> None:
        try:
            for line in self._transport.incoming:
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue  # stdout must carry only protocol messages; ignore junk
                for m in (msg if isinstance(msg, list) else [msg]):
                    self._dispatch(m)
        except (OSError, ValueError):
            pass
        # EOF: the process is gone (or going), or the agent closed the connection.
        self._transport.input_ended()
        error = self._transport.ended("")
        with self._lock:
            self._dead = error
            pending = list(self._pending.values())
        for p in pending:
            p.wake.set()

    def _dispatch(self, msg: Any) -> None:
        kind = c.classify(msg)
        if kind == "response":
            with self._lock:
                pending = self._pending.get(msg.get("id"))
            if pending is not None:
                pending.reply = msg
                pending.wake.set()
        elif kind == "notification":
            self._on_notification(msg["method"], msg.get("params"))
        elif kind == "request":
            threading.Thread(target=self._answer_server_request, args=(msg,), daemon=True).start()

    def _on_notification(self, method: str, params: Any) -> None:
        callback: Optional[Callable[..., Any]] = None
        args: tuple = ()
        if method == "deviceCode" and isinstance(params, dict):
            with self._lock:
                pending = self._pending.get(params.get("requestId"))
            callback = (pending.on_device_code if pending and pending.on_device_code else self.on_device_code)
            args = (DeviceCode.from_json(params),)
        if callback is None and self.on_notification is not None:
            callback, args = self.on_notification, (method, params)
        if callback is not None:
            threading.Thread(target=_run_quietly, args=(callback, args), daemon=True).start()

    def _answer_server_request(self, msg: Dict[str, Any]) -> None:
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if method == "openUrl":
            if self.on_open_url is None:
                reply = {"error": _client_error(BrowserUnavailableError, "the client has no on_open_url handler")}
            else:
                try:
                    ok = self.on_open_url(params.get("url"))
                    reply = ({"result": {}} if ok is not False else
                             {"error": _client_error(BrowserUnavailableError, "the client could not open the URL")})
                except Exception as err:  # noqa: BLE001 - reported to the server
                    reply = {"error": _client_error(BrowserUnavailableError, "on_open_url failed: %s" % err)}
        elif method == "pasteSignIn" and self.on_paste_sign_in is not None:
            reply = c.paste_reply(self.on_paste_sign_in, params)
        else:
            reply = {"error": {"code": -32601, "message": "Method not found", "data": {"name": "methodNotFound"}}}
        self._try_send(c.encode(dict({"jsonrpc": "2.0", "id": rid}, **reply)))


def _client_error(cls, message: str) -> Dict[str, Any]:
    return {"code": cls.code, "message": message, "data": {"name": cls.error_name}}


def _run_quietly(callback: Callable[..., Any], args: tuple) -> None:
    try:
        callback(*args)
    except Exception:  # noqa: BLE001 - a failing callback must not kill the reader
        import traceback
        traceback.print_exc()
