"""Instance discovery: it validates a loopback authority, whose aliases are never used (other
origins); discovery can be turned off; an instance the discovery service refuses is not
trusted. (Aliases of Microsoft hosts on the default port are AuthorityTests' subject: the mock
runs on loopback only.)"""
from __future__ import annotations

import json

from authorities_e2e import ALICE, SCOPES, token_calls


def test_a_loopback_authority_is_validated_but_has_no_aliases(launch, mock):
    """Instance discovery validates a loopback authority, but its answer's aliases (the mock
    names `127.0.0.1:PORT` and `localhost:PORT`) are other origins: a token from 127.0.0.1:PORT
    is not served for localhost:PORT, in the process (a per-request authority on the other
    host, listed as the issuer rule asks of another loopback origin) or in a fresh process
    configured with it, and nothing is sent for it."""
    port = mock.url.rsplit(":", 1)[1]
    p = launch(authority=f"https://127.0.0.1:{port}/common", knownAuthorities=[f"localhost:{port}"])
    first = p.sign_in(loginHint=ALICE)
    assert mock.admin.count("instance-discovery") >= 1, "no instance discovery for an unlisted host"
    discovery = mock.admin.log("instance-discovery")
    assert discovery and discovery[0]["path"] == "/common/discovery/instance", discovery
    assert first["account"]["environment"] == f"127.0.0.1:{port}", first["account"]
    mock.admin.counts__reset()
    for force in (False, True):
        p.error("acquireTokenSilent", {"scopes": SCOPES, "authority": f"https://localhost:{port}/common",
                                       "forceRefresh": force}, -50002, name="interactionRequired")
    assert token_calls(mock) == {}, token_calls(mock)
    assert p.silent()["accessToken"] == first["accessToken"]  # its own origin still served

    q = launch(authority=f"https://localhost:{port}/common", knownAuthorities=[])
    assert q.ok("getAccounts", {})["accounts"] == []
    q.error("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, -50002, name="interactionRequired")
    assert token_calls(mock) == {}, token_calls(mock)


def test_another_loopback_port_is_not_trusted(launch, mock):
    """The issuer rule: a per-request authority on another local port is refused before any
    request, and the account's refresh token goes nowhere."""
    p = launch(authority=f"{mock.url}/common", knownAuthorities=["127.0.0.1"])
    p.sign_in(loginHint=ALICE)
    mock.admin.counts__reset()
    for other in ("https://127.0.0.1:1/common", "http://127.0.0.1:9/common", "https://localhost:2/organizations"):
        p.error("acquireTokenSilent", {"authority": other, "forceRefresh": True}, -51008, name="authorityNotTrusted")
    assert mock.admin.counts() == {}, mock.admin.counts()


def test_instance_discovery_off(launch, mock):
    port = mock.url.rsplit(":", 1)[1]
    p = launch(authority=f"https://localhost:{port}/organizations", knownAuthorities=[],
               instanceDiscovery=False)
    r = p.sign_in(loginHint=ALICE)
    assert r["account"]["username"] == ALICE
    assert p.silent()["fromCache"] is True
    assert mock.admin.count("instance-discovery") == 0


INVALID_INSTANCE = json.dumps({"error": "invalid_instance",
                               "error_description": "AADSTS50049: Unknown or invalid instance.",
                               "error_codes": [50049]})


def test_instance_refused(launch, mock):
    """The mock accepts every host that reaches it (127.0.0.1 / localhost, any port), so its
    refusal (invalid_instance, AADSTS50049, the answer it gives for unknown hosts) is
    injected with a fault on the instance-discovery endpoint."""
    mock.admin.fault(endpoint="instance-discovery", type="status", status=400,
                     body=INVALID_INSTANCE, retry_after=None, times=-1)
    p = launch(authority=f"{mock.url}/common", knownAuthorities=[])
    p.error("acquireToken", {"scopes": SCOPES}, -51008, name="authorityNotTrusted")
    assert mock.admin.count("instance-discovery") >= 1
    assert mock.admin.count("authorize") == 0
