"""Typed results. Each keeps the JSON object it came from in ``raw`` (members this
version does not know about are there too). Secrets (tokens) are left out of ``repr``."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Union

__all__ = ["Account", "TokenResult", "DeviceInformation", "GraphResponse", "CurrentAccount",
           "DeviceCode", "SignoutResult", "ServerInfo", "AccountLike", "account_ref"]


@dataclass(frozen=True)
class Account:
    """An account in the token cache (MSAL's AccountInfo)."""

    home_account_id: str
    local_account_id: str
    environment: str
    tenant_id: str
    username: str
    name: Optional[str] = None
    id_token_claims: Optional[Dict[str, Any]] = field(default=None, repr=False, compare=False)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Optional[Dict[str, Any]]) -> Optional["Account"]:
        if obj is None:
            return None
        return cls(home_account_id=obj.get("homeAccountId", ""), local_account_id=obj.get("localAccountId", ""),
                   environment=obj.get("environment", ""), tenant_id=obj.get("tenantId", ""),
                   username=obj.get("username", ""), name=obj.get("name"),
                   id_token_claims=obj.get("idTokenClaims"), raw=dict(obj))

    def to_ref(self) -> Dict[str, str]:
        """The AccountRef that names this account: ``{"homeAccountId": ...}``."""
        return {"homeAccountId": self.home_account_id}


AccountLike = Union[Account, Dict[str, str], str]


def account_ref(account: Optional[AccountLike]) -> Optional[Dict[str, str]]:
    """Account -> {"homeAccountId"}; str -> {"username"}; a dict is passed as is."""
    if account is None:
        return None
    if isinstance(account, Account):
        return account.to_ref()
    if isinstance(account, str):
        return {"username": account}
    if isinstance(account, dict):
        return account
    raise TypeError("account must be an Account, an AccountRef dict or a username, not %r" % type(account).__name__)


def _utc(ts: Optional[int]) -> Optional[datetime]:
    return None if ts is None else datetime.fromtimestamp(ts, tz=timezone.utc)


@dataclass(frozen=True)
class TokenResult:
    """Result of acquire_token / acquire_token_silent."""

    access_token: str = field(repr=False)
    token_type: str
    expires_on: int  # Unix seconds
    scopes: List[str]
    account: Account
    tenant_id: str
    authority: str
    correlation_id: str
    from_cache: bool
    id_token: Optional[str] = field(default=None, repr=False)
    ext_expires_on: Optional[int] = None
    refresh_on: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "TokenResult":
        return cls(access_token=obj["accessToken"], token_type=obj.get("tokenType", "Bearer"),
                   expires_on=obj["expiresOn"], scopes=list(obj.get("scopes", [])),
                   account=Account.from_json(obj["account"]), tenant_id=obj.get("tenantId", ""),
                   authority=obj.get("authority", ""), correlation_id=obj.get("correlationId", ""),
                   from_cache=bool(obj.get("fromCache")), id_token=obj.get("idToken"),
                   ext_expires_on=obj.get("extExpiresOn"), refresh_on=obj.get("refreshOn"), raw=dict(obj))

    @property
    def expires_on_datetime(self) -> datetime:
        return _utc(self.expires_on)

    @property
    def signed_http_request(self) -> Optional[str]:
        """A PoP token's signed HTTP request (requests with ``proof_of_possession`` only)."""
        return self.raw.get("signedHttpRequest")

    @property
    def authorization_header(self) -> str:
        """``"Bearer <token>"``, or for a PoP token ``"PoP <signed HTTP request>"`` (the token
        alone is never one); an SSH certificate is never one (ValueError)."""
        if self.token_type == "ssh-cert":
            raise ValueError("an ssh-cert token is an SSH certificate, not an Authorization header")
        if self.token_type == "pop":
            return self.raw["authorizationHeader"]
        return "%s %s" % (self.token_type, self.access_token)

    @property
    def ssh_certificate_line(self) -> str:
        """The certificate file's line (``ssh-rsa-cert-v01@openssh.com <base64>``) of an ssh-cert token."""
        if self.token_type != "ssh-cert":
            raise ValueError("not an ssh-cert token")
        return "ssh-rsa-cert-v01@openssh.com " + self.access_token


@dataclass(frozen=True)
class SignedHttpRequest:
    """Result of sign_http_request: a fresh signed HTTP request with the cached PoP token."""

    signed_http_request: str = field(repr=False)
    authorization_header: str = field(repr=False)
    token_type: str
    expires_on: int  # Unix seconds, the PoP token's
    from_cache: bool
    correlation_id: str

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "SignedHttpRequest":
        return cls(signed_http_request=obj["signedHttpRequest"], authorization_header=obj["authorizationHeader"],
                   token_type=obj.get("tokenType", "pop"), expires_on=obj["expiresOn"],
                   from_cache=bool(obj.get("fromCache")), correlation_id=obj.get("correlationId", ""))


@dataclass(frozen=True)
class CurrentAccount:
    """Result of get_current_account: the current account and, if it changed since the last
    call (e.g. another app signed out on a shared device), the previous one."""

    account: Optional[Account]
    previous_account: Optional[Account]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "CurrentAccount":
        return cls(Account.from_json(obj.get("account")), Account.from_json(obj.get("previousAccount")), dict(obj))


@dataclass(frozen=True)
class DeviceInformation:
    device_mode: str  # "private" | "shared"
    shared_device_mode_source: str
    extra_device_information: Dict[str, Any]
    broker_available: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "DeviceInformation":
        return cls(obj.get("deviceMode", ""), obj.get("sharedDeviceModeSource", ""),
                   dict(obj.get("extraDeviceInformation") or {}), bool(obj.get("brokerAvailable")), dict(obj))

    @property
    def shared(self) -> bool:
        return self.device_mode == "shared"


@dataclass(frozen=True)
class GraphResponse:
    """Result of call_graph: Graph's HTTP answer whatever its status (4xx/5xx are results)."""

    status: int
    headers: Dict[str, str]  # lower-case names
    body: Any  # parsed JSON, text, or None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "GraphResponse":
        return cls(obj["status"], dict(obj.get("headers") or {}), obj.get("body"), dict(obj))

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class DeviceCode:
    """Params of the ``deviceCode`` notification: show ``message`` to the user."""

    request_id: Union[int, str]
    user_code: str
    verification_uri: str
    message: str
    expires_on: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "DeviceCode":
        return cls(obj.get("requestId"), obj.get("userCode", ""), obj.get("verificationUri", ""),
                   obj.get("message", ""), obj.get("expiresOn", 0), dict(obj))


@dataclass(frozen=True)
class SignoutResult:
    """Result of signout. ``browser_sign_out``: ``"opened"``, ``"notSupported"`` or ``"failed"``
    when the browser part was asked for (``signout_from_browser``, or a shared device), else None."""

    signed_out: bool
    account: Optional[Account]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    browser_sign_out: Optional[str] = None

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "SignoutResult":
        return cls(bool(obj.get("signedOut")), Account.from_json(obj.get("account")), dict(obj),
                   obj.get("browserSignOut"))


@dataclass(frozen=True)
class ServerInfo:
    """Result of initialize."""

    name: str
    version: str
    protocol_version: str
    capabilities: Dict[str, Any]
    configuration: Dict[str, Any]
    #: the configuration file's profile this session uses (None: a flat file, or none)
    profile: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "ServerInfo":
        info = obj.get("serverInfo") or {}
        return cls(info.get("name", ""), info.get("version", ""), obj.get("protocolVersion", ""),
                   dict(obj.get("capabilities") or {}), dict(obj.get("configuration") or {}),
                   obj.get("profile"), dict(obj))
