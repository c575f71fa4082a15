"""Instance discovery: aliases of the mock's host share one cache; discovery can be turned
off; an instance the discovery service refuses is not trusted."""
from __future__ import annotations

import json

from authorities_e2e import ALICE, SCOPES, token_calls


def test_alias_served_from_cache(launch, mock):
    """Aliases from instance discovery serve cache lookups: in the process (a per-request
    authority on the alias, listed as the issuer rule asks of another loopback origin) and in
    a fresh process configured with the alias (the aliases are kept in the cache)."""
    port = mock.url.rsplit(":", 1)[1]
    p = launch(authority=f"https://127.0.0.1:{port}/common", knownAuthorities=[f"localhost:{port}"])
    first = p.sign_in(loginHint=ALICE)
    assert mock.admin.count("instance-discovery") >= 1, "no instance discovery for an unlisted host"
    discovery = mock.admin.log("instance-discovery")
    assert discovery and discovery[0]["path"] == "/common/discovery/instance", discovery
    mock.admin.counts__reset()
    r = p.silent(authority=f"https://localhost:{port}/common")
    assert r["fromCache"] is True, r
    assert r["accessToken"] == first["accessToken"]
    assert r["account"]["homeAccountId"] == first["account"]["homeAccountId"]
    assert token_calls(mock) == {}, token_calls(mock)

    q = launch(authority=f"https://localhost:{port}/common", knownAuthorities=[])
    again = q.silent()
    assert again["fromCache"] is True and again["accessToken"] == first["accessToken"], again
    assert mock.admin.counts() == {}, mock.admin.counts()


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
