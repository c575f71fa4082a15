"""Every method, given random params, answers with a well-formed reply and the process
survives: bad input gets an error, never a crash or silence.

Identity-service calls go to a closed loopback port, so nothing leaves the machine and
failures come back at once."""
from __future__ import annotations

import random

import pytest

import sidecar as sc

METHODS = ["initialize", "ping", "getDeviceInformation", "getCurrentAccount", "getAccounts", "setCurrentAccount", "acquireToken",
           "acquireTokenSilent", "signout", "callGraph", "shutdownx"]
KEYS = ["scopes", "account", "authority", "claims", "promptType", "flow", "loginHint", "username", "homeAccountId",
        "path", "method", "apiVersion", "query", "headers", "body", "allPages", "maxPages", "timeoutSeconds",
        "forceRefresh", "signoutFromBrowser", "correlationId", "extraQueryParameters", "clientId", "cache", ""]


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**63 - 1, -(2**63), 64, 101])
    if kind == 3:
        return rng.choice([0.5, -1e300, 3.0])
    if kind in (4, 5):
        return rng.choice(["", "x", "/me", "deviceCode", "browser", "https://127.0.0.1:1/common", "http://evil/",
                           "user.read", "é\u0000", "a" * 300, "{}", "login", "GET"])
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


@pytest.mark.parametrize("seed", range(3))
def test_random_params_never_break_the_process(spawn, seed):
    rng = random.Random(seed)
    p = spawn("--authority", "https://127.0.0.1:1/common", framing=sc.NDJSON)
    p.request("initialize", {"clientId": "11111111-2222-3333-4444-555555555555", "knownAuthorities": ["127.0.0.1"],
                             "cache": {"persistence": "memory"}}, id="init", timeout=10)
    for i in range(300):
        method = rng.choice(METHODS)
        params = {rng.choice(KEYS): random_value(rng) for _ in range(rng.randrange(4))} if rng.random() < 0.8 \
            else random_value(rng)
        message = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None or rng.random() < 0.5:
            message["params"] = params
        p.send(message)
        reply = p.wait_for(i, 20)
        sc.check_reply(reply)
    assert p.ping("alive")["result"] == {}
    assert p.finish(20)[1] == 0
