"""Fixtures for the end-to-end suite: the real binary over real pipes.

The binary: env AUTH_SIDECAR_BIN, else .build/release/auth-sidecar in this repository.
When it is missing the tests are skipped, except when env CI is set: then they fail.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import sidecar as sc  # noqa: E402

# Backstop: every read and write in sidecar.py has its own deadline; this only
# guards against a bug in the suite itself.
TEST_TIME_LIMIT = int(os.environ.get("E2E_TEST_TIME_LIMIT", "90"))


@pytest.fixture(scope="session")
def sidecar_bin() -> str:
    return sc.require_binary()


@pytest.fixture(autouse=True)
def _time_limit():
    with sc.time_limit(TEST_TIME_LIMIT, "an e2e test"):
        yield


@pytest.fixture
def sidecar_env(tmp_path) -> dict:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    env["HOME"] = str(tmp_path / "home")
    os.makedirs(env["HOME"], exist_ok=True)
    # No machine policy unless a test asks for one.
    env["AUTH_SIDECAR_POLICY_FILE"] = str(tmp_path / "no-such-policy.json")
    return env


@pytest.fixture
def spawn(sidecar_bin, sidecar_env, tmp_path):
    """spawn(*extra_args, framing=..., client_id=..., diagnostics=..., env=...) -> sc.Sidecar

    Defaults: --client-id 11111111-2222-3333-4444-555555555555 --enable-diagnostics, NDJSON expected on stdout.
    Every process is killed at teardown.
    """
    procs: list[sc.Sidecar] = []

    def _spawn(*args: str, framing: str = sc.NDJSON, client_id: str | None = "11111111-2222-3333-4444-555555555555",
               diagnostics: bool = True, env: dict | None = None) -> sc.Sidecar:
        argv = [sidecar_bin]
        if client_id is not None:
            argv += ["--client-id", client_id]
        if diagnostics:
            argv.append("--enable-diagnostics")
        argv += list(args)
        if "--cache-protection" not in args:
            # These tests are about the protocol, not the key store: plaintext, chosen, so they
            # need no kernel keyring (Tests/e2e_auth/test_keystore.py tests the key store).
            argv += ["--cache-protection", "plaintext"]
        e = dict(sidecar_env)
        if env:
            e.update(env)
        p = sc.Sidecar(argv, framing=framing, env=e,
                       stderr_path=str(tmp_path / f"stderr-{len(procs)}.log"))
        procs.append(p)
        return p

    yield _spawn
    for p in procs:
        p.kill()


@pytest.fixture(params=sc.FRAMINGS)
def framing(request) -> str:
    return request.param
