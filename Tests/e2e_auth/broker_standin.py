#!/usr/bin/python3
"""A stand-in for the Linux identity broker (microsoft-identity-broker), for the tests only.

It is NOT Microsoft's broker: it owns `com.microsoft.identity.broker1` on the session bus it
is started on (run it under `dbus-run-session`), serves `com.microsoft.identity.Broker1` at
`/com/microsoft/identity/broker1` as the open description of the interface says (every method
`(sss) -> s`: protocol version, correlation id, request JSON -> answer JSON), and signs in
without asking anyone: an interactive sign-in adds the account `--user` (or the request's
username) at once. Its tokens are unsigned JWT-shaped strings carrying a `deviceid` claim.

Every call is appended to `--log` as one JSON line: method, protocol, correlationId, request;
a caller that leaves the bus while its interactive sign-in waits adds {"method": "callerGone"}.
`--control FILE` (JSON, read at every call) makes it answer errors or change its answers:
  {"fail": {"acquireTokenSilently": {"status": 2, "context": "..."}}, "interactiveWaits": true,
   "omitAccount": true, "grantedScopesArray": true, "answerBytes": 31457280}
`fail`: the method answers that error (any status 0-21, with the real broker's fields: `tag`,
`errorCode`, `subStatus`, `diagnostics` default to numbers/{} unless given). `interactiveWaits`:
an interactive sign-in answers only when `cancelInteractiveFlow` is called with a body (then
with status 7, UserCanceled). `omitAccount`: token answers carry no `account` (himmelblau's
broker-compatible server sends none). `grantedScopesArray`: the older array form.
`answerBytes`: getAccounts' answer padded to that size (the message-size bound).
`crash`: the method named makes the stand-in exit without answering.

Proof-of-possession: a token request whose `authParameters.popParams` is an object (MSALRuntime's
`set_pop_params`: httpMethod, uriHost, uriPath, nonce, clientClaims, homeAccountId) is answered a
PoP token, `accessTokenType` 1, bound to an RSA key the stand-in holds (as the real broker keeps
its key): `accessToken` and `signedHttpRequest` are the SHR for popParams (msal-common's shape,
signed by that key, the bare token in its `at`; MSALRuntime makes its authorization header
"pop " + accessToken), with `popKeyThumbprint`. Its tokens are its own unsigned JWTs carrying `cnf: {"kid": …}`;
with `--idp URL --idp-ca FILE` it gets them from the mock identity platform instead (a device
code approved through the mock's /_admin/, redeemed with `token_type=pop` and `req_cnf`), so the
mock's PoP resource accepts its SHRs.

As the real broker behaves (broker 2.0.1's JSON schemas, teams-lite's notes on 3.0.2):
errors are {context, tag, errorCode, status, subStatus, diagnostics}; object ids are UUIDs;
`grantedScopes` is a string; the object has no org.freedesktop.DBus.Introspectable; a
`cancelInteractiveFlow` with an empty body ("" or "{}") takes the broker off the bus (it exits).
It can be started by D-Bus activation (broker_session.ActivatableBroker writes the .service file).

Written from the open description (siemens/sso-mib's and siemens/linux-entra-sso's notes on
the interface); it shares no code with either. Runs under Debian's /usr/bin/python3 with
python3-dbus and python3-gi.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
import time
import urllib.parse
import urllib.request
import ssl
import uuid

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "com.microsoft.identity.broker1"
PATH = "/com/microsoft/identity/broker1"
IFACE = "com.microsoft.identity.Broker1"
TENANT = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
DEVICE_ID = "dddd0000-1111-2222-3333-444455556666"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims: dict) -> str:
    header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{header}.{b64url(json.dumps(claims).encode())}.standin"


def jwk_thumbprint(jwk: dict) -> str:
    canonical = json.dumps({m: jwk[m] for m in ("e", "kty", "n")}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


class PopKey:
    """The stand-in's PoP key (RSA 2048), made at start; never leaves the process."""

    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric import rsa
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.private.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "e": b64url(numbers.e.to_bytes(3, "big")),
                    "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big"))}
        self.kid = jwk_thumbprint(self.jwk)

    def shr(self, access_token: str, pop: dict) -> str:
        """The signed HTTP request for `pop` (MSALRuntime's popParams) carrying `access_token`."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        claims = {"at": access_token, "ts": int(time.time()), "m": pop.get("httpMethod", "").upper(),
                  "u": pop.get("uriHost", ""), "p": pop.get("uriPath", "") or "/", "cnf": {"jwk": self.jwk},
                  "nonce": pop.get("nonce") or uuid.uuid4().hex}
        if pop.get("clientClaims"):
            claims["client_claims"] = pop["clientClaims"]
        signing_input = b64url(json.dumps({"alg": "RS256", "typ": "pop", "kid": self.kid}).encode()) + "." + \
            b64url(json.dumps(claims).encode())
        signature = self.private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)


def error(status: int, context: str, **extra) -> dict:
    """The real broker's error object (Error.json): every field present, as MSALRuntime reads it."""
    return {"error": {"context": context, "tag": 508_000_000 + status, "errorCode": 0, "status": status,
                      "subStatus": 0, "diagnostics": {}, **extra}}


class StandIn(dbus.service.Object):
    def __init__(self, bus, args):
        super().__init__(bus, PATH)
        self.args = args
        self.accounts: dict[str, dict] = {}  # homeAccountId -> account
        self.tokens: dict[tuple, dict] = {}  # (homeAccountId, scopes) -> brokerTokenResponse
        self.minted = 0
        self.pending = []  # interactive calls waiting for cancelInteractiveFlow
        self.pop_key = PopKey()
        self.pop_tokens: dict[tuple, dict] = {}  # (homeAccountId, scopes) -> PoP brokerTokenResponse

    def idp_pop_token(self, account: dict, scopes: list, client_id: str) -> str:
        """A PoP access token from the mock (--idp): a device code approved through /_admin/,
        redeemed with token_type=pop and req_cnf naming the stand-in's key."""
        context = ssl.create_default_context(cafile=self.args.idp_ca)

        def post(path, form=None, body=None):
            data = urllib.parse.urlencode(form).encode() if form is not None else json.dumps(body).encode()
            kind = "application/x-www-form-urlencoded" if form is not None else "application/json"
            request = urllib.request.Request(self.args.idp + path, data=data, headers={"Content-Type": kind})
            with urllib.request.urlopen(request, context=context, timeout=10) as answer:
                return json.loads(answer.read())
        scope = " ".join(scopes + ["openid", "profile", "offline_access"])
        base = f"/{TENANT}/oauth2/v2.0"
        started = post(base + "/devicecode", form={"client_id": client_id, "scope": scope})
        post("/_admin/devicecode", body={"action": "approve", "user_code": started["user_code"],
                                         "username": account["username"]})
        cnf = b64url(json.dumps({"kid": self.pop_key.kid, "xms_ksl": "sw"}).encode())
        answer = post(base + "/token", form={"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                            "client_id": client_id, "device_code": started["device_code"],
                                            "token_type": "pop", "req_cnf": cnf})
        return answer["access_token"]

    # ---- plumbing --------------------------------------------------------------------------
    def control(self) -> dict:
        try:
            with open(self.args.control) as f:
                return json.load(f)
        except (OSError, TypeError, ValueError):
            return {}

    def log(self, method: str, protocol: str, correlation_id: str, request: str) -> None:
        try:
            parsed = json.loads(request)
        except ValueError:
            parsed = request
        with open(self.args.log, "a") as f:
            f.write(json.dumps({"method": method, "protocol": protocol, "correlationId": correlation_id,
                                "request": parsed, "at": time.time()}) + "\n")

    def serve(self, method: str, protocol: str, correlation_id: str, request: str, handler) -> str:
        self.log(method, protocol, correlation_id, request)
        if protocol != "0.0":
            return json.dumps(error(6, f"unsupported protocol version {protocol}"))
        if self.control().get("crash") == method:
            os._exit(71)  # a broker that dies during the call (the bus answers NoReply: disconnected)
        failure = self.control().get("fail", {}).get(method)
        if failure:
            answer = error(failure.get("status", 0), failure.get("context", "failure"),
                           **{k: v for k, v in failure.items() if k not in ("status", "context")})
            return json.dumps({"brokerTokenResponse": answer} if method.startswith("acquireToken") else answer)
        try:
            body = json.loads(request)
        except ValueError:
            return json.dumps(error(6, "the request is not JSON"))
        return json.dumps(handler(body))

    # ---- tokens ----------------------------------------------------------------------------
    def account_for(self, username: str) -> dict:
        """The account object with the 14 keys of Account.json (MSALRuntime's own)."""
        oid = str(uuid.UUID(hashlib.sha256(username.lower().encode()).hexdigest()[:32]))
        first = username.split("@")[0].title()
        return {"homeAccountId": f"{oid}.{TENANT}", "localAccountId": oid, "environment": "login.microsoftonline.com",
                "homeEnvironment": "login.microsoftonline.com", "realm": TENANT, "username": username, "name": first,
                "givenName": first, "familyName": "", "middleName": "", "alternativeAccountId": "",
                "passwordChangeUrl": "", "passwordExpiry": 0,
                "clientInfo": b64url(json.dumps({"uid": oid, "utid": TENANT}).encode())}

    def mint_pop(self, account: dict, params: dict) -> dict:
        """A PoP token bound to the stand-in's key, with the SHR for popParams."""
        scopes = params.get("requestedScopes") or []
        if isinstance(scopes, str):
            scopes = scopes.split()
        key = (account["homeAccountId"], tuple(sorted(scopes)))
        cached = self.pop_tokens.get(key)
        if not cached or cached["expiresOn"] <= time.time() * 1000 + 300_000 or params.get("accessTokenToRenew"):
            self.minted += 1
            expires_ms = int((time.time() + 3600) * 1000)
            if self.args.idp:
                token = self.idp_pop_token(account, scopes, params.get("clientId"))
            else:
                token = jwt({"aud": scopes[0].rsplit("/", 1)[0] if scopes and "/" in scopes[0] else "00000003-0000-0000-c000-000000000000",
                             "scp": " ".join(s.rsplit("/", 1)[-1] for s in scopes), "tid": TENANT,
                             "oid": account["localAccountId"], "upn": account["username"], "deviceid": DEVICE_ID,
                             "exp": expires_ms // 1000, "n": self.minted, "appid": params.get("clientId"),
                             "cnf": {"kid": self.pop_key.kid}}).rsplit(".", 1)[0] + "." + b64url(b"standin")
            bearer = self.mint(account, {**params, "popParams": None})["brokerTokenResponse"]
            cached = {**bearer, "accessToken": token, "accessTokenType": 1, "expiresOn": expires_ms,
                      "popKeyThumbprint": self.pop_key.kid}
            self.pop_tokens[key] = cached
        # MSALRuntime's authorization header is "pop " + accessToken (measured: it ignores
        # signedHttpRequest there), so the answer's accessToken is the SHR, which carries the token.
        shr = self.pop_key.shr(cached["accessToken"], params["popParams"])
        answer = {**cached, "accessToken": shr, "signedHttpRequest": shr}
        return self.shaped(answer)

    def mint(self, account: dict, params: dict) -> dict:
        if isinstance(params.get("popParams"), dict):
            return self.mint_pop(account, params)
        self.minted += 1
        scopes = params.get("requestedScopes") or []
        if isinstance(scopes, str):
            scopes = scopes.split()
        expires_ms = int((time.time() + 3600) * 1000)
        claims = {"aud": scopes[0].rsplit("/", 1)[0] if scopes and "/" in scopes[0] else "00000003-0000-0000-c000-000000000000",
                  "scp": " ".join(s.rsplit("/", 1)[-1] for s in scopes), "tid": TENANT, "oid": account["localAccountId"],
                  "upn": account["username"], "deviceid": DEVICE_ID, "exp": expires_ms // 1000, "n": self.minted,
                  "appid": params.get("clientId")}
        if params.get("decodedClaims"):
            claims["xms_cc_satisfied"] = params["decodedClaims"]
        response = {"accessToken": jwt(claims), "accessTokenType": 0,
                    "idToken": jwt({"aud": params.get("clientId"), "iss": f"https://login.microsoftonline.com/{TENANT}/v2.0",
                                    "tid": TENANT, "oid": account["localAccountId"], "sub": account["localAccountId"],
                                    "preferred_username": account["username"], "name": account["name"],
                                    "iat": int(time.time()), "nbf": int(time.time()), "exp": expires_ms // 1000}),
                    "account": account, "clientInfo": account["clientInfo"], "expiresOn": expires_ms,
                    "extendedExpiresOn": expires_ms + 3600 * 1000, "grantedScopes": " ".join(scopes)}
        self.tokens[(account["homeAccountId"], tuple(sorted(scopes)))] = response
        return self.shaped(response)

    def shaped(self, response: dict) -> dict:
        """The token answer as `--control` shapes it (no account; scopes as an array)."""
        control = self.control()
        response = dict(response)
        if control.get("omitAccount"):
            response.pop("account", None)
        if control.get("grantedScopesArray"):
            response["grantedScopes"] = response["grantedScopes"].split()
        return {"brokerTokenResponse": response}

    def interactive(self, body: dict) -> dict:
        params = body.get("authParameters", {})
        username = params.get("username") or self.args.user
        account = self.account_for(username)
        self.accounts[account["homeAccountId"]] = account
        return self.mint(account, params)

    def silent(self, body: dict) -> dict:
        params = body.get("authParameters", {})
        named = body.get("account") or params.get("account") or {}
        account = self.accounts.get(named.get("homeAccountId"))
        if account is None:
            return {"brokerTokenResponse": error(2, "the account is not signed in with the broker")}
        if isinstance(params.get("popParams"), dict):
            return self.mint_pop(account, params)
        scopes = params.get("requestedScopes") or []
        key = (account["homeAccountId"], tuple(sorted(scopes.split() if isinstance(scopes, str) else scopes)))
        cached = self.tokens.get(key)
        renew = params.get("accessTokenToRenew")
        if cached and not params.get("decodedClaims") and cached["accessToken"] != renew \
                and cached["expiresOn"] > time.time() * 1000 + 300_000:
            return self.shaped(cached)
        return self.mint(account, params)

    # ---- the interface -----------------------------------------------------------------------
    def _message_cb(self, connection, message):
        # The real broker's object has no org.freedesktop.DBus.Introspectable (dbus-python adds one).
        if message.get_interface() == dbus.INTROSPECTABLE_IFACE:
            connection.send_message(dbus.lowlevel.ErrorMessage(
                message, "org.freedesktop.DBus.Error.UnknownMethod", "No such interface"))
            return
        super()._message_cb(connection, message)

    def watch_caller(self, sender: str) -> None:
        """Logs `callerGone` when `sender` leaves the bus while its sign-in waits (and forgets it)."""
        def changed(name, old, new):
            if name == sender and not new:
                before = len(self.pending)
                self.pending = [(s, r) for s, r in self.pending if s != sender]
                if len(self.pending) < before:
                    self.log("callerGone", "", "", json.dumps({"sender": sender}))
        self.connection.add_signal_receiver(changed, "NameOwnerChanged", "org.freedesktop.DBus",
                                            "org.freedesktop.DBus", "/org/freedesktop/DBus", arg0=sender)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s", async_callbacks=("reply", "fail"),
                         sender_keyword="sender")
    def acquireTokenInteractively(self, protocol, correlation_id, request, reply, fail, sender=None):
        if self.control().get("interactiveWaits") and protocol == "0.0":
            self.log("acquireTokenInteractively", protocol, correlation_id, request)
            self.pending.append((sender, reply))
            self.watch_caller(sender)
            return
        reply(self.serve("acquireTokenInteractively", protocol, correlation_id, request, self.interactive))

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def acquireTokenSilently(self, protocol, correlation_id, request):
        return self.serve("acquireTokenSilently", protocol, correlation_id, request, self.silent)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def getAccounts(self, protocol, correlation_id, request):
        def listing(body):
            answer = {"accounts": list(self.accounts.values())}
            size = self.control().get("answerBytes")
            if size:
                answer["padding"] = "x" * max(0, int(size) - len(json.dumps(answer)) - 16)
            return answer
        return self.serve("getAccounts", protocol, correlation_id, request, listing)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def removeAccount(self, protocol, correlation_id, request):
        def remove(body):
            home = (body.get("account") or {}).get("homeAccountId")
            if self.accounts.pop(home, None) is None:
                return error(16, "no such account")
            self.tokens = {k: v for k, v in self.tokens.items() if k[0] != home}
            return {}
        return self.serve("removeAccount", protocol, correlation_id, request, remove)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def cancelInteractiveFlow(self, protocol, correlation_id, request):
        if request.strip() in ("", "{}"):
            # Broker 3.0.2 leaves the bus on an empty body (teams-lite's measurement).
            self.log("cancelInteractiveFlow", protocol, correlation_id, request)
            os._exit(70)

        def cancel(body):
            waiting, self.pending = self.pending, []
            for _, reply in waiting:
                reply(json.dumps({"brokerTokenResponse": error(7, "the user cancelled the sign-in")}))
            return {}
        return self.serve("cancelInteractiveFlow", protocol, correlation_id, request, cancel)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def getLinuxBrokerVersion(self, protocol, correlation_id, request):
        return self.serve("getLinuxBrokerVersion", protocol, correlation_id, request,
                          lambda body: {"linuxBrokerVersion": self.args.version})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True)
    parser.add_argument("--address-file", help="where to write the bus address once the name is owned")
    parser.add_argument("--control")
    parser.add_argument("--user", default="alice@contoso.com")
    parser.add_argument("--version", default="2.0.4-standin")
    parser.add_argument("--idp", help="the mock identity platform's URL: PoP tokens from there")
    parser.add_argument("--idp-ca", help="the mock's CA file")
    parser.add_argument("--no-name", action="store_true", help="stay on the bus without the broker's name")
    args = parser.parse_args()
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    keep = None
    if not args.no_name:
        keep = dbus.service.BusName(NAME, bus, do_not_queue=True)
        StandIn(bus, args)
    if args.address_file:
        with open(args.address_file + ".tmp", "w") as f:
            f.write(os.environ["DBUS_SESSION_BUS_ADDRESS"])
        os.replace(args.address_file + ".tmp", args.address_file)
    loop = GLib.MainLoop()
    try:  # `keep` holds the name until the end
        loop.run()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
