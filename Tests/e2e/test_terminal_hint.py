"""Run by hand at a terminal, the stdio mode says on stderr what it waits for; piped input
(every client) and the verbs get no such line."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import time

# No kernel keyring needed (the cache is beside the point here): plaintext, chosen.
PLAIN = ["--cache-protection", "plaintext"]
HINT = "auth-sidecar: reading JSON-RPC from stdin; see `auth-sidecar --help` or `man auth-sidecar`"


def first_stderr_line(process: subprocess.Popen, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.1)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            data += chunk
    return data.decode().split("\n")[0]


def test_a_terminal_on_stdin_gets_one_hint_line(sidecar_bin, sidecar_env):
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sidecar_bin, "--client-id", "11111111-2222-3333-4444-555555555555", *PLAIN], stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sidecar_env)
    os.close(terminal)
    try:
        assert first_stderr_line(process) == HINT
        os.write(controller, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert process.stdout.readline() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    finally:
        process.kill()
        process.wait()
        os.close(controller)


def test_piped_input_and_verbs_get_no_hint(sidecar_bin, sidecar_env):
    piped = subprocess.run([sidecar_bin, "--client-id", "11111111-2222-3333-4444-555555555555", *PLAIN],
                           input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                           env=sidecar_env, timeout=20)
    assert piped.returncode == 0 and piped.stderr == b"", piped
    controller, terminal = pty.openpty()
    try:
        verb = subprocess.run([sidecar_bin, "accounts", "--no-agent", "--cache", "memory", "--client-id",
                               "11111111-2222-3333-4444-555555555555"], stdin=terminal, capture_output=True,
                              env=sidecar_env, timeout=20)
    finally:
        os.close(terminal)
        os.close(controller)
    assert verb.returncode == 0 and b"reading JSON-RPC" not in verb.stderr, verb
