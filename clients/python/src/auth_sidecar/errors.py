"""Exceptions: one class per auth-sidecar error code (protocol/errors.md).

Every error the sidecar answers becomes an instance of a :class:`SidecarError` subclass
chosen by the JSON-RPC ``code``; ``.code``, ``.message`` and ``.data`` (always with
``name``) carry the error object. Failures of the process itself (binary missing, process
died, an agent's socket refused or gone) are :class:`SidecarProcessError` subclasses, with
``code`` None.
"""
from __future__ import annotations

import builtins
import os
from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "SidecarError", "JsonRpcError", "MsalError", "PlatformError",
    "ParseError", "InvalidRequestError", "MethodNotFoundError", "InvalidParamsError",
    "InternalRpcError", "ServerNotInitializedError", "RequestCancelledError", "RequestTimeoutError",
    "InternalError", "WorkplaceJoinRequiredError", "InteractionRequiredError",
    "ServerDeclinedScopesError", "ServerProtectionPoliciesRequiredError", "UserCanceledError",
    "ServerError",
    "NetworkError", "ServiceTimeoutError", "TlsError", "MalformedResponseError",
    "CacheUnavailableError", "BrowserUnavailableError", "InteractiveInProgressError",
    "AuthorityNotTrustedError", "InsecureAuthorityError", "InvalidConfigurationError",
    "AccountNotFoundError", "AmbiguousAccountError", "PasswordResetRequiredError",
    "ForwardRefusedError", "BrokerUnavailableError", "TokenKindNotServedError", "PastedAddressRefusedError",
    "DeviceCodeBlockedError",
    "SidecarProcessError", "SidecarNotFoundError", "SidecarExitedError", "AgentUnavailableError",
    "UntrustedSocketError",
    "ERROR_CLASSES", "error_from_object", "not_configured_message",
]


class SidecarError(Exception):
    """Base of every error of this package.

    ``code``: the JSON-RPC error code (None for process failures); ``message``: the
    server's message; ``data``: the ``error.data`` object (``{"name": ...}`` at least);
    ``raw``: the whole JSON-RPC error object as received.
    """

    code: Optional[int] = None
    error_name: str = "sidecarError"

    def __init__(self, message: str = "", code: Optional[int] = None,
                 data: Optional[Dict[str, Any]] = None, raw: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.data: Dict[str, Any] = dict(data) if isinstance(data, dict) else {"name": self.error_name}
        self.raw = raw if raw is not None else {"code": self.code, "message": message, "data": self.data}

    # Convenience views of error.data (None when absent).
    @property
    def name(self) -> Optional[str]:
        return self.data.get("name")

    @property
    def suberror(self) -> Optional[str]:
        return self.data.get("suberror")

    @property
    def claims(self) -> Optional[str]:
        return self.data.get("claims")

    @property
    def oauth_error(self) -> Optional[str]:
        return self.data.get("oauthError")

    @property
    def correlation_id(self) -> Optional[str]:
        return self.data.get("correlationId")

    @property
    def retry_after(self) -> Optional[int]:
        return self.data.get("retryAfter")

    @property
    def member(self) -> Optional[str]:
        return self.data.get("member")

    def __str__(self) -> str:
        if self.code is None:
            return self.message
        return "[%s %s] %s" % (self.code, self.data.get("name", self.error_name), self.message)

    def __repr__(self) -> str:
        return "%s(code=%r, message=%r, data=%r)" % (type(self).__name__, self.code, self.message, self.data)


class JsonRpcError(SidecarError):
    """A JSON-RPC / LSP protocol fault (-32700..-32600, -32002, -32800)."""


class MsalError(SidecarError):
    """An authentication failure with one of MSAL's public codes (-50000..-50006)."""


class PlatformError(SidecarError):
    """A failure MSAL leaves to the platform (-51001..-51999)."""


def _cls(name: str, base: type, code: int, error_name: str, doc: str, extra: tuple = ()) -> type:
    return type(name, (base,) + extra, {"code": code, "error_name": error_name, "__doc__": doc,
                                        "__module__": __name__})


ParseError = _cls("ParseError", JsonRpcError, -32700, "parseError", "-32700: the message was not valid JSON.")
InvalidRequestError = _cls("InvalidRequestError", JsonRpcError, -32600, "invalidRequest",
                           "-32600: not a valid request (also messageTooLarge, batchTooLarge, objectTooLarge, messageTooComplex, alreadyInitialized, shuttingDown, duplicateRequestId).")
MethodNotFoundError = _cls("MethodNotFoundError", JsonRpcError, -32601, "methodNotFound", "-32601: unknown method.")
InvalidParamsError = _cls("InvalidParamsError", JsonRpcError, -32602, "invalidParams",
                          "-32602: a params member is missing, wrong or unknown (``.member`` names it).")
InternalRpcError = _cls("InternalRpcError", JsonRpcError, -32603, "internalError", "-32603: a fault in the sidecar itself.")
ServerNotInitializedError = _cls("ServerNotInitializedError", JsonRpcError, -32002, "serverNotInitialized",
                                 "-32002: a method was called before initialize.")
RequestCancelledError = _cls("RequestCancelledError", JsonRpcError, -32800, "requestCancelled",
                             "-32800: the request was cancelled ($/cancelRequest, a timeout of this client, SIGTERM).")
RequestTimeoutError = _cls("RequestTimeoutError", RequestCancelledError, -32800, "requestCancelled",
                           "The client's timeout ran out: the request was cancelled with $/cancelRequest. "
                           "Also a builtins.TimeoutError.", (builtins.TimeoutError,))

InternalError = _cls("InternalError", MsalError, -50000, "internal", "-50000: an authentication failure without a better code.")
WorkplaceJoinRequiredError = _cls("WorkplaceJoinRequiredError", MsalError, -50001, "workplaceJoinRequired",
                                  "-50001: the resource requires a registered device.")
InteractionRequiredError = _cls("InteractionRequiredError", MsalError, -50002, "interactionRequired",
                                "-50002: silent acquisition needs the user: call acquire_token (pass ``.claims`` if set).")
ServerDeclinedScopesError = _cls("ServerDeclinedScopesError", MsalError, -50003, "serverDeclinedScopes",
                                 "-50003: fewer scopes granted than requested (data.grantedScopes, data.declinedScopes).")
ServerProtectionPoliciesRequiredError = _cls("ServerProtectionPoliciesRequiredError", MsalError, -50004,
                                             "serverProtectionPoliciesRequired", "-50004: an app protection policy is required.")
UserCanceledError = _cls("UserCanceledError", MsalError, -50005, "userCanceled", "-50005: the user ended the sign-in.")
ServerError = _cls("ServerError", MsalError, -50006, "serverError", "-50006: the identity service failed.")

NetworkError = _cls("NetworkError", PlatformError, -51001, "networkError", "-51001: the service could not be reached.")
ServiceTimeoutError = _cls("ServiceTimeoutError", PlatformError, -51002, "timeout",
                           "-51002: a call to the service timed out, or the device code expired.", (builtins.TimeoutError,))
TlsError = _cls("TlsError", PlatformError, -51003, "tlsError", "-51003: certificate verification or TLS handshake failed.")
MalformedResponseError = _cls("MalformedResponseError", PlatformError, -51004, "malformedResponse",
                              "-51004: the service answered something unexpected.")
CacheUnavailableError = _cls("CacheUnavailableError", PlatformError, -51005, "cacheUnavailable",
                             "-51005: the token cache file cannot be used.")
BrowserUnavailableError = _cls("BrowserUnavailableError", PlatformError, -51006, "browserUnavailable",
                               "-51006: no browser could be opened (use flow='deviceCode').")
InteractiveInProgressError = _cls("InteractiveInProgressError", PlatformError, -51007, "interactiveInProgress",
                                  "-51007: another interactive sign-in is running.")
AuthorityNotTrustedError = _cls("AuthorityNotTrustedError", PlatformError, -51008, "authorityNotTrusted",
                                "-51008: the authority is not trusted (knownAuthorities).")
InsecureAuthorityError = _cls("InsecureAuthorityError", PlatformError, -51009, "insecureAuthority",
                              "-51009: the authority's metadata names an insecure endpoint.")
InvalidConfigurationError = _cls("InvalidConfigurationError", PlatformError, -51010, "invalidConfiguration",
                                 "-51010: the configuration is unusable (unknown client id, tenant).")
AccountNotFoundError = _cls("AccountNotFoundError", PlatformError, -51011, "accountNotFound",
                            "-51011: the account reference matches no cached account.")
AmbiguousAccountError = _cls("AmbiguousAccountError", PlatformError, -51012, "ambiguousAccount",
                             "-51012: a username matches several accounts; use homeAccountId.")
PasswordResetRequiredError = _cls("PasswordResetRequiredError", PlatformError, -51013, "passwordResetRequired",
                                  "-51013: B2C: the user chose 'Forgot your password?'; run the password-reset "
                                  "policy (acquire_token with its authority).")
ForwardRefusedError = _cls("ForwardRefusedError", PlatformError, -51014, "forwardRefused",
                           "-51014: the agent's forward socket refused the request under its policy "
                           "(``data['name']`` says which rule: forwardScopeRefused, forwardTokenRefused, ...).")
BrokerUnavailableError = _cls("BrokerUnavailableError", PlatformError, -51015, "brokerUnavailable",
                              "-51015: broker is \"required\" and the Linux identity broker cannot be called.")
TokenKindNotServedError = _cls("TokenKindNotServedError", PlatformError, -51016, "tokenKindNotServed",
                               "-51016: the backend (the broker, the app identity) does not issue the token kind "
                               "asked for, e.g. an SSH certificate (``data['backend']``, ``data['tokenKind']``).")
PastedAddressRefusedError = _cls("PastedAddressRefusedError", PlatformError, -51017, "pastedAddressRefused",
                                 "-51017: a paste-back sign-in's pasted address is not this sign-in's (``data['name']``: "
                                 "pastedAddressRefused, pastedStateMismatch, pastedCodeFromAnotherSignIn); nothing was cached.")
DeviceCodeBlockedError = _cls("DeviceCodeBlockedError", PlatformError, -51018, "deviceCodeBlocked",
                              "-51018: the tenant's Conditional Access refuses the device code flow; sign in with "
                              "flow=\"paste\" (or \"browser\").")


class SidecarProcessError(SidecarError):
    """The sidecar process could not be started or is gone. ``stderr_tail``: its last stderr output."""

    error_name = "sidecarProcess"

    def __init__(self, message: str, stderr_tail: str = "", returncode: Optional[int] = None):
        full = message
        if stderr_tail:
            full += "\n--- auth-sidecar stderr (tail) ---\n" + stderr_tail.rstrip()
        super().__init__(full)
        self.stderr_tail = stderr_tail
        self.returncode = returncode


class SidecarNotFoundError(SidecarProcessError, FileNotFoundError):
    """The auth-sidecar binary was not found or is not executable."""

    error_name = "sidecarNotFound"


class SidecarExitedError(SidecarProcessError, ConnectionError):
    """The process exited (or closed stdout) while requests were pending or a call was made."""

    error_name = "sidecarExited"


class AgentUnavailableError(SidecarProcessError, ConnectionError):
    """No agent answers at the socket (none there, or a dead agent's socket)."""

    error_name = "agentUnavailable"


class UntrustedSocketError(SidecarProcessError, PermissionError):
    """The socket is not the user's own (its directory or the socket belongs to someone
    else, others may enter the directory, or the path is not a socket): nothing was sent."""

    error_name = "untrustedSocket"


ERROR_CLASSES: Dict[int, Type[SidecarError]] = {
    c.code: c for c in [
        ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError, InternalRpcError,
        ServerNotInitializedError, RequestCancelledError,
        InternalError, WorkplaceJoinRequiredError, InteractionRequiredError, ServerDeclinedScopesError,
        ServerProtectionPoliciesRequiredError, UserCanceledError, ServerError,
        NetworkError, ServiceTimeoutError, TlsError, MalformedResponseError, CacheUnavailableError,
        BrowserUnavailableError, InteractiveInProgressError, AuthorityNotTrustedError,
        InsecureAuthorityError, InvalidConfigurationError, AccountNotFoundError, AmbiguousAccountError,
        PasswordResetRequiredError, ForwardRefusedError, BrokerUnavailableError, TokenKindNotServedError,
        PastedAddressRefusedError, DeviceCodeBlockedError,
    ]
}


def default_config_file(environ: Mapping[str, str]) -> str:
    """The configuration file the sidecar reads by default (Sources/Sidecar/UserPaths.swift):
    $AUTH_SIDECAR_CONFIG, else $XDG_CONFIG_HOME/auth-sidecar/config.json, else
    ~/.config/auth-sidecar/config.json (each only when an absolute path)."""
    if environ.get("AUTH_SIDECAR_CONFIG", "").startswith("/"):
        return environ["AUTH_SIDECAR_CONFIG"]
    if environ.get("XDG_CONFIG_HOME", "").startswith("/"):
        return environ["XDG_CONFIG_HOME"] + "/auth-sidecar/config.json"
    if environ.get("HOME", "").startswith("/"):
        return environ["HOME"] + "/.config/auth-sidecar/config.json"
    return "$XDG_CONFIG_HOME/auth-sidecar/config.json"


def not_configured_message(environ: Optional[Mapping[str, str]] = None) -> str:
    """What a ServerNotInitializedError says (the command line's sentence): what is missing
    and the file to write. ``environ``: the sidecar's environment (default: this process's)."""
    return ('no client id configured: pass client_id="ID", or write {"clientId": "ID"} to '
            + default_config_file(os.environ if environ is None else environ))


def error_from_object(error: Any, environ: Optional[Mapping[str, str]] = None) -> SidecarError:
    """Build the exception for a JSON-RPC error object ``{"code", "message", "data"}``.
    A ServerNotInitializedError says what is missing and the file to write
    (:func:`not_configured_message`; ``environ`` is the sidecar's); ``raw`` keeps the server's."""
    if not isinstance(error, dict):
        return InternalRpcError("malformed error object: %r" % (error,), raw={"error": error})
    code = error.get("code")
    message = str(error.get("message", ""))
    if code == ServerNotInitializedError.code:
        message = not_configured_message(environ)
    data = error.get("data") if isinstance(error.get("data"), dict) else None
    cls = ERROR_CLASSES.get(code) if isinstance(code, int) else None
    if cls is None:
        if isinstance(code, int) and -50999 <= code <= -50000:
            cls = MsalError
        elif isinstance(code, int) and -51999 <= code <= -51000:
            cls = PlatformError
        elif isinstance(code, int) and -32768 <= code <= -32000:
            cls = JsonRpcError
        else:
            cls = SidecarError
    return cls(message, code=code, data=data, raw=error)
