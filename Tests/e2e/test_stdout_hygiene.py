"""With --log-level trace, stdout still carries protocol messages and nothing else."""
import time

import sidecar as sc


def traffic(framing):
    out = []
    out.append(sc.frame(sc.req("ping", {}, 1), framing))
    out.append(sc.frame(sc.req("initialize", {"clientId": "11111111-2222-3333-4444-555555555555"}, 2), framing))
    out.append(sc.frame(sc.req("getDeviceInformation", {}, 3), framing))
    out.append(sc.frame(sc.req("getDeviceInformation", {"bad": 1}, 4), framing))
    out.append(sc.frame(sc.req("acquireToken", {}, 5), framing))
    out.append(sc.frame(b'{"broken json', framing))
    out.append(sc.frame(b"[]", framing))
    out.append(sc.frame(b'[1, {"jsonrpc":"2.0","method":"ping","id":6}]', framing))
    out.append(sc.frame(sc.req("diagnostics/echo", {"t": "ünï 🎉\n\"x\""}, 7), framing))
    out.append(sc.frame(sc.req("diagnostics/sleep", {"ms": 5000}, 8), framing))
    out.append(sc.frame(sc.note("$/cancelRequest", {"id": 8}), framing))
    out.append(sc.frame(sc.note("unknown/notification"), framing))
    out.append(sc.frame(sc.req("diagnostics/sleep", {"ms": 100}, 9), framing))
    out.append(sc.frame(sc.req("x" * 3000, {}, 10), framing))  # over --max-message-size 2048
    return out


def test_stdout_only_protocol_with_trace_logging(spawn, framing):
    p = spawn("--log-level", "trace", "--max-message-size", "2048", framing=framing)
    for chunk in traffic(framing):
        p.send_raw(chunk)
        time.sleep(0.01)
    p.close_stdin()
    assert p.wait_exit(10) == 0
    p.drain()
    data = p.stdout_bytes()
    bodies = sc.split_stream(data, framing)  # strict: every byte belongs to a message
    msgs = [sc.strict_loads(b) for b in bodies]
    for m in msgs:
        sc.check_reply(m)
    ids = [m["id"] for m in msgs if isinstance(m, dict)]
    for i in (1, 3, 4, 5, 7, 8, 9):
        assert ids.count(i) == 1, f"id {i}: {ids}"
    assert len(p.stderr_text()) > 0, "--log-level trace wrote nothing to stderr"


def test_stderr_logs_do_not_leak_with_default_level(spawn, framing):
    p = spawn(framing=framing)
    for chunk in traffic(framing):
        p.send_raw(chunk)
    p.close_stdin()
    assert p.wait_exit(10) == 0
    for b in sc.split_stream(p.stdout_bytes(), framing):
        sc.check_reply(sc.strict_loads(b))


def test_version_and_help_exit_zero(sidecar_bin):
    import subprocess
    for flag in ("--version", "--help"):
        r = subprocess.run([sidecar_bin, flag], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        assert r.returncode == 0, (flag, r)
    r = subprocess.run([sidecar_bin, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert b"0.1.0" in r.stdout + r.stderr
