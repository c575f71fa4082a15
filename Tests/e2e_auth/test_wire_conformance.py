"""Token requests on the wire, side by side with Microsoft's own clients: for each grant the
same operation by MSAL for Python 1.39 (azure-identity's WorkloadIdentityCredential where MSAL
has none) and by auth-sidecar, against one mock, their requests compared from the mock's
/_admin/log: parameter names, fixed values, headers. Every difference is listed below with
its reason (a listed difference that is no longer one fails too, so the list stays true).

Grants: authorization code (and its authorize request), refresh, claims challenge, device
code, client credentials with a client assertion (MSAL's ConfidentialClientApplication and
azure-identity's WorkloadIdentityCredential), SSH certificate. Not here: managed identity —
auth-sidecar serves that endpoint and never calls one (its requests as a server are checked
against azure-identity's ManagedIdentityCredential in test_adapters.py and test_federation.py).
"""
from __future__ import annotations

import base64
import json
import time

import pytest

from auth_e2e import ALICE, CONTOSO_TID, SCOPES
from test_msal_interop import default_port, launch_at, msal_app, msal_env  # noqa: F401 (fixtures)

msal = pytest.importorskip("msal")

# Headers every HTTP library sets its own way: not the protocol.
TRANSPORT = {"host", "user-agent", "accept-encoding", "connection", "content-length", "content-type", "accept"}

# (endpoint, where, name): why MSAL for Python (or azure-identity) sends it and auth-sidecar
# does not, or the reverse. Every other name must agree.
KNOWN = {
    ("*", "header", "x-client-current-telemetry"):
        "MSAL for Python's telemetry of its own API calls (api id, cache status); auth-sidecar sends none",
    ("*", "header", "x-client-last-telemetry"): "MSAL for Python's telemetry of its earlier failures; auth-sidecar sends none",
    ("*", "header", "return-client-request-id"):
        "auth-sidecar asks the service to echo client-request-id, as MSAL for .NET/Node/Go do; MSAL for Python does not ask",
    ("authorize", "query", "X-AnchorMailbox"):
        "MSAL for Python puts its routing hint UPN:<login_hint> in the authorize URL's query; auth-sidecar sends "
        "login_hint, which the service routes by (the token requests carry X-AnchorMailbox in both)",
    ("devicecode", "form", "client_info"):
        "auth-sidecar's one token-endpoint form adds client_info=1 everywhere; the device authorization endpoint ignores it",
    ("token:device_code", "form", "code"):
        "MSAL for Python repeats the device code as `code` (for ADFS 2019); Entra reads device_code",
    # azure-identity's WorkloadIdentityCredential posts with its own client (not MSAL):
    ("wl:token:client_credentials", "form", "client_info"):
        "azure-identity's own client asks for no client_info; MSAL does, and so does auth-sidecar (its cache keys on it)",
    ("wl:token:client_credentials", "header", "x-ms-client-request-id"):
        "azure-core's correlation header; auth-sidecar sends MSAL's client-request-id",
    ("wl:token:client_credentials", "header", "client-request-id"): "as above: MSAL's name for it",
    ("wl:token:client_credentials", "header", "x-client-sku"): "MSAL's library headers; azure-identity's own client sends none",
    ("wl:token:client_credentials", "header", "x-client-ver"): "as above",
    ("wl:token:client_credentials", "header", "x-client-os"): "as above",
    ("wl:token:client_credentials", "header", "x-ms-lib-capability"): "as above (MSAL sends it on every request)",
}
# Values that are the protocol (the rest differ by nature: codes, ids, the library's name).
FIXED = ("grant_type", "client_info", "client_id", "token_type", "client_assertion_type", "response_type",
         "code_challenge_method", "login_hint", "claims", "key_id", "req_cnf", "x-ms-lib-capability", "x-client-os")
# Values that differ, with the reason.
VALUES = {
    ("authorize", "response_mode"):
        "MSAL for Python asks form_post (its listener reads a POST); auth-sidecar's loopback listener reads the query "
        "(MSAL for Node and Go ask query too)",
}
DIFFERENCES_SEEN: set = set()


def record(mock, action) -> list[dict]:
    mock.admin.call("log/clear", {})
    action()
    return mock.admin.log()


def only(log: list[dict], endpoint: str) -> list[dict]:
    return [r for r in log if r["endpoint"] == endpoint]


def names(request: dict, where: str) -> dict[str, str]:
    if where == "header":
        return {k.lower(): v for k, v in request["headers"].items() if k.lower() not in TRANSPORT}
    values = request["form" if where == "form" else "query"] or {}
    return {k: (v[0] if isinstance(v, list) else v) for k, v in values.items()}


def compare(endpoint: str, theirs: dict, ours: dict, prefix: str = "") -> list[str]:
    """The unlisted differences between two requests to `endpoint` (empty: none). Scopes are
    compared as sets (the order is the library's)."""
    problems = []
    for where in ("form", "query", "header"):
        t, o = names(theirs, where), names(ours, where)
        for name in sorted(set(t) ^ set(o)):
            key = next((k for k in ((prefix + endpoint, where, name), ("*", where, name)) if k in KNOWN), None)
            side = "MSAL only" if name in t else "auth-sidecar only"
            if key is None:
                problems.append(f"{prefix}{endpoint} {where} {name!r}: {side}")
            else:
                DIFFERENCES_SEEN.add(key)
        for name in sorted(set(t) & set(o)):
            if name == "scope" and set(t[name].split()) != set(o[name].split()):
                problems.append(f"{endpoint} scope: {t[name]!r} != {o[name]!r}")
            if name in FIXED and t[name] != o[name]:
                if (endpoint, name) in VALUES:
                    DIFFERENCES_SEEN.add((endpoint, name))
                else:
                    problems.append(f"{endpoint} {where} {name}: {t[name]!r} != {o[name]!r}")
            if (endpoint, name) in VALUES and t[name] != o[name]:
                DIFFERENCES_SEEN.add((endpoint, name))
    return problems


def first(log: list[dict], endpoint: str, last: bool = False) -> dict:
    found = only(log, endpoint)
    assert found, (endpoint, [r["endpoint"] for r in log])
    return found[-1 if last else 0]


CHALLENGE = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'
APP = "5e1f0000-0000-4000-8000-00000000ab01"
ARM = "https://management.azure.com/.default"


def test_authorization_code_refresh_and_claims_challenge(launch, mock, msal_env, default_port, tmp_path):
    app = msal_app(mock, msal.SerializableTokenCache(), default_port)

    def theirs():
        assert "access_token" in app.acquire_token_interactive(SCOPES, login_hint=ALICE, timeout=20)
        account = app.get_accounts()[0]
        assert "access_token" in app.acquire_token_silent(SCOPES, account, force_refresh=True)
        assert "access_token" in app.acquire_token_silent_with_error(SCOPES, account, claims_challenge=CHALLENGE)

    their_log = record(mock, theirs)
    p = launch_at(launch, default_port, str(tmp_path / "cache.json"))

    def ours():
        p.sign_in(loginHint=ALICE)
        p.silent(forceRefresh=True)
        p.silent(claims=CHALLENGE)

    our_log = record(mock, ours)
    # (auth-sidecar looks at the sign-in page once before the browser opens: its preflight, no state)
    real = [r for r in only(our_log, "authorize") if "state" in (r["query"] or {})]
    assert real, our_log
    problems = compare("authorize", first(their_log, "authorize"), real[-1])
    problems += compare("token:authorization_code", first(their_log, "token:authorization_code"),
                        first(our_log, "token:authorization_code"))
    refresh, claims_refresh = only(our_log, "token:refresh_token")[0], only(our_log, "token:refresh_token")[-1]
    problems += compare("token:refresh_token", only(their_log, "token:refresh_token")[0], refresh)
    problems += compare("token:refresh_token", only(their_log, "token:refresh_token")[-1], claims_refresh)
    assert problems == []
    # The headers #48 names, on our refresh requests.
    home = p.ok("getCurrentAccount")["account"]["homeAccountId"]
    for request in (refresh, claims_refresh, first(our_log, "token:authorization_code")):
        assert request["headers"]["x-anchormailbox"] == "Oid:" + home.replace(".", "@"), request["headers"]
        assert request["headers"]["x-ms-lib-capability"] == "retry-after, h429"
    assert json.loads(claims_refresh["form"]["claims"])["access_token"]["acrs"]["value"] == "c1"


def test_device_code(launch, mock, msal_env, default_port, tmp_path):
    app = msal_app(mock, msal.SerializableTokenCache(), default_port)

    def theirs():
        flow = app.initiate_device_flow(SCOPES)
        mock.admin.device("approve", flow["user_code"], username=ALICE)
        assert "access_token" in app.acquire_token_by_device_flow(flow)

    their_log = record(mock, theirs)
    p = launch_at(launch, default_port, str(tmp_path / "cache.json"))
    our_log = record(mock, lambda: p.device_sign_in(ALICE))
    problems = compare("devicecode", first(their_log, "devicecode"), first(our_log, "devicecode"))
    problems += compare("token:device_code", first(their_log, "token:device_code", last=True),
                        first(our_log, "token:device_code", last=True))
    assert problems == []


def test_ssh_certificate(launch, mock, msal_env, default_port, tmp_path):
    from test_ssh_cert import PAS, rsa_key
    p = launch(cache=str(tmp_path / "cache.json"), env=default_port.env, authority=default_port.url + "/organizations",
               knownAuthorities=[default_port.host], sshCertScope=PAS)
    p.sign_in(loginHint=ALICE)
    key = open(rsa_key(tmp_path, "a") + ".pub").read()
    our_log = record(mock, lambda: p.ok("acquireTokenSilent", {"scopes": [PAS], "sshCertificate": {"publicKey": key}}))
    ours = first(our_log, "token:refresh_token")
    # MSAL for Python's documented SSH-certificate call, for the same key (its req_cnf and key_id).
    app = msal_app(mock, msal.SerializableTokenCache(), default_port)
    assert "access_token" in app.acquire_token_interactive([PAS], login_hint=ALICE, timeout=20)
    data = {"token_type": "ssh-cert", "key_id": ours["form"]["key_id"], "req_cnf": ours["form"]["req_cnf"]}
    their_log = record(mock, lambda: app.acquire_token_silent([PAS], app.get_accounts()[0], force_refresh=True, data=data))
    assert compare("token:refresh_token", first(their_log, "token:refresh_token"), ours) == []
    assert ours["form"]["token_type"] == "ssh-cert" and ours["headers"]["x-anchormailbox"].startswith("Oid:")


def test_client_credentials_with_an_assertion(launch, mock, tmp_path, monkeypatch):
    from mock_idp.workload_issuer import WorkloadIssuer
    requests = pytest.importorskip("requests")
    identity = pytest.importorskip("azure.identity")
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        monkeypatch.setenv(name, mock.ca_file)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    issuer = WorkloadIssuer(lifetime=120).start()
    try:
        mock.admin.federation(client_id=APP, issuer=issuer.url, subject=issuer.subject, roles=["Contributor"])
        token_file = str(tmp_path / "federated-token")
        issuer.write_token_file(token_file)
        session = requests.Session()
        session.verify = mock.ca_file
        confidential = msal.ConfidentialClientApplication(
            APP, client_credential={"client_assertion": lambda: open(token_file).read()},
            authority=f"{mock.url}/{CONTOSO_TID}", instance_discovery=False, http_client=session)
        msal_log = record(mock, lambda: confidential.acquire_token_for_client([ARM]))
        workload = identity.WorkloadIdentityCredential(tenant_id=CONTOSO_TID, client_id=APP, token_file_path=token_file,
                                                       authority=mock.url)
        workload_log = record(mock, lambda: workload.get_token(ARM))
        p = launch(initialize=False)
        p.initialize(cache=str(tmp_path / "app.json"), clientId=APP, authority=f"{mock.url}/{CONTOSO_TID}",
                     clientAssertion={"file": token_file})
        our_log = record(mock, lambda: p.silent(scopes=[ARM]))
    finally:
        issuer.stop()
    ours = first(our_log, "token:client_credentials")
    problems = compare("token:client_credentials", first(msal_log, "token:client_credentials"), ours)
    problems += compare("token:client_credentials", first(workload_log, "token:client_credentials"), ours, prefix="wl:")
    assert problems == []
    assert ours["form"]["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def test_every_listed_difference_is_one():
    """Runs last (file order): the list holds no difference that no longer is one."""
    if len(DIFFERENCES_SEEN) == 0:
        pytest.skip("the comparisons did not run")
    stale = (set(KNOWN) | set(VALUES)) - DIFFERENCES_SEEN
    assert stale == set(), f"listed but not seen: {sorted(stale)}"
