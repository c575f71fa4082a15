"""A long-running agent keeps the cache key alive in the kernel keyring (issue #42).

The persistent keyring expires `persistent_keyring_expiry` seconds after its last
`keyctl get_persistent` (3 days by default). An agent holds the key in memory: it renews the
keyring at most every tenth of the expiry (by time, never per request), by a timer and before a
write, checks the key before every encrypted write (one search, issue #47), and stores the key
back, under the cache's lock, when it went missing. Here the expiry is read from a file of the test's own (AUTH_SIDECAR_TEST_KEYRING_EXPIRY:
20 s, so every 2 s) instead of lowering the machine's sysctl; the key is unlinked by hand, as
the keyring's expiry would drop it. Keyring calls are counted with strace when it can trace.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env
from test_agent import Agent
from test_keystore import key_description, keyctl, keyring, no_dbus  # noqa: F401  (keyring: the fixture)

SCOPES = ["User.Read"]
EXPIRY = 20  # seconds: the renewal interval is 2 s


class KeyringAgent(Agent):
    """`auth-sidecar agent` for one cache under `cacheProtection: auto`, no D-Bus (so the kernel
    keyring layer), its keyring calls traced when strace can."""

    def __init__(self, binary, mock, tmp_path, cache, expiry_seconds=EXPIRY):
        expiry = tmp_path / "keyring-expiry"
        expiry.write_text(f"{expiry_seconds}\n")
        self.path = str(tmp_path / "agent" / "agent.sock")
        config_home = tmp_path / "config"
        (config_home / "auth-sidecar").mkdir(parents=True)
        (config_home / "auth-sidecar" / "config.json").write_text(json.dumps({
            "clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
            "cache": {"path": cache}, "cacheProtection": "auto", "scopes": SCOPES}))
        self.env = no_dbus(process_env(mock, tmp_path, env={
            "XDG_CONFIG_HOME": str(config_home), "AUTH_SIDECAR_SOCK": self.path,
            **({"AUTH_SIDECAR_TEST_KEYRING_EXPIRY": str(expiry)} if expiry_seconds else {})}))
        self.trace = str(tmp_path / "keyctl.trace") if shutil.which("strace") else None
        argv = [binary, "agent", "--socket", self.path, "--log-level", "debug"]
        if self.trace:
            argv = ["strace", "-f", "-qq", "-e", "trace=keyctl,add_key", "-o", self.trace, *argv]
        self.log_path = tmp_path / "agent-stderr.log"
        self.stderr = open(self.log_path, "wb")
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self.stderr, env=self.env)
        self.wait_listening(20)

    def stop(self):
        """The agent first: under strace, killing strace alone leaves it running."""
        if self.trace and self.process.poll() is None:
            try:
                with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as f:
                    for child in f.read().split():
                        os.kill(int(child), signal.SIGKILL)
            except OSError:
                pass
        super().stop()

    def keyctl_calls(self) -> int:
        """The agent's keyctl and add_key calls so far (-1: not traced)."""
        if not self.trace:
            return -1
        with open(self.trace) as f:
            return sum(1 for line in f if "keyctl(" in line or "add_key(" in line)

    def verb(self, *args, agent=True) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args, *([] if agent else ["--no-agent"])], env=self.env,
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)


def start_agent(sidecar_bin, mock, tmp_path, keyring, expiry_seconds):  # noqa: F811
    ring, made = keyring
    cache = str(tmp_path / "renew" / "cache.json")
    made.append(key_description(cache))
    agent = KeyringAgent(sidecar_bin, mock, tmp_path, cache, expiry_seconds)
    agent.binary = sidecar_bin
    agent.ring, agent.cache = ring, cache
    return agent


@pytest.fixture
def keyring_agent(sidecar_bin, mock, tmp_path, keyring):  # noqa: F811
    agent = start_agent(sidecar_bin, mock, tmp_path, keyring, EXPIRY)
    yield agent
    agent.stop()


@pytest.fixture
def default_expiry_agent(sidecar_bin, mock, tmp_path, keyring):  # noqa: F811
    """The agent with the machine's keyring expiry (3 days: renewal due every 7.2 h)."""
    agent = start_agent(sidecar_bin, mock, tmp_path, keyring, None)
    yield agent
    agent.stop()


def sign_in_through(agent, launch):
    p = launch(env={**agent.env}, initialize=False)
    p.initialize(cache=agent.cache, cacheProtection="auto", scopes=SCOPES)
    p.sign_in(loginHint=ALICE)
    return p


def key_id(agent) -> str | None:
    found = keyctl("search", agent.ring, "user", key_description(agent.cache), check=False)
    return found.stdout.decode().strip() if found.returncode == 0 else None


def set_aside(agent) -> list[str]:
    return [n for n in os.listdir(os.path.dirname(agent.cache)) if ".undecryptable-" in n]


def test_a_key_unlinked_while_the_agent_runs_is_back_before_its_next_write(keyring_agent, launch):
    agent = keyring_agent
    p = sign_in_through(agent, launch)
    unlinked = key_id(agent)
    assert unlinked, "the sign-in stored the key"
    keyctl("unlink", unlinked, agent.ring)  # what the keyring's expiry does to it
    time.sleep(EXPIRY / 10 + 0.5)  # a check is due

    p.ok("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, timeout=30)  # a write through the agent
    assert key_id(agent), agent.log()
    done = agent.verb("token", agent=False)
    assert done.returncode == 0 and done.stdout.decode().strip(), done.stderr.decode()
    assert set_aside(agent) == []
    assert agent.log().count("stored it back") == 1, agent.log()


def test_the_key_is_checked_before_every_encrypted_write_not_only_when_due(default_expiry_agent, launch):
    """Issue #47 item 13: with the default expiry no renewal is due for hours; the write
    itself checks (one search) and puts the key back."""
    agent = default_expiry_agent
    p = sign_in_through(agent, launch)
    unlinked = key_id(agent)
    assert unlinked, "the sign-in stored the key"
    keyctl("unlink", unlinked, agent.ring)
    p.ok("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, timeout=30)  # at once: no check is due
    assert key_id(agent), agent.log()
    done = agent.verb("token", agent=False)
    assert done.returncode == 0 and done.stdout.decode().strip(), done.stderr.decode()
    assert set_aside(agent) == []
    assert agent.log().count("stored it back") == 1, agent.log()


def test_an_idle_agent_renews_the_keyring_and_puts_the_key_back(keyring_agent, launch):
    agent = keyring_agent
    sign_in_through(agent, launch).kill()  # no client is left: the agent is idle
    keyctl("unlink", key_id(agent), agent.ring)
    deadline = time.monotonic() + 3 * EXPIRY / 10 + 2
    while key_id(agent) is None:
        assert time.monotonic() < deadline, "the agent's timer did not put the key back: " + agent.log()
        time.sleep(0.2)
    done = agent.verb("token", agent=False)
    assert done.returncode == 0, done.stderr.decode()
    assert set_aside(agent) == []


def test_the_agents_keyring_calls_follow_time_not_requests(keyring_agent, launch):
    agent = keyring_agent
    if agent.keyctl_calls() < 0:
        pytest.skip("strace is not installed")
    p = sign_in_through(agent, launch)
    time.sleep(0.5)
    before, started = agent.keyctl_calls(), time.monotonic()
    for _ in range(20):  # 20 encrypted writes
        p.ok("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}, timeout=30)
    for _ in range(20):
        p.silent()
    calls = agent.keyctl_calls() - before
    checks = (time.monotonic() - started) / (EXPIRY / 10) + 1  # how many renewals may have been due
    print(f"{calls} keyring calls over 20 writes and 20 reads in {time.monotonic() - started:.1f} s")
    # one search before each write (issue #47 item 13); renewals by time; none for reads
    assert calls <= 20 + 2 * checks + 4, f"{calls} keyring calls over 40 requests in {time.monotonic() - started:.1f} s"
