"""Fixtures for the auth end-to-end suite: the real binary over real pipes, the mock
identity platform over HTTPS on loopback, the scripted browser as $BROWSER.

The binary: env AUTH_SIDECAR_BIN, else .build/release/auth-sidecar in this repository. When it is
missing the tests are skipped, except when env CI is set: then they fail.
One mock per session; `admin.reset()` before every test.
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "mock"))

import sidecar as sc  # noqa: E402  (Tests/e2e/sidecar.py)
from mock_idp.testing import AdminClient, start_mock, stop_mock  # noqa: E402

from auth_e2e import AuthSidecar, Mock  # noqa: E402

TEST_TIME_LIMIT = int(os.environ.get("E2E_AUTH_TEST_TIME_LIMIT", "45"))


@pytest.fixture(scope="session")
def sidecar_bin() -> str:
    return sc.require_binary()


@pytest.fixture(autouse=True)
def _time_limit(request):
    """Each test's time limit: TEST_TIME_LIMIT, or its `time_limit(seconds)` marker."""
    marker = request.node.get_closest_marker("time_limit")
    with sc.time_limit(marker.args[0] if marker else TEST_TIME_LIMIT, "an e2e_auth test"):
        yield


@pytest.fixture(scope="session")
def mock_session(tmp_path_factory):
    url, ca_file, process = start_mock(tmp_path_factory.mktemp("mock-idp"))
    yield Mock(url, ca_file, process, AdminClient(url, ca_file))
    stop_mock(process)


@pytest.fixture
def mock(mock_session):
    mock_session.admin.reset()
    return mock_session


@pytest.fixture
def launch(sidecar_bin, mock, tmp_path):
    """launch(*args, env=..., browser_action=..., initialize=True, cache=..., **config) -> AuthSidecar

    Spawns the binary with SSL_CERT_FILE = the mock's CA and BROWSER = the scripted browser
    (sharing one cookie jar per test), and, unless initialize=False, sends `initialize` with
    the mock's client id, `<mock>/organizations` and knownAuthorities ["127.0.0.1"], the cache
    in `tmp_path/cache/cache.json` unless given. Every process is killed at teardown.
    """
    procs: list[AuthSidecar] = []

    def _launch(*args, env=None, browser_action="complete", initialize=True, cache=None,
                stderr_name=None, **config):
        p = AuthSidecar.start(sidecar_bin, mock, tmp_path, list(args), env=env,
                              browser_action=browser_action,
                              stderr_path=str(tmp_path / (stderr_name or f"stderr-{len(procs)}.log")))
        procs.append(p)
        if initialize:
            p.initialize(cache=cache or str(tmp_path / "cache" / "cache.json"), **config)
        return p

    yield _launch
    for p in procs:
        p.kill()
