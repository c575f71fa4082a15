"""Mutation test: thousands of malformed or truncated messages in both framings.

Valid messages are mutated with a seeded RNG (truncation, byte flips, random
inserts, deleted quotes/braces, invalid UTF-8, deep nesting, huge numbers,
duplicate keys, control bytes, wrong Content-Length, broken LSP headers, mixed
valid/invalid) and streamed through a few long-lived processes. After every
mutant comes a sentinel `ping` with a known id.

Assertions:
- the process never dies or hangs: it answers until EOF and then exits 0;
- every byte of stdout is a well-formed reply (jsonrpc "2.0", id, exactly one of
  result/error, integer code, string message, data.name);
- NDJSON, and LSP mutants whose frame is intact (the mutation is in the body and
  Content-Length is right): the sentinel after the mutant gets exactly one
  reply, `{"result": {}}`;
- LSP mutants that break the framing (wrong Content-Length, damaged header) may
  swallow what follows. After those we send padding (longer than any
  Content-Length we ever forge) + sentinel A + padding + sentinel B: A may be
  lost (if it is answered, the answer must be exact), B must be answered exactly.

MUTATION_SEED (env) changes the seed; MUTANTS_PER_PROCESS the volume.
"""
from __future__ import annotations

import json
import os
import random
import time

import pytest

import sidecar as sc

SEED = int(os.environ.get("MUTATION_SEED", "20250611"))
PROCESSES_PER_FRAMING = 3
MUTANTS_PER_PROCESS = int(os.environ.get("MUTANTS_PER_PROCESS", "2000"))  # 2 x 3 x 2000 = 12,000
MAX_FORGED_LENGTH = 512
PAD = b"x" * (MAX_FORGED_LENGTH + 88) + b"\r\n\r\n"

BASE = [
    {"jsonrpc": "2.0", "method": "ping", "params": {}, "id": 1},
    {"jsonrpc": "2.0", "method": "ping", "id": "abc"},
    {"jsonrpc": "2.0", "method": "getDeviceInformation", "params": {}, "id": 2},
    {"jsonrpc": "2.0", "method": "diagnostics/echo",
     "params": {"a": [1, 2.5, -3e10, True, False, None], "s": "h\u00e9llo \u65e5\u672c \U0001F389",
                "e": "q\"b\\s/\n\t\u0001", "o": {"k": {"k2": []}}}, "id": 3},
    {"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"n": 9223372036854775807}, "id": -9223372036854775808},
    {"jsonrpc": "2.0", "method": "initialize", "params": {"clientId": "11111111-2222-3333-4444-555555555555", "scopes": ["user.read"]}, "id": 4},
    {"jsonrpc": "2.0", "method": "acquireToken", "params": {"scopes": ["user.read"], "promptType": "login"}, "id": 5},
    {"jsonrpc": "2.0", "method": "no/such/method", "params": {"x": 1}, "id": 6},
    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}},
    {"jsonrpc": "2.0", "method": "someNotification", "params": {"v": [1, 2, 3]}},
    [{"jsonrpc": "2.0", "method": "ping", "id": 7},
     {"jsonrpc": "2.0", "method": "diagnostics/echo", "params": {"b": 1}, "id": 8},
     {"jsonrpc": "2.0", "method": "note"}],
    {"jsonrpc": "2.0", "id": 9, "result": {}},
    {"jsonrpc": "2.0", "method": "getDeviceInformation", "params": {"bogus": 1}, "id": 10},
]
BASE_BYTES = [sc.dumps(m) for m in BASE]
assert all(len(b) < 400 for b in BASE_BYTES)

INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc0\xaf", b"\xc3\x28", b"\xed\xa0\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80",
                b"\xf4\x90\x80\x80", b"\x80", b"\xe0\x80\xaf"]
HUGE_NUMBERS = [b"1e999999", b"-1e999999", b"99999999999999999999999999999", b"9223372036854775808",
                b"-9223372036854775809", b"1" * 5000, b"0." + b"0" * 4000 + b"1", b"1e-400", b"-0", b"1E+2",
                b"01", b"1.", b".5", b"+1", b"0x10", b"NaN", b"Infinity", b"-Infinity"]
CONTROL = [b"\x00", b"\x01", b"\x1f", b"\x7f", b"\x0b", b"\x0c", b"\r"]
TOKENS = [b"null", b"true", b"false", b"{}", b"[]", b'""', b"0", b'"2.0"', b"2.0", b'"\\ud800"', b'"\\u00"',
          b'"\\x41"', b"tru", b"nul", b"'single'", b"/*c*/", b",", b":", b"]", b"}", b"[", b"{"]


def _pos(rng, data):
    return rng.randrange(len(data) + 1)


def m_truncate(rng, d):
    return d[:rng.randrange(len(d))]


def m_flip(rng, d):
    d = bytearray(d)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(d))
        d[i] ^= rng.randint(1, 255)
    return bytes(d)


def m_insert_random(rng, d):
    i = _pos(rng, d)
    return d[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + d[i:]


def _delete_one_of(rng, d, chars):
    idx = [i for i, c in enumerate(d) if c in chars]
    if not idx:
        return m_truncate(rng, d)
    for _ in range(rng.randint(1, 2)):
        if not idx:
            break
        i = idx.pop(rng.randrange(len(idx)))
        d = d[:i] + b"\x00" + d[i + 1:]
    return d.replace(b"\x00", b"")


def m_delete_quote(rng, d):
    return _delete_one_of(rng, d, b'"')


def m_delete_brace(rng, d):
    return _delete_one_of(rng, d, b"{}[]")


def m_invalid_utf8(rng, d):
    # inside a string when there is one, anywhere otherwise
    quotes = [i for i, c in enumerate(d) if c == ord('"')]
    i = rng.choice(quotes) + 1 if quotes and rng.random() < 0.8 else _pos(rng, d)
    return d[:i] + rng.choice(INVALID_UTF8) + d[i:]


def m_deep_nesting(rng, d):
    n = rng.choice([511, 512, 513, 600, 1000, 5000]) if rng.random() < 0.97 else 100000
    kind = rng.randrange(5)
    if kind == 0:
        return b"[" * n + b"]" * n
    if kind == 1:
        return b'{"jsonrpc":"2.0","method":"diagnostics/echo","params":{"a":' + b"[" * n + b"]" * n + b'},"id":11}'
    if kind == 2:
        return b'{"a":' * n + b"1" + b"}" * n
    if kind == 3:
        return b"[" * n  # unbalanced
    return b'{"jsonrpc":"2.0","method":"ping","id":' + b"[" * n + b"]" * n + b"}"


def m_huge_number(rng, d):
    num = rng.choice(HUGE_NUMBERS)
    kind = rng.randrange(3)
    if kind == 0:
        return b'{"jsonrpc":"2.0","method":"ping","id":' + num + b"}"
    if kind == 1:
        return b'{"jsonrpc":"2.0","method":"diagnostics/echo","params":{"n":' + num + b'},"id":12}'
    digits = [i for i, c in enumerate(d) if 48 <= c <= 57]
    if not digits:
        return d + num
    i = rng.choice(digits)
    return d[:i] + num + d[i + 1:]


def m_duplicate_key(rng, d):
    kind = rng.randrange(3)
    if kind == 0:
        return d.replace(b'"jsonrpc":"2.0"', b'"jsonrpc":"2.0","jsonrpc":"2.0"', 1)
    if kind == 1:
        return d.replace(b'"id":', b'"id":1,"id":', 1)
    return d.replace(b'"method":', b'"method":"ping","method":', 1)


def m_control(rng, d):
    i = _pos(rng, d)
    return d[:i] + rng.choice(CONTROL) + d[i:]


def m_token(rng, d):
    i = _pos(rng, d)
    j = min(len(d), i + rng.randint(0, 6))
    return d[:i] + rng.choice(TOKENS) + d[j:]


def m_slice_dup(rng, d):
    i = _pos(rng, d)
    j = min(len(d), i + rng.randint(1, 40))
    k = _pos(rng, d)
    return d[:k] + d[i:j] + d[k:]


def m_mixed(rng, d):
    other = rng.choice(BASE_BYTES)
    kind = rng.randrange(3)
    if kind == 0:
        return other + d[:rng.randrange(len(d))]          # valid then truncated, same message
    if kind == 1:
        return d[:rng.randrange(len(d))] + other          # truncated then valid
    return other + b" " + other                            # two values in one message


def m_version(rng, d):
    return d.replace(b'"2.0"', rng.choice([b'"2"', b"2.0", b"null", b'"1.0"', b'"2.0 "', b'"2.00"']), 1)


BODY_MUTATIONS = [m_truncate, m_flip, m_insert_random, m_delete_quote, m_delete_brace, m_invalid_utf8,
                  m_deep_nesting, m_huge_number, m_duplicate_key, m_control, m_token, m_slice_dup, m_mixed,
                  m_version]


def mutate_body(rng) -> bytes:
    base = rng.choice(BASE_BYTES)
    while True:
        d = base
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            d = rng.choice(BODY_MUTATIONS)(rng, d if d else base)
        if d != base:
            return d


def broken_lsp_frame(rng) -> bytes:
    """An LSP frame whose framing itself is wrong (Content-Length never above MAX_FORGED_LENGTH)."""
    body = rng.choice(BASE_BYTES)
    if rng.random() < 0.3:
        body = mutate_body(rng)[:MAX_FORGED_LENGTH]
    n = len(body)
    kind = rng.randrange(14)
    if kind == 0:   # Content-Length too large
        return b"Content-Length: %d\r\n\r\n" % min(MAX_FORGED_LENGTH, n + rng.randint(1, 64)) + body
    if kind == 1:   # Content-Length too small
        return b"Content-Length: %d\r\n\r\n" % max(0, n - rng.randint(1, 64)) + body
    if kind == 2:   # Content-Length zero
        return b"Content-Length: 0\r\n\r\n" + body
    if kind == 3:   # misspelt header name
        name = rng.choice([b"Content-Lenght", b"Content_Length", b"ContentLength", b"Content-Length-X",
                           b"X-Content-Length", b"Content-Type"])
        return name + b": %d\r\n\r\n" % n + body
    if kind == 4:   # no colon / empty name / space before colon
        return rng.choice([b"Content-Length %d", b": %d", b"Content-Length : %d", b"Content-Length=%d"]) % n \
            + b"\r\n\r\n" + body
    if kind == 5:   # non-numeric or odd value
        v = rng.choice([b"abc", b"-1", b"-0x10", b"1e2", b"12.5", b"", b" ", b"0x20", b"+%d" % n,
                        b"%d %d" % (n, n), b"x%d" % n,
                        b"99999999999999999999999999"])
        return b"Content-Length: " + v + b"\r\n\r\n" + body
    if kind == 6:   # header not terminated by an empty line
        return b"Content-Length: %d\r\n" % n + body
    if kind == 7:   # bare LF line endings
        return b"Content-Length: %d\n\n" % n + body
    if kind == 8:   # truncated header
        h = b"Content-Length: %d\r\n\r\n" % n
        return h[:rng.randrange(1, len(h))]
    if kind == 9:   # frame cut inside the body (the rest never comes)
        return b"Content-Length: %d\r\n\r\n" % n + body[:rng.randrange(n)]
    if kind == 10:  # random bytes inside the header
        h = b"Content-Length: %d\r\n\r\n" % n
        i = rng.randrange(len(h))
        junk = bytes(rng.choice([c for c in range(256) if not 48 <= c <= 57]) for _ in range(rng.randint(1, 4)))
        return h[:i] + junk + h[i:] + body  # no digits: the length never grows past the bound
    if kind == 11:  # two different Content-Length headers
        return b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, max(0, n - 5)) + body
    if kind == 12:  # invalid UTF-8 / NUL in the header
        return b"Content-Length: %d\r\nX-Bad: \xff\xfe\x00\r\n\r\n" % n + body
    # garbage line before a good header
    return bytes(rng.randrange(33, 127) for _ in range(rng.randint(1, 30))) + b"\r\nContent-Length: %d\r\n\r\n" % n + body


def sentinel(i: int, tag: str = "") -> tuple[str, dict]:
    sid = f"sentinel-{i}{tag}"
    return sid, sc.req("ping", {}, sid)


def build_ndjson(rng, count):
    """Return (stream, required sentinel ids, optional sentinel ids, mutant by sentinel id)."""
    parts, required, where = [], [], {}
    sid, msg = sentinel(-1)
    parts.append(sc.frame(msg, sc.NDJSON))
    required.append(sid)
    for i in range(count):
        mutant = mutate_body(rng).replace(b"\n", b" ")
        parts.append(mutant + rng.choice([b"\n", b"\n", b"\r\n"]))
        sid, msg = sentinel(i)
        parts.append(sc.frame(msg, sc.NDJSON))
        required.append(sid)
        where[sid] = mutant
    return b"".join(parts), required, [], where


def build_lsp(rng, count):
    parts, required, optional, where = [], [], [], {}
    sid, msg = sentinel(-1)
    parts.append(sc.frame(msg, sc.LSP))
    required.append(sid)
    for i in range(count):
        if rng.random() < 0.6:
            mutant = sc.frame(mutate_body(rng), sc.LSP)   # framing intact
            parts.append(mutant)
            sid, msg = sentinel(i)
            parts.append(sc.frame(msg, sc.LSP))
            required.append(sid)
        else:
            mutant = broken_lsp_frame(rng)
            sa, ma = sentinel(i, "a")
            sid, msg = sentinel(i, "b")
            parts += [mutant, PAD, sc.frame(ma, sc.LSP), PAD, sc.frame(msg, sc.LSP)]
            optional.append(sa)
            required.append(sid)
        where[sid] = mutant
    return b"".join(parts), required, optional, where


@pytest.mark.parametrize("proc_index", range(PROCESSES_PER_FRAMING))
def test_mutants(spawn, framing, proc_index):
    rng = random.Random(f"{SEED}-{framing}-{proc_index}")
    build = build_ndjson if framing == sc.NDJSON else build_lsp
    stream, required, optional, where = build(rng, MUTANTS_PER_PROCESS)

    p = spawn(framing=framing)
    t0 = time.monotonic()
    # Write in chunks of random sizes so messages also straddle reads.
    pos = 0
    while pos < len(stream):
        n = rng.choice([1, 7, 100, 1000, 4096, 65536])
        p.send_raw(stream[pos:pos + n], timeout=30)
        pos += n
    p.close_stdin()
    msgs = p.drain(timeout=60)
    code = p.wait_exit(10)
    elapsed = time.monotonic() - t0

    seen: dict[str, list] = {}
    for m in msgs:
        sc.check_reply(m)
        for r in (m if isinstance(m, list) else [m]):
            if isinstance(r.get("id"), str) and r["id"].startswith("sentinel-"):
                seen.setdefault(r["id"], []).append(r)

    problems = []
    for sid in required:
        got = seen.get(sid, [])
        if len(got) != 1 or got[0] != {"jsonrpc": "2.0", "id": sid, "result": {}}:
            problems.append(f"{sid}: replies {got!r} after mutant {where.get(sid, b'')[:160]!r}")
    for sid in optional:
        got = seen.get(sid, [])
        if len(got) > 1 or (got and got[0] != {"jsonrpc": "2.0", "id": sid, "result": {}}):
            problems.append(f"{sid} (optional): replies {got!r}")
    assert code == 0, f"exit code {code} at EOF; stderr tail: {p.stderr_tail()!r}"
    assert not problems, (f"{len(problems)} sentinel problems (seed {SEED}, {framing}, process {proc_index}):\n"
                          + "\n".join(problems[:15]))
    assert elapsed < 60, f"{MUTANTS_PER_PROCESS} mutants took {elapsed:.1f}s"
