"""Request ids are echoed exactly (type and value)."""
import pytest

import sidecar as sc

ECHOED = [
    "abc", "", "with space", "ünïcødé-日本-🎉", "1", "null", 'quote"back\\slash',
    0, 1, -1, 42, 2**31, -(2**31) - 1, 2**53 + 1, 2**63 - 1, -(2**63),
]


@pytest.mark.parametrize("rid", ECHOED, ids=[repr(i) for i in ECHOED])
def test_id_echoed_exactly(spawn, framing, rid):
    p = spawn(framing=framing)
    p.send(sc.req("ping", {}, rid))
    m = p.next_message()
    sc.assert_result(m, result={})
    assert type(m["id"]) is type(rid) and m["id"] == rid, f"id {rid!r} came back as {m['id']!r}"
    if isinstance(rid, int):
        # The exact digits on the wire, no float formatting.
        assert (b'"id":%d' % rid) in p.raw[-1].replace(b" ", b""), p.raw[-1]


def test_many_ids_in_one_stream(spawn, framing):
    p = spawn(framing=framing)
    p.send_many(sc.req("ping", {}, rid) for rid in ECHOED)
    got = [p.next_message() for _ in ECHOED]
    assert sorted(sc.id_key(m["id"]) for m in got) == sorted(sc.id_key(i) for i in ECHOED)


def test_null_id_is_a_request(spawn, framing):
    """"id": null is a request (not a notification): answered with id null."""
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"ping","params":{},"id":null}', framing))
    m = p.next_message(5)
    sc.assert_result(m, id=None, result={})


def test_null_id_error_reply(spawn, framing):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"no/such/method","id":null}', framing))
    sc.assert_error(p.next_message(5), -32601, id=None)


@pytest.mark.parametrize("raw_id", [b"1.5", b"-0.25"])
def test_fractional_id_echoed(spawn, framing, raw_id):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"ping","id":' + raw_id + b"}", framing))
    m = p.next_message()
    sc.assert_result(m, result={})
    assert m["id"] == float(raw_id), m


@pytest.mark.parametrize("raw_id", [b"9223372036854775808", b"-9223372036854775809",
                                    b"123456789012345678901234567890"])
def test_id_outside_int64_is_parse_error(spawn, framing, raw_id):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"ping","id":' + raw_id + b"}", framing))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    p.ping()


@pytest.mark.parametrize("raw_id", [b"true", b"false", b"{}", b"[]", b'{"a":1}', b"[1]"])
def test_id_of_wrong_type_is_invalid_request(spawn, framing, raw_id):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":"ping","id":' + raw_id + b"}", framing))
    sc.assert_error(p.next_message(), -32600, id=None, name="invalidRequest")
    p.ping()


def test_invalid_request_with_valid_id_echoes_it(spawn, framing):
    p = spawn(framing=framing)
    p.send_raw(sc.frame(b'{"jsonrpc":"1.0","method":"ping","id":77}', framing))
    sc.assert_error(p.next_message(), -32600, id=77, name="invalidRequest")
    p.send_raw(sc.frame(b'{"jsonrpc":"2.0","method":5,"id":"m"}', framing))
    sc.assert_error(p.next_message(), -32600, id="m", name="invalidRequest")


def test_duplicate_id_in_flight(spawn, framing):
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 500}, 7))
    p.send(sc.req("ping", {}, 7))
    first = p.next_message(5)
    sc.assert_error(first, -32600, id=7)
    sc.assert_result(p.next_message(5), id=7, result={"sleptMs": 500})
    # once finished the id may be used again
    p.ping(7)


def test_same_number_different_type_not_duplicate(spawn, framing):
    """7 and "7" are different ids."""
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 300}, 7))
    p.send(sc.req("ping", {}, "7"))
    sc.assert_result(p.next_message(5), id="7", result={})
    sc.assert_result(p.next_message(5), id=7, result={"sleptMs": 300})


def test_id_reusable_once_answered(spawn, framing):
    """Lock-step reuse of one id: once its reply has been read the id is free again.

    (A server that writes the reply before it forgets the id answers some of these
    with a spurious duplicate-id -32600.)
    """
    p = spawn(framing=framing)
    bad = []
    n = 600
    for i in range(n):
        if i % 4 == 3:
            p.send(sc.req("ping", {}, "same"))
            want = {}
        else:
            p.send(sc.req("diagnostics/sleep", {"ms": 1}, "same"))
            want = {"sleptMs": 1}
        m = p.next_message()
        if m != {"jsonrpc": "2.0", "id": "same", "result": want}:
            bad.append((i, m))
    assert not bad, f"{len(bad)}/{n} lock-step reuses of a finished id were refused, e.g. {bad[:2]!r}"
