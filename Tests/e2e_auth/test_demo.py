"""scripts/demo.py tells the session one plain line per step; --verbose adds the exchanges."""
from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(REPO, "scripts", "demo.py")


def run_demo(binary: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTH_SIDECAR_")}
    return subprocess.run([sys.executable, DEMO, *args, binary], capture_output=True, text=True, timeout=60, env=env)


def test_demo_reads_like_a_story(sidecar_bin):
    done = run_demo(sidecar_bin)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("demo: ") and "{" not in line for line in lines), lines
    story = "\n".join(lines)
    for step in ("nobody is signed in yet", "signed in as alice@contoso.com (Alice Example)", "token valid until",
                 "from the cache", "Graph /me says Alice Example <alice@contoso.com> (HTTP 200)",
                 "signed out alice@contoso.com", "the previous account was alice@contoso.com"):
        assert step in story, (step, story)


def test_demo_verbose_shows_the_exchanges(sidecar_bin):
    done = run_demo(sidecar_bin, "--verbose")
    assert done.returncode == 0, done.stderr
    assert '--> {"jsonrpc": "2.0", "id": 3, "method": "acquireToken"' in done.stdout
    assert '<-- {"jsonrpc": "2.0", "id": 5, "result": {"status": 200' in done.stdout
