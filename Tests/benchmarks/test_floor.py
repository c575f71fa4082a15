"""benchlib.floor: the static Swift hello world figure 1 is divided by."""
import os
import shutil
import stat
import subprocess

import pytest

from benchlib import floor


def test_no_compiler_is_said(monkeypatch, tmp_path):
    monkeypatch.setattr(floor, "swiftc", lambda: None)
    with pytest.raises(RuntimeError, match="no swiftc"):
        floor.build_hello(str(tmp_path))


def test_the_hello_world_answers_one_line(tmp_path):
    # what hello_fresh expects of the built program, with a stand-in for it (no compiler run)
    fake = tmp_path / "hello"
    fake.write_text("#!/bin/sh\nread line\necho '{}'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert 0 < floor.hello_fresh(str(fake)) < 10


@pytest.mark.skipif(not floor.swiftc() or not shutil.which("clang") and not os.access(
    "/opt/swift/usr/bin/clang", os.X_OK), reason="needs swiftc and clang")
def test_builds_a_lean_static_binary(tmp_path):
    exe = floor.build_hello(str(tmp_path))
    assert floor.hello_fresh(exe) > 0
    loaded = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    assert "libswift" not in loaded and "libstdc++" not in loaded, loaded  # as the sidecar
