"""Framing: detection, partial and coalesced writes, line endings, LSP headers, oversize."""
import time

import pytest

import sidecar as sc


def ping_bytes(id, framing):
    return sc.frame(sc.req("ping", {}, id), framing)


# ---- detection -------------------------------------------------------------

@pytest.mark.parametrize("prefix", [b" ", b"\n", b"\r\n", b" \t\r\n \n"])
def test_detection_ndjson_after_whitespace(spawn, prefix):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(prefix + ping_bytes(1, sc.NDJSON))
    sc.assert_result(p.next_message(), id=1, result={})


@pytest.mark.parametrize("prefix", [b" ", b"\r\n", b"\n\t "])
def test_detection_lsp_after_whitespace(spawn, prefix):
    p = spawn(framing=sc.LSP)
    p.send_raw(prefix + ping_bytes(1, sc.LSP))
    sc.assert_result(p.next_message(), id=1, result={})


def test_detection_batch_first_byte(spawn):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(b'[{"jsonrpc":"2.0","method":"ping","id":1}]\n')
    m = p.next_message()
    assert isinstance(m, list) and len(m) == 1
    sc.assert_result(m[0], id=1, result={})


def test_detection_lowercase_c_is_ndjson(spawn):
    # Only an upper-case C selects LSP framing (the protocol says so); a lower-case
    # header line is then an NDJSON line that is not JSON.
    p = spawn(framing=sc.NDJSON)
    p.send_raw(b"content-length: 2\r\n\r\n" + ping_bytes(1, sc.NDJSON))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    sc.assert_result(p.next_message(), id=1, result={})


def test_detection_c_then_json_line_then_eof(spawn):
    # `C{...}\n` selects LSP framing, and the line looks like a header (it has a colon);
    # at end of input that unfinished header block still gets a parse error.
    p = spawn(framing=sc.LSP)
    p.send_raw(b'C{"jsonrpc":"2.0","method":"ping","id":1}\n')
    rest, code = p.finish()
    assert len(rest) == 1, rest
    sc.assert_error(rest[0], -32700, id=None, name="parseError")
    assert code == 0


@pytest.mark.parametrize("prefix", [b'{"jsonrpc":"2.0","method":"ping","id":4',
                                    b'{"jsonrpc":"2.0","method":"ping","id":4,"params":null',
                                    b'{"jsonrpc":"2.0","method":"ping","id":4,"params":{"a":true'])
def test_raw_nul_after_number_or_literal(spawn, framing, prefix):
    # jansson used to drop a NUL right after a number or literal: `"id":4\x00,`.
    p = spawn(framing=framing)
    p.send_raw(sc.frame(prefix + b"\x00" + (b"}" if prefix.endswith(b"true") else b"") + b"}", framing))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    p.ping("after")


def test_detection_other_first_byte_is_ndjson(spawn):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(b"hello there\n" + ping_bytes(2, sc.NDJSON))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    sc.assert_result(p.next_message(), id=2, result={})


# ---- partial and coalesced writes ------------------------------------------

def test_byte_by_byte(spawn, framing):
    p = spawn(framing=framing)
    data = ping_bytes("bytewise", framing) + sc.frame(sc.req("diagnostics/echo", {"s": "é✓"}, 2), framing)
    for i in range(len(data)):
        p.send_raw(data[i:i + 1])
        time.sleep(0.0005)
    sc.assert_result(p.wait_for("bytewise"), result={})
    sc.assert_result(p.wait_for(2), result={"s": "é✓"})


def test_several_messages_one_write(spawn, framing):
    p = spawn(framing=framing)
    p.send_raw(b"".join(ping_bytes(i, framing) for i in range(20)))
    for i in range(20):
        sc.assert_result(p.wait_for(i), result={})
    rest, code = p.finish()
    assert rest == [] and code == 0


def test_split_at_every_offset(spawn, framing):
    p = spawn(framing=framing)
    p.ping("first")  # fixes the framing before any split
    template = ping_bytes(0, framing)
    for k in range(1, len(template)):
        data = ping_bytes(k, framing)
        p.send_raw(data[:k])
        time.sleep(0.002)
        p.send_raw(data[k:])
        sc.assert_result(p.next_message(), id=k, result={})


def test_message_and_half_in_one_write(spawn, framing):
    p = spawn(framing=framing)
    a, b = ping_bytes(1, framing), ping_bytes(2, framing)
    p.send_raw(a + b[:7])
    sc.assert_result(p.next_message(), id=1, result={})
    time.sleep(0.05)
    p.send_raw(b[7:])
    sc.assert_result(p.next_message(), id=2, result={})


# ---- NDJSON line endings ---------------------------------------------------

def test_ndjson_crlf(spawn):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(sc.dumps(sc.req("ping", {}, 1)) + b"\r\n" + sc.dumps(sc.req("ping", {}, 2)) + b"\r\n")
    sc.assert_result(p.wait_for(1), result={})
    sc.assert_result(p.wait_for(2), result={})
    # each reply is one line ending "\n" (checked by the strict reader)
    assert p.stdout_bytes().count(b"\n") == 2


def test_ndjson_blank_lines(spawn):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(sc.dumps(sc.req("ping", {}, 1)) + b"\n\n\n   \n\r\n\t\n" + sc.dumps(sc.req("ping", {}, 2)) + b"\n\n")
    sc.assert_result(p.next_message(), id=1, result={})
    sc.assert_result(p.next_message(), id=2, result={})
    rest, code = p.finish()
    assert rest == [], f"blank lines must not be answered: {rest!r}"
    assert code == 0


def test_ndjson_last_line_without_newline_at_eof(spawn):
    p = spawn(framing=sc.NDJSON)
    p.send_raw(ping_bytes(1, sc.NDJSON) + sc.dumps(sc.req("ping", {}, 2)))
    rest, code = p.finish()
    ids = sorted(m["id"] for m in rest)
    assert 1 in ids, rest
    assert code == 0


# ---- LSP headers -----------------------------------------------------------

@pytest.mark.parametrize("headers", [
    [b"Content-Length: {n}", b"Content-Type: application/vscode-jsonrpc; charset=utf-8"],
    [b"Content-Type: application/vscode-jsonrpc; charset=utf-8", b"Content-Length: {n}"],
    [b"content-length: {n}"],
    [b"CONTENT-LENGTH: {n}"],
    [b"Content-length:{n}"],
    [b"Content-Length:   {n}   "],
    [b"cOnTeNt-TyPe: application/json", b"X-Extra: 1", b"content-LENGTH: {n}"],
])
def test_lsp_header_variants(spawn, headers):
    p = spawn(framing=sc.LSP)
    p.ping("first")
    body = sc.dumps(sc.req("ping", {}, 7))
    hdr = b"\r\n".join(h.replace(b"{n}", str(len(body)).encode()) for h in headers)
    p.send_raw(hdr + b"\r\n\r\n" + body)
    sc.assert_result(p.next_message(), id=7, result={})


def test_lsp_first_header_content_type(spawn):
    p = spawn(framing=sc.LSP)
    body = sc.dumps(sc.req("ping", {}, 1))
    p.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    sc.assert_result(p.next_message(), id=1, result={})


def test_lsp_reply_length_counts_bytes(spawn):
    p = spawn(framing=sc.LSP)
    params = {"text": "héllo wörld — 日本語 🎉🎉", "ascii": "plain"}
    p.send(sc.req("diagnostics/echo", params, 1))
    sc.assert_result(p.next_message(), id=1, result=params)
    rest, code = p.finish()
    assert rest == [] and code == 0
    # The strict reader already consumed exactly Content-Length bytes; re-check the whole stream.
    bodies = sc.split_stream(p.stdout_bytes(), sc.LSP)
    assert len(bodies) == 1
    assert sc.strict_loads(bodies[0])["result"] == params


def test_ndjson_non_ascii_round_trip(spawn):
    p = spawn(framing=sc.NDJSON)
    params = {"text": "héllo — 日本語 🎉", "esc": "a\"b\\c\n\t\u0001"}
    p.send(sc.req("diagnostics/echo", params, 1))
    sc.assert_result(p.next_message(), id=1, result=params)


@pytest.mark.parametrize("garbage", [
    b"Garbage without a colon\r\n\r\n",
    b"Content-Length: abc\r\n\r\n",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 99999999999999999999999999\r\n\r\n",
    b"Content-Type: application/json\r\n\r\n",
    b": 12\r\n\r\n",
    b"Content-Length 12\r\n\r\n",
])
def test_lsp_garbage_header_then_valid(spawn, garbage):
    p = spawn(framing=sc.LSP)
    p.ping("first")
    p.send_raw(garbage + ping_bytes("after", sc.LSP))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    sc.assert_result(p.next_message(), id="after", result={})


def test_lsp_body_not_json_then_valid(spawn):
    p = spawn(framing=sc.LSP)
    p.send_raw(sc.frame(b"{not json", sc.LSP) + ping_bytes(2, sc.LSP))
    sc.assert_error(p.next_message(), -32700, id=None, name="parseError")
    sc.assert_result(p.next_message(), id=2, result={})


# ---- oversize --------------------------------------------------------------

def big_echo(id, size):
    """A request whose serialised form is exactly `size` bytes."""
    base = sc.dumps(sc.req("diagnostics/echo", {"s": ""}, id))
    msg = sc.req("diagnostics/echo", {"s": "x" * (size - len(base))}, id)
    assert len(sc.dumps(msg)) == size
    return msg


def test_oversize_then_next_answered(spawn, framing):
    p = spawn("--max-message-size", "1024", framing=framing)
    p.ping("first")
    p.send(big_echo("big", 2000))
    p.send(sc.req("ping", {}, "next"))
    e = sc.assert_error(p.next_message(), -32600, id=None, name="messageTooLarge")
    assert e["data"].get("limit") == 1024, e
    sc.assert_result(p.next_message(), id="next", result={})


def test_oversize_huge_in_pieces(spawn, framing):
    """10 MB against a 1 KiB limit, written in pieces: rejected, no crash, resync."""
    p = spawn("--max-message-size", "1024", framing=framing)
    p.ping("first")
    data = sc.frame(big_echo("huge", 10 * 1024 * 1024), framing)
    for i in range(0, len(data), 1 << 20):
        p.send_raw(data[i:i + (1 << 20)], timeout=20)
    p.send(sc.req("ping", {}, "next"))
    sc.assert_error(p.next_message(20), -32600, id=None, name="messageTooLarge")
    sc.assert_result(p.next_message(), id="next", result={})


def test_oversize_first_message(spawn, framing):
    p = spawn("--max-message-size", "1024", framing=framing)
    p.send(big_echo("big", 1500))
    p.send(sc.req("ping", {}, "next"))
    sc.assert_error(p.next_message(), -32600, id=None, name="messageTooLarge")
    sc.assert_result(p.next_message(), id="next", result={})


def test_lsp_exact_limit_accepted(spawn):
    p = spawn("--max-message-size", "1024", framing=sc.LSP)
    p.send(big_echo("exact", 1024))
    r = p.next_message()
    assert "result" in r and r["id"] == "exact", f"a 1024-byte message is not larger than the 1024 limit: {r!r}"
    p.send(big_echo("over", 1025))
    sc.assert_error(p.next_message(), -32600, id=None, name="messageTooLarge")


def test_ndjson_under_limit_accepted(spawn):
    p = spawn("--max-message-size", "1024", framing=sc.NDJSON)
    p.send(big_echo("under", 1000))
    sc.assert_result(p.next_message(), id="under")
