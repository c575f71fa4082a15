"""Fixtures: the real auth-sidecar binary and the project's mock identity platform.

The binary: $AUTH_SIDECAR_BIN, else <repo>/.build/release/auth-sidecar. When it is missing
the tests are skipped, unless $CI is set (then they fail). One mock per session, reset
before each test that uses it.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
MOCK_DIR = REPO / "mock"
SCRIPTED_BROWSER = MOCK_DIR / "scripted_browser.py"
CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
APP_ID = "11111111-2222-3333-4444-555555555555"
ALICE = "alice@contoso.com"
BOB = "bob@contoso.com"
TEST_TIME_LIMIT = 40

sys.path.insert(0, str(MOCK_DIR))
sys.path.insert(0, str(REPO / "clients" / "python" / "src"))


def binary_path() -> str:
    return os.environ.get("AUTH_SIDECAR_BIN") or str(REPO / ".build" / "release" / "auth-sidecar")


@pytest.fixture(scope="session")
def sidecar_bin() -> str:
    path = binary_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        reason = "auth-sidecar binary not found at %s (set AUTH_SIDECAR_BIN)" % path
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(autouse=True)
def _time_limit():
    """Backstop: every client call in the tests has its own timeout too."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise TimeoutError("test exceeded %ss" % TEST_TIME_LIMIT)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIME_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _no_agent_of_the_user(monkeypatch):
    """The clients under test reach the user's own agent only where a test says so."""
    monkeypatch.delenv("AUTH_SIDECAR_SOCK", raising=False)


@pytest.fixture
def base_env(tmp_path) -> dict:
    """A clean environment for the sidecar: its own HOME / cache dir, no machine policy, and
    standalone (never forwarding to an agent the user may be running)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SCRIPTED_BROWSER_") and k != "AUTH_SIDECAR_SOCK"}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # The clients' tests need no kernel keyring: the cache is plaintext, chosen in the default
    # configuration file (Tests/e2e_auth/test_keystore.py tests the key store).
    config = tmp_path / "plaintext-config.json"
    config.write_text('{"cacheProtection": "plaintext"}')
    env.update(HOME=str(home), XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
               AUTH_SIDECAR_POLICY_FILE=str(tmp_path / "no-such-policy.json"), AUTH_SIDECAR_NO_AGENT="1",
               AUTH_SIDECAR_CONFIG=str(config))
    return env


class Agent:
    """A running ``auth-sidecar agent`` on ``socket``, in a directory of its own (0700, short
    enough for a socket path); its stderr lines in ``log``."""

    def __init__(self, binary: str, env: dict, args):
        self.dir = tempfile.mkdtemp(prefix="as-agent-")
        self.socket = os.path.join(self.dir, "agent.sock")
        self.log: list = []
        self.process = subprocess.Popen([binary, "agent", "--socket", self.socket, *args], env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        listening = threading.Event()

        def read_stderr():
            for line in self.process.stderr:
                self.log.append(line.decode("utf-8", "replace"))
                if b"agent listening" in line:
                    listening.set()
            listening.set()  # exited

        threading.Thread(target=read_stderr, daemon=True).start()
        if not listening.wait(15) or self.process.poll() is not None:
            self.stop()
            raise RuntimeError("the agent did not start:\n" + "".join(self.log))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def start_agent(sidecar_bin):
    """start_agent(env, *args) -> Agent; every agent is stopped at teardown."""
    agents = []

    def start(env: dict, *args: str) -> Agent:
        agents.append(Agent(sidecar_bin, env, args))
        return agents[-1]

    yield start
    for agent in agents:
        agent.stop()


class Mock:
    def __init__(self, url, ca_file, process, admin):
        self.url, self.ca_file, self.process, self.admin = url, ca_file, process, admin


@pytest.fixture(scope="session")
def mock_session(tmp_path_factory, sidecar_bin):
    from mock_idp.testing import AdminClient, start_mock, stop_mock
    url, ca_file, process = start_mock(tmp_path_factory.mktemp("mock-idp"))
    yield Mock(url, ca_file, process, AdminClient(url, ca_file))
    stop_mock(process)


@pytest.fixture
def mock(mock_session):
    mock_session.admin.reset()
    return mock_session


@pytest.fixture
def auth_env(base_env, mock, tmp_path):
    """env(action="complete") -> the environment for a sidecar signing in against the mock
    through the scripted browser (SCRIPTED_BROWSER_ACTION = action)."""
    def make(action: str = "complete", **extra) -> dict:
        env = dict(base_env)
        env.update(SSL_CERT_FILE=mock.ca_file, BROWSER=str(SCRIPTED_BROWSER), SCRIPTED_BROWSER_CA=mock.ca_file,
                   SCRIPTED_BROWSER_COOKIES=str(tmp_path / "cookies.txt"),
                   SCRIPTED_BROWSER_LOG=str(tmp_path / "browser.log"), SCRIPTED_BROWSER_ACTION=action)
        env.update(extra)
        return env
    return make


@pytest.fixture
def auth_config(mock, tmp_path) -> dict:
    """initialize keys for the mock: client id, <mock>/common, the cache in tmp_path."""
    return dict(client_id=CLIENT_ID, authority=mock.url + "/common", known_authorities=["127.0.0.1"],
                graph_endpoint=mock.url + "/", cache=str(tmp_path / "cache.json"),
                cache_protection="plaintext")  # chosen: the tests must not depend on a kernel keyring
