"""Issue 35, item 5: the agent and the stdio mode hold the cache key and decrypted refresh
tokens; a crash must not write them to disk in a core file (measured before: a 29 MB core with
the key twice), and a debugger of the same user must not read them. Both start with
`prctl(PR_SET_DUMPABLE, 0)` and `RLIMIT_CORE` 0.

Each process here is started with `ulimit -c unlimited` in a directory of its own, holds a
signed-in account and the key of an encrypted cache, and is killed with SIGABRT: no core file
appears. A control process (`sleep`) killed the same way in the same kind of directory must
leave one, or the machine writes no cores at all and the test is skipped (it would prove
nothing). Swift's backtracer, which catches SIGABRT to print a backtrace, is turned off
(`SWIFT_BACKTRACE=enable=no`): the kernel's default action is the one that writes cores (a
binary without the fix, so started, leaves a 47 MB core here)."""
from __future__ import annotations

import json
import os
import pwd
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import sidecar as sc
from auth_e2e import ALICE, CLIENT_ID, process_env


def unlimited_cores():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def cores_in(directory) -> list[str]:
    return [name for name in os.listdir(directory) if name == "core" or name.startswith("core.")]


def abort_and_wait(process: subprocess.Popen, directory) -> list[str]:
    process.send_signal(signal.SIGABRT)
    assert process.wait(timeout=20) == -signal.SIGABRT
    time.sleep(0.3)  # the kernel writes a core before the parent sees the exit; a margin anyway
    return cores_in(directory)


def core_limit(pid: int) -> str:
    with open(f"/proc/{pid}/limits") as f:
        line = next(line for line in f if line.startswith("Max core file size"))
    return " ".join(line.split()[4:6])


@pytest.fixture
def cores_are_written(tmp_path):
    """Skips unless a dumpable process killed with SIGABRT leaves a core in its directory."""
    with open("/proc/sys/kernel/core_pattern") as f:
        pattern = f.read().strip()
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip(f"core_pattern {pattern!r} does not write into the process's directory")
    control = tmp_path / "control"
    control.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"], cwd=control, preexec_fn=unlimited_cores)
    time.sleep(0.2)
    if not abort_and_wait(sleeper, control):
        pytest.skip("this machine wrote no core for a dumpable process")
    return pattern


NO_BACKTRACER = {"SWIFT_BACKTRACE": "enable=no"}


def encrypted_config(mock, tmp_path) -> tuple[str, dict]:
    key = tmp_path / "keys" / "cache.key"
    key.parent.mkdir(mode=0o700)
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    cache = {"path": str(tmp_path / "cache" / "cache.json"), "encryption": {"keyFile": str(key)}}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"], "cache": cache}))
    return str(config), cache


def test_an_aborted_agent_leaves_no_core(cores_are_written, sidecar_bin, mock, tmp_path, launch):
    config, cache = encrypted_config(mock, tmp_path)
    socket_path = str(tmp_path / "agent" / "agent.sock")
    directory = tmp_path / "agent-cwd"
    directory.mkdir()
    log = open(tmp_path / "agent.log", "wb")
    agent = subprocess.Popen([sidecar_bin, "agent", "--socket", socket_path, "--config", config, "--log-level", "debug"],
                             cwd=directory, env=process_env(mock, tmp_path, env=NO_BACKTRACER), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=log, preexec_fn=unlimited_cores)
    try:
        deadline = time.monotonic() + 10
        while "agent listening" not in (tmp_path / "agent.log").read_text(errors="replace"):
            assert agent.poll() is None and time.monotonic() < deadline, (tmp_path / "agent.log").read_text()
            time.sleep(0.02)
        assert core_limit(agent.pid) == "0 0", "RLIMIT_CORE 0, soft and hard"
        client = launch(initialize=False)  # relayed to the agent: its engine signs in
        client.initialize(cache=cache)
        assert client.sign_in(loginHint=ALICE)["account"]["username"] == ALICE
        assert open(tmp_path / "cache" / "cache.json", "rb").read().startswith(b"auth-sidecar-aes256gcm-v1")
        assert abort_and_wait(agent, directory) == [], "the agent holding the key and tokens dumped a core"
    finally:
        if agent.poll() is None:
            agent.kill()
        log.close()


def test_an_aborted_stdio_process_leaves_no_core(cores_are_written, sidecar_bin, mock, tmp_path):
    config, _ = encrypted_config(mock, tmp_path)
    directory = tmp_path / "stdio-cwd"
    directory.mkdir()
    env = process_env(mock, tmp_path, env={"AUTH_SIDECAR_NO_AGENT": "1", **NO_BACKTRACER})
    process = subprocess.Popen([sidecar_bin, "--config", config], cwd=directory, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=unlimited_cores)
    try:
        process.stdin.write(json.dumps(sc.req("getAccounts", {}, 1)).encode() + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert reply["result"]["accounts"] == [], reply  # the key file read, the cache opened
        assert core_limit(process.pid) == "0 0"
        assert abort_and_wait(process, directory) == [], "the stdio process dumped a core"
    finally:
        if process.poll() is None:
            process.kill()


def test_a_process_of_another_user_is_not_dumpable_so_no_debugger_of_that_user_gets_in(sidecar_bin):
    """The kernel shows a process's dumpable flag in who owns its /proc/PID files: its own user
    while it is dumpable (so that user may ptrace it, read /proc/PID/mem), root once it is not.
    Run as `nobody` (the tests run as root, for whom both look alike): `sleep` shows nobody's
    uid, the stdio mode and the agent root's."""
    if os.geteuid() != 0:
        pytest.skip("starting a process as another user needs root")
    nobody = pwd.getpwnam("nobody")
    home = Path(tempfile.mkdtemp(prefix="auth-sidecar-nobody-"))  # pytest's tmp_path is root's alone
    os.chown(home, nobody.pw_uid, nobody.pw_gid)

    def as_nobody():
        os.setgid(nobody.pw_gid)
        os.setgroups([])
        os.setuid(nobody.pw_uid)

    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_RUNTIME_DIR": str(home), "AUTH_SIDECAR_NO_AGENT": "1"}
    flags = ["--client-id", CLIENT_ID, "--authority", "https://login.microsoftonline.com/organizations", "--cache", "memory"]
    started = {
        "sleep": subprocess.Popen(["sleep", "30"], preexec_fn=as_nobody, env=env),
        "stdio": subprocess.Popen([sidecar_bin, *flags], preexec_fn=as_nobody, env=env, cwd=home, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL),
        "agent": subprocess.Popen([sidecar_bin, "agent", "--socket", str(home / "agent.sock"), *flags], preexec_fn=as_nobody,
                                  env=env, cwd=home, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL),
    }
    try:
        process = started["stdio"]
        process.stdin.write(json.dumps(sc.req("getAccounts", {}, 1)).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["result"]["accounts"] == []  # up and serving
        deadline = time.monotonic() + 10
        while not (home / "agent.sock").exists():
            assert started["agent"].poll() is None and time.monotonic() < deadline, "the agent did not start"
            time.sleep(0.02)
        owners = {}
        for name, p in started.items():
            with open(f"/proc/{p.pid}/status") as f:
                real_uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
            assert real_uid == nobody.pw_uid, name
            owners[name] = os.stat(f"/proc/{p.pid}/mem").st_uid
        assert owners == {"sleep": nobody.pw_uid, "stdio": 0, "agent": 0}, owners
    finally:
        for p in started.values():
            p.kill()
            p.wait()
        shutil.rmtree(home)
