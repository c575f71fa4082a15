"""auth_sidecar: Python client for auth-sidecar (MSAL-style sign-in over JSON-RPC on stdio).

    from auth_sidecar import SidecarClient
    with SidecarClient(client_id="...", authority="https://login.microsoftonline.com/common") as sidecar:
        token = sidecar.acquire_token(["User.Read"])

Standard library only. See README.md.
"""
from .aio import AsyncSidecarClient
from .client import CancelToken, SidecarClient
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _error_names
from .types import (Account, CurrentAccount, DeviceCode, DeviceInformation, GraphResponse, ServerInfo,
                    SignedHttpRequest, SignoutResult, TokenResult)

__version__ = "0.1.0"

__all__ = ["SidecarClient", "AsyncSidecarClient", "CancelToken", "Account", "TokenResult", "DeviceInformation",
           "GraphResponse", "CurrentAccount", "DeviceCode", "SignoutResult", "SignedHttpRequest", "ServerInfo", *_error_names]
