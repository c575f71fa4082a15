"""The "Examples" section of the JSON-RPC 2.0 specification, adapted to this server.

Stand-ins: `diagnostics/echo` (with --enable-diagnostics) plays subtract/sum,
`ping` plays get_data, unknown names play foobar/foo.get. The server requires
by-name params, so the by-position examples answer -32602. Each example runs in
both framings; batch replies are compared as sets keyed by id (order is free).
"""
import json

import pytest

import sidecar as sc

POSITIONAL = b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": [42, 23], "id": 1}'
NAMED_1 = b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}'
NAMED_2 = b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}'
NOTE_1 = b'{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}'
NOTE_2 = b'{"jsonrpc": "2.0", "method": "foobar"}'
NOTE_ECHO = b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"a": 1}}'
NO_METHOD = b'{"jsonrpc": "2.0", "method": "foobar", "id": "1"}'
INVALID_JSON = b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]'
INVALID_REQUEST = b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}'
BATCH_INVALID_JSON = (b'[{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"a": [1,2,4]}, "id": "1"},'
                      b'{"jsonrpc": "2.0", "method"]')
MIXED_BATCH = (b'[{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"a": [1,2,4]}, "id": "1"},'
               b'{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
               b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"minuend": 42, "subtrahend": 23}, "id": "2"},'
               b'{"foo": "boo"},'
               b'{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
               b'{"jsonrpc": "2.0", "method": "ping", "id": "9"}]')
ALL_NOTES_BATCH = (b'[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
                   b'{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
                   b'{"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"x": 1}}]')


def pretty(raw: bytes) -> bytes:
    """The spec shows its examples over several lines; LSP framing allows that."""
    try:
        return json.dumps(json.loads(raw), indent=2).encode()
    except ValueError:
        return raw


def send(p: sc.Sidecar, raw: bytes, framing: str) -> None:
    p.send_raw(sc.frame(pretty(raw) if framing == sc.LSP else raw, framing))


def by_id(replies):
    out = {}
    for r in replies:
        sc.check_response(r)
        k = sc.id_key(r["id"])
        assert k not in out or r["id"] is None, f"two replies for id {k}: {replies}"
        out.setdefault(k, []).append(r)
    return out


def test_positional_params_rejected(spawn, framing):
    p = spawn(framing=framing)
    send(p, POSITIONAL, framing)
    sc.assert_error(p.next_message(), -32602, id=1, name="invalidParams")


def test_named_params(spawn, framing):
    p = spawn(framing=framing)
    send(p, NAMED_1, framing)
    sc.assert_result(p.wait_for(3), id=3, result={"subtrahend": 23, "minuend": 42})
    send(p, NAMED_2, framing)
    sc.assert_result(p.wait_for(4), id=4, result={"minuend": 42, "subtrahend": 23})


def test_notifications_get_no_reply(spawn, framing):
    p = spawn(framing=framing)
    send(p, NOTE_1, framing)
    send(p, NOTE_2, framing)
    send(p, NOTE_ECHO, framing)
    p.expect_silence(0.3)
    p.ping()
    rest, code = p.finish()
    assert rest == [] and code == 0


def test_non_existent_method(spawn, framing):
    p = spawn(framing=framing)
    send(p, NO_METHOD, framing)
    sc.assert_error(p.next_message(), -32601, id="1", name="methodNotFound")


def test_invalid_json(spawn, framing):
    p = spawn(framing=framing)
    send(p, INVALID_JSON, framing)
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    p.ping()


def test_invalid_request_object(spawn, framing):
    p = spawn(framing=framing)
    send(p, INVALID_REQUEST, framing)
    sc.assert_error(p.next_message(), -32600, id=None, name="invalidRequest")
    p.ping()


def test_batch_invalid_json(spawn, framing):
    p = spawn(framing=framing)
    send(p, BATCH_INVALID_JSON, framing)
    m = p.next_message()
    assert isinstance(m, dict), f"a batch that is not JSON gets one error object, not an array: {m!r}"
    sc.assert_error(m, -32700, id=None, name="parseError")
    p.ping()


def test_empty_array(spawn, framing):
    p = spawn(framing=framing)
    send(p, b"[]", framing)
    m = p.next_message()
    assert isinstance(m, dict), f"an empty batch gets one error object, not an array: {m!r}"
    sc.assert_error(m, -32600, id=None, name="invalidRequest")
    p.ping()


def test_invalid_batch_one(spawn, framing):
    p = spawn(framing=framing)
    send(p, b"[1]", framing)
    m = p.next_message()
    assert isinstance(m, list) and len(m) == 1, m
    sc.assert_error(m[0], -32600, id=None, name="invalidRequest")


def test_invalid_batch_three(spawn, framing):
    p = spawn(framing=framing)
    send(p, b"[1,2,3]", framing)
    m = p.next_message()
    assert isinstance(m, list) and len(m) == 3, m
    for r in m:
        sc.assert_error(r, -32600, id=None, name="invalidRequest")


def test_mixed_batch(spawn, framing):
    p = spawn(framing=framing)
    send(p, MIXED_BATCH, framing)
    m = p.next_message()
    assert isinstance(m, list), m
    assert len(m) == 5, f"5 responses expected (the notification gets none): {m!r}"
    got = by_id(m)
    assert set(got) == {'"1"', '"2"', "null", '"5"', '"9"'}, got
    sc.assert_result(got['"1"'][0], result={"a": [1, 2, 4]})
    sc.assert_result(got['"2"'][0], result={"minuend": 42, "subtrahend": 23})
    sc.assert_error(got["null"][0], -32600, name="invalidRequest")
    sc.assert_error(got['"5"'][0], -32601, name="methodNotFound")
    sc.assert_result(got['"9"'][0], result={})


def test_all_notification_batch(spawn, framing):
    p = spawn(framing=framing)
    send(p, ALL_NOTES_BATCH, framing)
    p.expect_silence(0.3)
    p.ping()
    rest, code = p.finish()
    assert rest == [], f"a batch of notifications must produce no output at all: {rest!r}"
    assert code == 0
