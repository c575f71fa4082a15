"""What the synchronous and the asyncio clients share: finding the binary or the agent's
socket, configuration keys, params of each method, decoding replies, the stderr tail."""
from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import warnings
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Union

from .errors import (AgentUnavailableError, SidecarExitedError, SidecarNotFoundError, UntrustedSocketError,
                     error_from_object)
from .types import (Account, CurrentAccount, DeviceInformation, GraphResponse, ServerInfo, SignedHttpRequest,
                    SignoutResult, TokenResult, account_ref)

ENV_BINARY = "AUTH_SIDECAR_BIN"
ENV_SOCKET = "AUTH_SIDECAR_SOCK"
BINARY_NAME = "auth-sidecar"
CANCEL_GRACE = 3.0       # seconds to wait for the server's -32800 after $/cancelRequest
STDERR_TAIL_BYTES = 8192
MAX_LINE = 64 * 1024 * 1024


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"

UNSET: Any = _Unset()

def packaged_binary() -> Optional[str]:
    """The binary installed with this package, when it came from the auth_sidecar wheel (which
    puts it in the environment's scripts directory, e.g. <venv>/bin): found through the
    installed distribution's file list, and only if that distribution is this very package."""
    try:
        from importlib import metadata
        dist = metadata.distribution("auth_sidecar")
        if os.path.realpath(str(dist.locate_file("auth_sidecar/_common.py"))) != os.path.realpath(__file__):
            return None
        files = dist.files or []
    except Exception:  # no such distribution (PYTHONPATH, a source tree), or unreadable metadata
        return None
    for entry in files:
        if entry.name == BINARY_NAME:
            path = os.path.normpath(str(dist.locate_file(entry)))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None

def find_binary(binary: Optional[str] = None) -> str:
    """The binary: the argument, else $AUTH_SIDECAR_BIN, else the one installed with this
    package (the wheel's), else `auth-sidecar` on PATH."""
    if binary is not None:
        source, candidate = "the binary argument", os.fspath(binary)
    elif os.environ.get(ENV_BINARY):
        source, candidate = "$" + ENV_BINARY, os.environ[ENV_BINARY]
    else:
        found = packaged_binary() or shutil.which(BINARY_NAME)
        if not found:
            raise SidecarNotFoundError(
                "auth-sidecar binary not found: pass binary=..., set $%s, or put %r on PATH "
                "(scripts/install.sh installs it in ~/.local/bin; the auth_sidecar wheel and the "
                "auth-sidecar npm package bring their own)" % (ENV_BINARY, BINARY_NAME))
        return found
    if os.sep not in candidate and not os.path.exists(candidate):
        found = shutil.which(candidate)
        if found:
            return found
    if not os.path.isfile(candidate):
        raise SidecarNotFoundError("auth-sidecar binary not found at %r (from %s)" % (candidate, source))
    if not os.access(candidate, os.X_OK):
        raise SidecarNotFoundError("auth-sidecar binary %r (from %s) is not executable" % (candidate, source))
    return candidate

SocketOption = Union[str, "os.PathLike[str]", Literal[False], None]

def agent_socket(socket: SocketOption) -> Tuple[Optional[str], bool]:
    """(path, explicit): the ``socket`` argument, else $AUTH_SIDECAR_SOCK when ``socket`` is
    None; (None, False) to start a process (``socket=False``, or neither given)."""
    if socket is False:
        return None, False
    if socket is not None:
        return os.fspath(socket), True
    return os.environ.get(ENV_SOCKET) or None, False

def check_agent_socket(path: str) -> str:
    """Refuse a socket that is not the user's own (as the agent itself does): its directory
    the user's, a directory (not a symbolic link) no one else may enter; the path a socket
    of the user's, not a symbolic link. Returns the absolute path."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    uid = os.getuid()
    try:
        info = os.lstat(directory)
    except OSError as err:
        raise AgentUnavailableError("no auth-sidecar agent at %s: %s" % (path, err.strerror)) from err
    if not stat.S_ISDIR(info.st_mode):
        raise UntrustedSocketError("refusing the agent socket %s: %s is not a directory (a symbolic link?)"
                                   % (path, directory))
    if info.st_uid != uid:
        raise UntrustedSocketError("refusing the agent socket %s: its directory %s belongs to uid %d, not to you"
                                   % (path, directory, info.st_uid))
    if info.st_mode & 0o077:
        raise UntrustedSocketError("refusing the agent socket %s: other users may enter its directory %s "
                                   "(mode %03o; the agent's directory is 0700)"
                                   % (path, directory, stat.S_IMODE(info.st_mode)))
    try:
        info = os.lstat(path)
    except OSError as err:
        raise AgentUnavailableError("no auth-sidecar agent at %s: %s" % (path, err.strerror)) from err
    if not stat.S_ISSOCK(info.st_mode):
        raise UntrustedSocketError("refusing the agent socket %s: it is not a socket" % path)
    if info.st_uid != uid:
        raise UntrustedSocketError("refusing the agent socket %s: it belongs to uid %d, not to you"
                                   % (path, info.st_uid))
    return path

def socket_fallback(err: Exception, explicit: bool) -> None:
    """The one rule for an agent socket that cannot be used (every client and mode alike,
    README "The agent"): named by the caller, the error is raised; only found (from
    $AUTH_SIDECAR_SOCK), a process is started instead, as without an agent, and a socket
    that is not the user's own is said once (a RuntimeWarning) and never connected to."""
    if explicit:
        raise err
    if isinstance(err, UntrustedSocketError):
        warnings.warn("auth-sidecar: ignoring the agent socket: %s; running without the agent" % err,
                      RuntimeWarning, stacklevel=4)


def agent_unavailable(path: str, err: OSError) -> AgentUnavailableError:
    return AgentUnavailableError("no auth-sidecar agent answers at %s: %s" % (path, err.strerror or err))

def agent_closed_error(path: str, what: str) -> SidecarExitedError:
    return SidecarExitedError(("the auth-sidecar agent at %s closed the connection %s" % (path, what)).rstrip())

def camel(name: str) -> str:
    """client_id -> clientId (camelCase names pass unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)

def config_params(config: Dict[str, Any]) -> Dict[str, Any]:
    """Keyword arguments (snake_case or camelCase) -> initialize params.

    ``cache``: a path (str / PathLike) -> ``{"path": ...}``; ``"memory"`` -> ``{"persistence": "memory"}``;
    a dict is passed as is. None values are left out.
    """
    params: Dict[str, Any] = {}
    for key, value in config.items():
        if value is None:
            continue
        key = camel(key)
        if key == "cache" and not isinstance(value, dict):
            value = {"persistence": "memory"} if value == "memory" else {"path": os.fspath(value)}
        elif key in ("scopes", "knownAuthorities", "clientCapabilities") and isinstance(value, str):
            value = [value]
        params[key] = value
    return params

def drop_unset(**members: Any) -> Dict[str, Any]:
    return {camel(k): v for k, v in members.items() if v is not None and v is not UNSET}

def scope_list(scopes: Any) -> Optional[List[str]]:
    if scopes is None:
        return None
    if isinstance(scopes, str):
        return scopes.split()
    return list(scopes)

# ---- per-method params and result decoders ---------------------------------------------

Decoder = Callable[[Any], Any]

def acquire_token_params(scopes=None, prompt_type=None, login_hint=None, domain_hint=None, account=None,
                         authority=None, claims=None, extra_scopes_to_consent=None,
                         extra_query_parameters=None, flow=None, correlation_id=None,
                         ssh_public_key=None, proof_of_possession=None) -> Dict[str, Any]:
    return drop_unset(scopes=scope_list(scopes), prompt_type=prompt_type, login_hint=login_hint,
                      domain_hint=domain_hint, account=account_ref(account), authority=authority, claims=claims,
                      extra_scopes_to_consent=scope_list(extra_scopes_to_consent),
                      extra_query_parameters=extra_query_parameters, flow=flow, correlation_id=correlation_id,
                      ssh_certificate=ssh_certificate(ssh_public_key),
                      proof_of_possession=pop_request(proof_of_possession))

def paste_reply(callback: Callable[[str], Any], params: Dict[str, Any]) -> Dict[str, Any]:
    """The reply to ``pasteSignIn``: ``{"redirectedTo": what the callback returned}``, or an
    error when it returned nothing or raised (the sign-in then fails with userCanceled)."""
    try:
        pasted = callback(params.get("url"))
    except Exception as err:  # noqa: BLE001 - reported to the server
        return {"error": {"code": -32000, "message": "on_paste_sign_in failed: %s" % err,
                          "data": {"name": "noPastedAddress"}}}
    if not isinstance(pasted, str) or not pasted.strip():
        return {"error": {"code": -32000, "message": "no address was pasted", "data": {"name": "noPastedAddress"}}}
    return {"result": {"redirectedTo": pasted}}


def acquire_token_silent_params(scopes=None, account=None, authority=None, force_refresh=None,
                                claims=None, correlation_id=None, ssh_public_key=None,
                                proof_of_possession=None) -> Dict[str, Any]:
    return drop_unset(scopes=scope_list(scopes), account=account_ref(account), authority=authority,
                      force_refresh=force_refresh, claims=claims, correlation_id=correlation_id,
                      ssh_certificate=ssh_certificate(ssh_public_key),
                      proof_of_possession=pop_request(proof_of_possession))

def pop_request(pop) -> Optional[Dict[str, str]]:
    """``proofOfPossession`` from a dict with ``method`` and ``url`` (or ``resource_id``, kubelogin's
    Azure Arc shape) and optionally ``nonce``, ``client_claims`` (snake_case or camelCase), or None."""
    return None if pop is None else drop_unset(**dict(pop))

def sign_http_request_params(method, url, nonce=None, client_claims=None, scopes=None, account=None,
                             correlation_id=None, resource_id=None) -> Dict[str, Any]:
    if resource_id is None and (not method or not url):
        raise TypeError("sign_http_request needs the request's method and url, or a resource_id")
    if resource_id is not None and (method or url):
        raise TypeError("sign_http_request takes a resource_id without method and url")
    return drop_unset(method=method, url=url, resource_id=resource_id, nonce=nonce, client_claims=client_claims,
                      scopes=scope_list(scopes), account=account_ref(account), correlation_id=correlation_id)

def ssh_certificate(public_key) -> Optional[Dict[str, str]]:
    """``sshCertificate`` for an OpenSSH RSA public key line (``ssh-rsa AAAA...``), or None."""
    return None if public_key is None else {"publicKey": public_key}

def set_current_account_params(account) -> Dict[str, Any]:
    if account is None:
        raise TypeError("set_current_account needs an account (an Account, an AccountRef or a username)")
    return {"account": account_ref(account)}

def signout_params(account=None, signout_from_browser=None) -> Dict[str, Any]:
    return drop_unset(account=account_ref(account), signout_from_browser=signout_from_browser)

def call_graph_params(path=None, method=None, api_version=None, query=None, headers=None, body=UNSET,
                      account=None, scopes=None, all_pages=None, max_pages=None,
                      timeout_seconds=None, correlation_id=None) -> Dict[str, Any]:
    params = drop_unset(path=path, method=method.upper() if isinstance(method, str) else method,
                        api_version=api_version, query=query, headers=headers, account=account_ref(account),
                        scopes=scope_list(scopes), all_pages=all_pages, max_pages=max_pages,
                        timeout_seconds=timeout_seconds, correlation_id=correlation_id)
    if body is not UNSET:
        params["body"] = body  # None is sent as JSON null
    return params

def decode_accounts(result: Any) -> List[Account]:
    return [Account.from_json(a) for a in result.get("accounts", [])]

DECODERS: Dict[str, Decoder] = {
    "initialize": ServerInfo.from_json,
    "getDeviceInformation": DeviceInformation.from_json,
    "getCurrentAccount": CurrentAccount.from_json,
    "setCurrentAccount": CurrentAccount.from_json,
    "getAccounts": decode_accounts,
    "acquireToken": TokenResult.from_json,
    "acquireTokenSilent": TokenResult.from_json,
    "signout": SignoutResult.from_json,
    "callGraph": GraphResponse.from_json,
    "signHttpRequest": SignedHttpRequest.from_json,
}

def request_message(rid: Any, method: str, params: Any) -> bytes:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return encode(msg)

def notification_message(method: str, params: Any = None) -> bytes:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return encode(msg)

def encode(msg: Any) -> bytes:
    # ensure_ascii keeps every message one line whatever the strings hold
    return json.dumps(msg, separators=(",", ":")).encode("ascii") + b"\n"

def classify(msg: Any) -> str:
    """'response' | 'request' | 'notification' | 'invalid'."""
    if not isinstance(msg, dict):
        return "invalid"
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    if "id" in msg and ("result" in msg or "error" in msg):
        return "response"
    return "invalid"

def outcome(reply: Dict[str, Any], environ: Optional[Dict[str, str]] = None) -> Tuple[bool, Any]:
    """(True, result) or (False, exception); ``environ``: the process's environment, if not ours."""
    if "error" in reply:
        return False, error_from_object(reply["error"], environ)
    return True, reply.get("result")

class StderrTail:
    """The last STDERR_TAIL_BYTES of the process's stderr; optionally copied to a stream."""

    def __init__(self, echo=None):
        self._buf = bytearray()
        self._lock = threading.Lock()
        self.echo = echo

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self._buf += chunk
            if len(self._buf) > STDERR_TAIL_BYTES:
                del self._buf[:len(self._buf) - STDERR_TAIL_BYTES]
        if self.echo is not None:
            try:
                self.echo.write(chunk.decode("utf-8", "replace"))
                self.echo.flush()
            except Exception:  # noqa: BLE001 - never let logging break the client
                pass

    def text(self) -> str:
        with self._lock:
            return bytes(self._buf).decode("utf-8", "replace")

def describe_exit(returncode: Optional[int]) -> str:
    if returncode is None:
        return "closed its output (still running)"
    if returncode < 0:
        return "was killed by signal %d" % -returncode
    return "exited with code %d" % returncode

def exited_error(what: str, returncode: Optional[int], tail: str) -> SidecarExitedError:
    return SidecarExitedError("auth-sidecar %s %s" % (describe_exit(returncode), what), tail, returncode)
