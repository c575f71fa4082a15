"""Memory amplification (issue 19, item 11): no message under the size limit makes the
process grow past 64 MB, whatever its shape. Shapes that parse into many small values are
refused before parsing (protocol/README.md "Transport and framing": at most 1,000 batch
members, 1,000 members per object, 100,000 JSON values per message), each with -32600 and
its `data.limit`; the stream goes on."""
from __future__ import annotations

import json
import random

import pytest

import sidecar as sc

LIMIT = 4 << 20  # the default --max-message-size
PEAK_RSS_KIB = 64 * 1024


def peak_rss_kib(p: sc.Sidecar) -> int:
    with open(f"/proc/{p.proc.pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def request(params) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": "big", "method": "getCurrentAccount", "params": params},
                      separators=(",", ":")).encode()


def fits(make) -> bytes:
    """A message `make(n)` near the size limit: n estimated from a small sample."""
    sample = 10_000
    n = int((LIMIT - 1000) * sample / len(make(sample)) * 0.97)
    while len(body := make(n)) > LIMIT - 100:
        n = n * 9 // 10
    return body


# Each hostile shape, as large as the size limit lets it be, and the limit that refuses it.
SHAPES = {
    "an object of many keys": (lambda n: request({f"k{i}": 1 for i in range(n)}), "objectTooLarge", 1000),
    "a batch of many pings": (lambda n: json.dumps([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(n)])
                              .encode(), "batchTooLarge", 1000),
    "an array of empty arrays": (lambda n: request({"x": [[] for _ in range(n)]}), "messageTooComplex", 100_000),
    "an array of zeros": (lambda n: request({"x": [0] * n}), "messageTooComplex", 100_000),
    "nested small objects": (lambda n: request({"x": [{"a": {}} for _ in range(n // 3)]}), "messageTooComplex", 100_000),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_hostile_shape_is_refused_before_it_is_parsed(spawn, shape):
    make, name, limit = SHAPES[shape]
    p = spawn()
    p.ping("first")
    p.send_raw(fits(make) + b"\n", timeout=20)
    p.send(sc.req("ping", {}, "next"))
    e = sc.assert_error(p.next_message(20), -32600, id=None, name=name)
    assert e["data"].get("limit") == limit, e
    sc.assert_result(p.next_message(), id="next", result={})
    assert peak_rss_kib(p) < PEAK_RSS_KIB, f"{shape}: peak RSS {peak_rss_kib(p)} KiB"


def test_the_largest_accepted_shapes_stay_small(spawn):
    """Just under each limit, the message is read (and answered), and memory stays bounded."""
    p = spawn()
    batch = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1000)]
    p.send_raw(json.dumps(batch).encode() + b"\n", timeout=20)
    replies = p.next_message(20)
    assert isinstance(replies, list) and len(replies) == 1000, str(replies)[:200]
    p.send_raw(request({f"k{i}": 1 for i in range(1000)}) + b"\n")
    sc.assert_error(p.next_message(), -32602, id="big", name="invalidParams")
    p.send_raw(request({"x": [0] * 99_000}) + b"\n")
    sc.assert_error(p.next_message(), -32602, id="big", name="invalidParams")
    assert peak_rss_kib(p) < PEAK_RSS_KIB, f"peak RSS {peak_rss_kib(p)} KiB"


def test_random_shapes_under_the_limit_stay_under_64_mb(spawn):
    """Fuzz-style: random nestings of arrays and objects near the size limit, all in one
    process; whatever each is answered, the process stays up and small."""
    rng = random.Random(19)
    p = spawn()

    def value(budget: int, depth: int):
        kind = rng.choice("aos0" if depth < 6 else "s0")
        if kind == "a":
            width = rng.randint(1, max(1, budget))
            return [value(budget // width, depth + 1) for _ in range(width)]
        if kind == "o":
            width = rng.randint(1, max(1, budget))
            return {f"m{i}": value(budget // width, depth + 1) for i in range(width)}
        return "" if kind == "s" else 0

    for round in range(12):
        body = request(value(rng.choice([2_000, 200_000, 900_000]), 0))[:LIMIT - 100]
        p.send_raw(body + b"\n", timeout=20)
        reply = p.next_message(20)
        assert isinstance(reply, dict) and "error" in reply, (round, str(reply)[:200])
    p.ping("still")
    assert peak_rss_kib(p) < PEAK_RSS_KIB, f"peak RSS {peak_rss_kib(p)} KiB"
