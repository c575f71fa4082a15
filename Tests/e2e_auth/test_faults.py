"""The fault suite: what the identity service or Graph can do wrong, at each network step.

Every step the product takes over the network (the refresh of acquireTokenSilent with
forceRefresh, device-code polling, the browser sign-in's code redemption, callGraph) meets
each of the mock's faults (mock/README.md "Controls"): error statuses, 429 and
503 with Retry-After, time-outs (an answer later than httpTimeoutSeconds, or a body that
trickles in slower than it), resets, truncated and malformed JSON, a wrong content type (a
captive portal's HTML page), an answer missing its fields. Each case asserts:

- the outcome: a typed JSON-RPC error (protocol/errors.md) or, for a fault that goes
  away, a bounded retry then success;
- the time: the configured time limit (httpTimeoutSeconds = 1 here) bounds it, so a slow
  answer is never waited for;
- the cache: after a failure the cache file holds the same bytes as before.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest

import sidecar as sc
from auth_e2e import ALICE, SCOPES, SIGN_IN

HTTP_TIMEOUT = 1  # httpTimeoutSeconds for every process of this suite
SLOW = 4000  # ms: a latency or slow body well past HTTP_TIMEOUT
# A slow answer must end (with its error) before it could have been read whole.
CUT_SHORT = SLOW / 1000 - 0.5


@dataclass
class Fault:
    """One fault as POST /_admin/faults takes it (endpoint added per step)."""
    name: str
    spec: dict
    lasting: bool = True  # times -1; else it hits one request only

    def body(self, endpoint: str) -> dict:
        return {"endpoint": endpoint, "times": -1 if self.lasting else 1, **self.spec}


FAULTS = {f.name: f for f in [
    Fault("500 once", {"type": "status", "status": 500}, lasting=False),
    Fault("500", {"type": "status", "status": 500, "retry_after": None}),
    Fault("503 retry-after", {"type": "status", "status": 503, "retry_after": 2}),
    Fault("429 retry-after", {"type": "status", "status": 429, "retry_after": 2}),
    Fault("429 once", {"type": "status", "status": 429, "retry_after": 1}, lasting=False),
    Fault("timeout", {"type": "latency", "delay_ms": SLOW}),
    Fault("timeout once", {"type": "latency", "delay_ms": SLOW}, lasting=False),
    Fault("slow body", {"type": "slow_body", "delay_ms": SLOW}),
    Fault("slow body once", {"type": "slow_body", "delay_ms": SLOW}, lasting=False),
    Fault("reset", {"type": "reset"}),
    Fault("reset once", {"type": "reset"}, lasting=False),
    Fault("truncated", {"type": "truncated"}),
    Fault("malformed", {"type": "malformed"}),
    Fault("wrong content type", {"type": "wrong_content_type"}),
    Fault("missing fields", {"type": "missing_fields", "fields": ["access_token"]}),
]}


@dataclass
class Expect:
    """What a fault leads to: a result, or an error whose code is one of `codes`."""
    codes: tuple = ()
    name: str | None = None
    data: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return not self.codes


OK = Expect()
TIMEOUT = Expect((-51002,), "timeout")
NETWORK = Expect((-51001,), "networkError")
MALFORMED = Expect((-51004,), "malformedResponse")
CUT_OFF = Expect((-51001, -51004))  # a truncated answer: a transport failure or a malformed one


# --------------------------------------------------------------------------
# The steps: each prepares a signed-in process, then runs the step under the fault.

class Step:
    """One network step: `prepare` leaves a signed-in process (configured with `config`),
    `run` takes the step and returns the reply."""
    endpoint = ""

    @staticmethod
    def config(mock) -> dict:
        return {}

    @classmethod
    def prepare(cls, launch, mock):
        p = launch(httpTimeoutSeconds=HTTP_TIMEOUT, **cls.config(mock))
        p.sign_in()
        return p


class Refresh(Step):
    """acquireTokenSilent with forceRefresh: the refresh-token grant."""
    endpoint = "token:refresh_token"

    @staticmethod
    def run(p, mock):
        return p.call("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, SIGN_IN)


class DeviceCodePolling(Step):
    """acquireToken flow deviceCode: the device-code grant polled while the user signs in
    (approved at once here, so the first poll after the fault succeeds)."""
    endpoint = "token:device_code"

    @classmethod
    def prepare(cls, launch, mock):
        mock.admin.config(device_code_interval=1)
        return super().prepare(launch, mock)

    @staticmethod
    def run(p, mock):
        rid = p.submit("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"})
        n = p.wait_notification("deviceCode")["params"]
        mock.admin.device("approve", n["userCode"], username=ALICE)
        return p.wait_for(rid, SIGN_IN)


class CodeRedemption(Step):
    """acquireToken through the scripted browser: the authorization-code grant."""
    endpoint = "token:authorization_code"

    @staticmethod
    def run(p, mock):
        return p.call("acquireToken", {"scopes": SCOPES}, SIGN_IN)


class GraphCall(Step):
    """callGraph GET /me with a valid cached token: Graph's answer (the mock's Graph)."""
    endpoint = "graph"

    @staticmethod
    def config(mock) -> dict:
        return {"graphEndpoint": mock.url + "/"}

    @staticmethod
    def run(p, mock):
        return p.call("callGraph", {"path": "/me"}, SIGN_IN)


# Token endpoint steps: one rule for transient failures (protocol/README.md "Transient
# failures"): 429, 5xx and resets are tried up to 3 times, so a fault that hits once ends in
# success; anything lasting ends in its typed error; a time-out has used up the time limit.
TOKEN_STEP = {
    "500 once": OK,
    "429 once": OK,
    "reset once": OK,
    "500": Expect((-50006,), "serverError", {"httpStatus": 500}),
    "503 retry-after": Expect((-50006,), "serverError", {"httpStatus": 503, "retryAfter": 2}),
    "429 retry-after": Expect((-50006,), "serverError", {"httpStatus": 429, "retryAfter": 2}),
    "timeout": TIMEOUT,
    "slow body": TIMEOUT,
    "reset": NETWORK,
    "truncated": CUT_OFF,
    "malformed": MALFORMED,
    "wrong content type": MALFORMED,
    "missing fields": MALFORMED,
}

# Device-code polling retries transient failures (429, 5xx, resets, time-outs) within the
# code's lifetime, so each of them hitting once ends in success; a malformed answer does not
# get better by asking again. A body too slow to read is different: the service redeemed the
# code for that lost answer, so the next poll is refused (invalid_grant, as Entra ID does for
# a used code) and the sign-in ends with that error.
POLLING = {
    "500 once": OK,
    "429 once": OK,
    "timeout once": OK,
    "slow body once": Expect((-50002,), "interactionRequired", {"oauthError": "invalid_grant"}),
    "reset once": OK,
    "malformed": MALFORMED,
    "wrong content type": MALFORMED,
    "missing fields": MALFORMED,
}

# Graph: any HTTP answer is the result (status, headers, body) for the caller to judge;
# 429/503 with a short Retry-After are retried (up to 3 times) then answered as they are;
# no answer in time, or none at all, is an error.
GRAPH = {
    "500": Expect(data={"status": 500}),
    "503 retry-after": Expect(data={"status": 503}),
    "429 once": Expect(data={"status": 200}),
    "timeout": TIMEOUT,
    "slow body": TIMEOUT,
    "reset": NETWORK,
    "truncated": CUT_OFF,
    "malformed": Expect(data={"status": 200}),
    "wrong content type": Expect(data={"status": 200}),
    "missing fields": Expect(data={"status": 200}),
}

CASES = ([(Refresh, f, e) for f, e in TOKEN_STEP.items()]
         + [(CodeRedemption, f, e) for f, e in TOKEN_STEP.items()]
         + [(DeviceCodePolling, f, e) for f, e in POLLING.items()]
         + [(GraphCall, f, e) for f, e in GRAPH.items()])


def _cache_bytes(p) -> bytes:
    with open(p.cache_path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("step,fault,expect", CASES,
                         ids=[f"{s.__name__}-{f}" for s, f, _ in CASES])
def test_fault(launch, mock, step, fault, expect):
    p = step.prepare(launch, mock)
    before = _cache_bytes(p)
    mock.admin.call("faults", {"faults": [FAULTS[fault].body(step.endpoint)]})
    started = time.monotonic()
    reply = step.run(p, mock)
    took = time.monotonic() - started
    sc.check_response(reply)
    hits = mock.admin.counts().get(step.endpoint, 0)
    assert hits >= 1, f"the step never reached {step.endpoint}"
    if expect.success:
        result = sc.assert_result(reply)
        for key, value in expect.data.items():
            assert result.get(key) == value, (key, reply)
    else:
        assert "error" in reply and reply["error"]["code"] in expect.codes, reply
        if expect.name:
            assert reply["error"]["data"]["name"] == expect.name, reply
        for key, value in expect.data.items():
            assert reply["error"]["data"].get(key) == value, (key, reply)
        assert _cache_bytes(p) == before, "a failed step changed the cache file"
    if FAULTS[fault].spec["type"] in ("latency", "slow_body") and FAULTS[fault].lasting:
        assert took < CUT_SHORT, f"the slow answer was waited for ({took:.1f}s)"
    p.ping()  # the process is still there and answering
