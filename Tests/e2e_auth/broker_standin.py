#!/usr/bin/python3
"""A stand-in for the Linux identity broker (microsoft-identity-broker), for the tests only.

It is NOT Microsoft's broker: it owns `com.microsoft.identity.broker1` on the session bus it
is started on (run it under `dbus-run-session`), serves `com.microsoft.identity.Broker1` at
`/com/microsoft/identity/broker1` as the open description of the interface says (every method
`(sss) -> s`: protocol version, correlation id, request JSON -> answer JSON), and signs in
without asking anyone: an interactive sign-in adds the account `--user` (or the request's
username) at once. Its tokens are unsigned JWT-shaped strings carrying a `deviceid` claim.

Every call is appended to `--log` as one JSON line: method, protocol, correlationId, request.
`--control FILE` (JSON, read at every call) makes it answer errors:
  {"fail": {"acquireTokenSilently": {"status": 2, "context": "..."}}, "interactiveWaits": true}
`interactiveWaits`: an interactive sign-in answers only when `cancelInteractiveFlow` is called
(then with status 7, UserCanceled).

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


def error(status: int, context: str, **extra) -> dict:
    return {"error": {"status": status, "context": context, "subStatus": 0, **extra}}


class StandIn(dbus.service.Object):
    def __init__(self, bus, args):
        super().__init__(bus, PATH)
        self.args = args
        self.accounts: dict[str, dict] = {}  # homeAccountId -> account
        self.tokens: dict[tuple, dict] = {}  # (homeAccountId, scopes) -> brokerTokenResponse
        self.minted = 0
        self.pending = []  # interactive calls waiting for cancelInteractiveFlow

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
        failure = self.control().get("fail", {}).get(method)
        if failure:
            answer = {"error": {"subStatus": 0, **failure}}
            return json.dumps({"brokerTokenResponse": answer} if method.startswith("acquireToken") else answer)
        try:
            body = json.loads(request)
        except ValueError:
            return json.dumps(error(6, "the request is not JSON"))
        return json.dumps(handler(body))

    # ---- tokens ----------------------------------------------------------------------------
    def account_for(self, username: str) -> dict:
        oid = f"0000{int(hashlib.sha256(username.lower().encode()).hexdigest()[:7], 16) % 10**8:08d}-0000-4000-8000-000000000001"
        return {"homeAccountId": f"{oid}.{TENANT}", "localAccountId": oid, "environment": "login.microsoftonline.com",
                "realm": TENANT, "username": username, "name": username.split("@")[0].title(),
                "clientInfo": b64url(json.dumps({"uid": oid, "utid": TENANT}).encode())}

    def mint(self, account: dict, params: dict) -> dict:
        self.minted += 1
        scopes = params.get("requestedScopes") or []
        expires_ms = int((time.time() + 3600) * 1000)
        claims = {"aud": scopes[0].rsplit("/", 1)[0] if scopes and "/" in scopes[0] else "00000003-0000-0000-c000-000000000000",
                  "scp": " ".join(s.rsplit("/", 1)[-1] for s in scopes), "tid": TENANT, "oid": account["localAccountId"],
                  "upn": account["username"], "deviceid": DEVICE_ID, "exp": expires_ms // 1000, "n": self.minted,
                  "appid": params.get("clientId")}
        if params.get("decodedClaims"):
            claims["xms_cc_satisfied"] = params["decodedClaims"]
        response = {"accessToken": jwt(claims), "accessTokenType": 0,
                    "idToken": jwt({"tid": TENANT, "oid": account["localAccountId"], "preferred_username": account["username"]}),
                    "account": account, "clientInfo": account["clientInfo"], "expiresOn": expires_ms,
                    "extendedExpiresOn": expires_ms + 3600 * 1000, "grantedScopes": scopes}
        self.tokens[(account["homeAccountId"], tuple(sorted(scopes)))] = response
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
        key = (account["homeAccountId"], tuple(sorted(params.get("requestedScopes") or [])))
        cached = self.tokens.get(key)
        renew = params.get("accessTokenToRenew")
        if cached and not params.get("decodedClaims") and cached["accessToken"] != renew \
                and cached["expiresOn"] > time.time() * 1000 + 300_000:
            return {"brokerTokenResponse": cached}
        return self.mint(account, params)

    # ---- the interface -----------------------------------------------------------------------
    @dbus.service.method(IFACE, in_signature="sss", out_signature="s", async_callbacks=("reply", "fail"))
    def acquireTokenInteractively(self, protocol, correlation_id, request, reply, fail):
        if self.control().get("interactiveWaits") and protocol == "0.0":
            self.log("acquireTokenInteractively", protocol, correlation_id, request)
            self.pending.append(reply)
            return
        reply(self.serve("acquireTokenInteractively", protocol, correlation_id, request, self.interactive))

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def acquireTokenSilently(self, protocol, correlation_id, request):
        return self.serve("acquireTokenSilently", protocol, correlation_id, request, self.silent)

    @dbus.service.method(IFACE, in_signature="sss", out_signature="s")
    def getAccounts(self, protocol, correlation_id, request):
        return self.serve("getAccounts", protocol, correlation_id, request,
                          lambda body: {"accounts": list(self.accounts.values())})

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
        def cancel(body):
            waiting, self.pending = self.pending, []
            for reply in waiting:
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
