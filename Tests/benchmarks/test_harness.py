"""benchlib.harness: percentiles, the machine line, reading lines from a pipe."""
import os
import re
import time

import pytest

from benchlib.harness import LineReader, machine, missing_binary, pct, reap


def test_pct_nearest_rank():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert pct(values, 50) == 3.0                        # the median of an odd count
    assert pct(values, 0) == 1.0 and pct(values, 100) == 5.0
    assert pct(list(range(1, 101)), 90) == 90            # round(0.9 * 99) = 89 → the 90th value
    assert pct(list(range(50)), 90) == 44                # what verbs_bench's p90 printed for 50 runs
    assert pct([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        pct([], 50)


def test_machine_line():
    assert re.fullmatch(r".+, \d+ CPUs, \S+ \S+, \d{4}-\d\d-\d\d", machine())


def test_missing_binary(tmp_path):
    assert "no executable at" in missing_binary(str(tmp_path / "nope"))
    assert missing_binary("/bin/sh") is None


def test_line_reader_splits_lines_across_reads():
    r, w = os.pipe()
    try:
        reader = LineReader(r)
        os.write(w, b'{"a":1}\n{"b"')
        assert reader.line(time.monotonic() + 5) == b'{"a":1}'
        os.write(w, b':2}\n\n')
        assert reader.line(time.monotonic() + 5) == b'{"b":2}'
        with pytest.raises(TimeoutError):
            reader.line(time.monotonic() + 0.05)
        os.close(w)
        w = -1
        with pytest.raises(EOFError):
            reader.line(time.monotonic() + 5)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_reap_returns_the_exit_code():
    import subprocess
    proc = subprocess.Popen(["sh", "-c", "exit 3"])
    code, maxrss = reap(proc)
    assert code == 3 and maxrss >= 0
    assert reap(proc)[0] == 3                            # already reaped: the same answer
