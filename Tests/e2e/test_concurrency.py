"""Concurrent requests, out-of-order replies and cancellation."""
import time

import sidecar as sc


def test_out_of_order_replies(spawn, framing):
    p = spawn(framing=framing)
    p.send_many([sc.req("diagnostics/sleep", {"ms": 500}, "slow"),
                 sc.req("diagnostics/sleep", {"ms": 10}, "fast")])
    first = p.next_message(5)
    sc.assert_result(first, id="fast", result={"sleptMs": 10})
    sc.assert_result(p.next_message(5), id="slow", result={"sleptMs": 500})


def test_sleeps_run_concurrently(spawn, framing):
    p = spawn(framing=framing)
    t0 = time.monotonic()
    p.send_many(sc.req("diagnostics/sleep", {"ms": 1000}, i) for i in range(10))
    for i in range(10):
        sc.assert_result(p.wait_for(i, 15), result={"sleptMs": 1000})
    elapsed = time.monotonic() - t0
    assert elapsed < 5.0, f"10 x 1 s sleeps took {elapsed:.2f}s: requests are not concurrent (serial: 10 s)"


def test_ping_not_blocked_by_sleep(spawn, framing):
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 30000}, "long"))
    t0 = time.monotonic()
    p.ping("quick")
    assert time.monotonic() - t0 < 10.0  # far less than the 30 s sleep
    p.send(sc.note("$/cancelRequest", {"id": "long"}))
    sc.assert_error(p.wait_for("long", 5), -32800, name="requestCancelled")


def test_200_concurrent_requests(spawn, framing):
    p = spawn(framing=framing)
    msgs = []
    for i in range(200):
        if i % 3 == 0:
            msgs.append(sc.req("diagnostics/sleep", {"ms": (i * 7) % 50}, i))
        elif i % 3 == 1:
            msgs.append(sc.req("diagnostics/echo", {"i": i}, i))
        else:
            msgs.append(sc.req("ping", {}, i))
    p.send_many(msgs)
    seen = {}
    for _ in range(200):
        m = p.next_message(10)
        sc.check_response(m)
        assert "result" in m, m
        assert m["id"] not in seen, f"id {m['id']} answered twice"
        seen[m["id"]] = m["result"]
    assert set(seen) == set(range(200))
    for i in range(200):
        if i % 3 == 0:
            assert seen[i] == {"sleptMs": (i * 7) % 50}
        elif i % 3 == 1:
            assert seen[i] == {"i": i}
        else:
            assert seen[i] == {}
    rest, code = p.finish()
    assert rest == [], f"extra replies: {rest[:5]!r}"
    assert code == 0


def test_200_concurrent_as_one_batch(spawn, framing):
    p = spawn(framing=framing)
    p.send([sc.req("diagnostics/sleep", {"ms": i % 20}, i) for i in range(200)])
    m = p.next_message(10)
    assert isinstance(m, list) and len(m) == 200
    for r in m:
        sc.check_response(r)
    assert sorted(r["id"] for r in m) == list(range(200))


def test_cancel_sleeping_request(spawn, framing):
    p = spawn(framing=framing)
    p.send_many([sc.req("diagnostics/sleep", {"ms": 60000}, "victim"),
                 sc.req("diagnostics/sleep", {"ms": 300}, "bystander")])
    time.sleep(0.05)
    t0 = time.monotonic()
    p.send(sc.note("$/cancelRequest", {"id": "victim"}))
    m = p.next_message(15)
    sc.assert_error(m, -32800, id="victim", name="requestCancelled")
    assert time.monotonic() - t0 < 15.0, "cancellation waited for the 60 s sleep"
    sc.assert_result(p.next_message(5), id="bystander", result={"sleptMs": 300})
    p.ping()


def test_cancel_numeric_id(spawn, framing):
    p = spawn(framing=framing)
    p.send(sc.req("diagnostics/sleep", {"ms": 10000}, 12))
    time.sleep(0.05)
    p.send(sc.note("$/cancelRequest", {"id": 12}))
    sc.assert_error(p.next_message(3), -32800, id=12, name="requestCancelled")


def test_cancel_before_sleep_started_reading(spawn, framing):
    """Request and cancel in the same write."""
    p = spawn(framing=framing)
    p.send_many([sc.req("diagnostics/sleep", {"ms": 10000}, "x"), sc.note("$/cancelRequest", {"id": "x"})])
    sc.assert_error(p.next_message(3), -32800, id="x")


def test_cancel_unknown_id_ignored(spawn, framing):
    p = spawn(framing=framing)
    p.send(sc.note("$/cancelRequest", {"id": "nobody"}))
    p.send(sc.note("$/cancelRequest", {"id": 99}))
    p.expect_silence(0.2)
    p.ping()
    rest, code = p.finish()
    assert rest == [] and code == 0


def test_cancel_finished_request_ignored(spawn, framing):
    p = spawn(framing=framing)
    p.ping(5)
    p.send(sc.note("$/cancelRequest", {"id": 5}))
    p.expect_silence(0.2)
    p.ping(6)


def test_cancel_one_of_many(spawn, framing):
    p = spawn(framing=framing)
    p.send_many(sc.req("diagnostics/sleep", {"ms": 400}, i) for i in range(10))
    p.send(sc.note("$/cancelRequest", {"id": 4}))
    replies = {}
    for _ in range(10):
        m = p.next_message(5)
        replies[m["id"]] = m
    sc.assert_error(replies[4], -32800)
    for i in set(range(10)) - {4}:
        sc.assert_result(replies[i], result={"sleptMs": 400})


def test_more_requests_than_the_in_flight_limit_are_all_answered(spawn):
    """The reader waits while 1024 requests run (backpressure); 3000 pipelined sleeps still
    all get their reply exactly once."""
    p = spawn(framing=sc.NDJSON)
    t0 = time.monotonic()
    p.send_raw(b"".join(sc.frame(sc.req("diagnostics/sleep", {"ms": 200}, i), sc.NDJSON) for i in range(3000)),
               timeout=60)
    seen = set()
    for _ in range(3000):
        m = p.next_message(60)
        sc.assert_result(m, result={"sleptMs": 200})
        assert m["id"] not in seen
        seen.add(m["id"])
    assert seen == set(range(3000))
    # 1024 at a time: at least three rounds of 200 ms (all at once would take one).
    assert time.monotonic() - t0 >= 0.55
