"""Injected faults: latency, error statuses, reset connections, malformed/truncated bodies,
slow bodies, a wrong content type, missing fields.

A fault is a dict, added with ``POST /_admin/faults``::

    {"endpoint": "token",        # an endpoint key (see /_admin/counts), one of the totals it
                                 # counts towards (token, issuer:a, issuer:a:token),
                                 # or "*" for every non-admin endpoint
     "type": "status",           # status | latency | reset | malformed | truncated |
                                 # slow_body | wrong_content_type | missing_fields
     "status": 503,              # for type=status (429 and 5xx get Retry-After)
     "retry_after": 1,           # seconds, for type=status; null to omit the header
     "body": {...},              # for type=status: the body instead of an error of Microsoft's
                                 # shape (a string as is, e.g. "" for an empty 400; JSON for an
                                 # object: status 200 with a token response of one's own)
     "delay_ms": 500,            # for type=latency (before the answer) and slow_body (the
                                 # body's bytes spread over this time, after the headers)
     "content_type": "text/html; charset=utf-8",  # for wrong_content_type
     "keep_body": false,         # wrong_content_type: the real answer under the wrong type
                                 # (else 200 with an HTML page, as a captive portal sends)
     "fields": ["access_token"], # for missing_fields: top-level JSON members removed from
                                 # the real answer
     "times": 1}                 # how many requests it hits; -1 = until cleared
"""

import json
import time
import uuid

from .http_util import Response, json_response

TYPES = ("status", "latency", "reset", "malformed", "truncated", "slow_body", "wrong_content_type",
         "missing_fields")
# Faults that replace the answer before the endpoint runs; the others shape its real answer.
REPLACING = ("status", "reset", "malformed", "truncated")
SLOW_BODY_CHUNKS = 10


def validate(fault):
    fault = dict(fault)
    if fault.get("type") not in TYPES:
        raise ValueError("type must be one of %s" % (TYPES,))
    fault.setdefault("endpoint", "*")
    fault.setdefault("times", 1)
    if fault["type"] == "status":
        fault.setdefault("status", 503)
        if "retry_after" not in fault and fault["status"] in (429, 503):
            fault["retry_after"] = 1
    if fault["type"] in ("latency", "slow_body"):
        fault.setdefault("delay_ms", 500)
    if fault["type"] == "wrong_content_type":
        fault.setdefault("content_type", "text/html; charset=utf-8")
        fault.setdefault("keep_body", False)
    if fault["type"] == "missing_fields":
        fault.setdefault("fields", ["access_token"])
        if not isinstance(fault["fields"], list):
            raise ValueError("fields must be a list of member names")
    return fault


def take(state, names):
    """Apply latency faults for a request counted under `names` (see server.counted_names)
    and return the first other fault that hits it, if any."""
    delay, hit = 0.0, None
    with state.lock:
        for fault in list(state.faults):
            if fault["endpoint"] != "*" and fault["endpoint"] not in names:
                continue
            if fault["type"] == "latency":
                delay += fault["delay_ms"] / 1000.0
            elif hit is None:
                hit = fault
            else:
                continue
            if fault["times"] > 0:
                fault["times"] -= 1
                if fault["times"] == 0:
                    state.faults.remove(fault)
    if delay:
        time.sleep(delay)
    return hit


def status_response(fault, key, correlation_id, plain=False):
    """The body a failing Microsoft endpoint (`plain`: a generic issuer) would send."""
    status = int(fault["status"])
    headers = {}
    if fault.get("retry_after") is not None:
        headers["Retry-After"] = str(fault["retry_after"])
    if "body" in fault:  # a string as is (may be empty); an object or array as JSON
        body = fault["body"]
        return Response(status, body if isinstance(body, (str, bytes)) else json.dumps(body), headers=headers)
    if key.startswith("graph"):
        code = "TooManyRequests" if status == 429 else "ServiceUnavailable" if status == 503 \
            else "InternalServerError"
        return json_response({"error": {"code": code, "message": "Injected fault (%d)." % status,
                                        "innerError": {
                                            "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
                                            "request-id": str(uuid.uuid4()),
                                            "client-request-id": correlation_id}}},
                             status, headers)
    error = "temporarily_unavailable" if status in (429, 503) else "server_error"
    if plain:
        return json_response({"error": error, "error_description": "Injected fault (%d)." % status},
                             status, headers)
    stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
    return json_response({
        "error": error,
        "error_description": "AADSTS90033: A transient error has occurred. Please try again.\r\n"
                             "Correlation ID: %s\r\nTimestamp: %s" % (correlation_id, stamp),
        "error_codes": [90033], "timestamp": stamp, "trace_id": correlation_id,
        "correlation_id": correlation_id}, status, headers)


MALFORMED_BODY = b'{"token_type": "Bearer", "access_token": "eyJ0eXAiOiJKV1Qi, <html>'


def full_body_for_truncation():
    return json.dumps({"token_type": "Bearer", "expires_in": 3600,
                       "access_token": "x" * 200}).encode()


CAPTIVE_PORTAL_PAGE = (b"<!DOCTYPE html><html><head><title>Sign in to the network</title></head>"
                       b"<body><form method=post action=/login><input name=user></form></body></html>")


def shape(fault, resp):
    """The real answer `resp` as a shaping fault (wrong_content_type, missing_fields) changes it."""
    if fault["type"] == "wrong_content_type":
        body = resp.body if fault["keep_body"] else CAPTIVE_PORTAL_PAGE
        status = resp.status if fault["keep_body"] else 200
        headers = [(k, v) for k, v in resp.headers if k.lower() != "content-type"]
        return Response(status, body, fault["content_type"], headers)
    if fault["type"] == "missing_fields":
        try:
            document = json.loads(resp.body)
        except ValueError:
            return resp
        if isinstance(document, dict):
            for name in fault["fields"]:
                document.pop(name, None)
        headers = [(k, v) for k, v in resp.headers if k.lower() != "content-type"]
        return Response(resp.status, json.dumps(document), headers=headers)
    return resp


def body_chunks(fault, body):
    """slow_body: the body in pieces, each with the pause to take before sending it."""
    if not body:
        return [(fault["delay_ms"] / 1000.0, b"")]
    size = max(1, -(-len(body) // SLOW_BODY_CHUNKS))
    pieces = [body[i:i + size] for i in range(0, len(body), size)]
    pause = fault["delay_ms"] / 1000.0 / len(pieces)
    return [(pause, piece) for piece in pieces]
