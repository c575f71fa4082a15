"""The clients connected to a running ``auth-sidecar agent`` on its Unix socket (no process of
their own): two connections sharing one sign-in, device codes routed to the connection that
asked, sockets that are not the user's own refused, $AUTH_SIDECAR_SOCK, the agent stopping."""
from __future__ import annotations

import asyncio
import os
import socket
import tempfile

import pytest

import auth_sidecar as a
from conftest import ALICE, BOB, CLIENT_ID

QUICK = 10.0
SIGN_IN = 25.0
SCOPES = ["User.Read"]


@pytest.fixture
def mock_agent(start_agent, auth_env):
    """An agent signing in against the mock (the scripted browser is the agent's $BROWSER)."""
    return start_agent(auth_env(), "--cache", "memory", "--client-id", CLIENT_ID)


@pytest.fixture
def config(auth_config) -> dict:
    """initialize keys for the mock; the cache is the agent's (in memory)."""
    return {k: v for k, v in auth_config.items() if k != "cache"}


@pytest.fixture
def foreign_dir():
    """A directory anyone may enter (0777), as someone else's setup could be."""
    path = tempfile.mkdtemp(prefix="as-open-")
    os.chmod(path, 0o777)
    yield path
    os.chmod(path, 0o700)
    for name in os.listdir(path):
        os.unlink(os.path.join(path, name))
    os.rmdir(path)


def listening_socket(path: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    server.setblocking(False)
    return server


def assert_never_connected(server: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        server.accept()


def test_two_connections_share_one_sign_in(mock_agent, config, mock):
    with a.SidecarClient(socket=mock_agent.socket, timeout=QUICK, **config) as first, \
            a.SidecarClient(socket=mock_agent.socket, timeout=QUICK, **config) as second:
        assert first.socket == mock_agent.socket and first.binary is None
        assert first.pid is None and first.returncode is None and first.stderr_tail == ""
        assert first.server_info.configuration["authority"] == config["authority"]

        token = first.acquire_token(SCOPES, timeout=SIGN_IN)  # the agent runs the scripted browser
        assert token.account.username == ALICE and not token.from_cache
        silent = second.acquire_token_silent(SCOPES)
        assert silent.from_cache and silent.access_token == token.access_token
        assert second.get_accounts() == [token.account]
        assert mock.admin.count("token:authorization_code") == 1 and mock.admin.count("token") == 1

        assert first.close() is None  # the connection only: the agent and the other session go on
        assert mock_agent.process.poll() is None
        assert second.call_graph("/me").body["userPrincipalName"] == ALICE
        with pytest.raises(a.SidecarExitedError, match="closed the connection"):
            first.ping()


def test_device_code_reaches_the_connection_that_asked(mock_agent, config, mock):
    seen_by = {"first": [], "second": []}
    with a.SidecarClient(socket=mock_agent.socket, timeout=SIGN_IN, on_device_code=seen_by["first"].append,
                         **config) as first, \
            a.SidecarClient(socket=mock_agent.socket, timeout=SIGN_IN, on_device_code=seen_by["second"].append,
                            **config) as second:
        # both connections number their requests alike: only the agent's routing tells them apart
        asked = []

        def approve_bob(code: a.DeviceCode) -> None:
            asked.append(code)
            mock.admin.device("approve", code.user_code, username=BOB)

        assert first.acquire_token(SCOPES, flow="deviceCode", on_device_code=approve_bob).account.username == BOB
        assert len(asked) == 1 and asked[0].user_code in asked[0].message
        assert second.ping() == {} and seen_by == {"first": [], "second": []}

        def approve_alice(code: a.DeviceCode) -> None:
            asked.append(code)
            mock.admin.device("approve", code.user_code, username=ALICE)

        assert second.acquire_token(SCOPES, flow="deviceCode", on_device_code=approve_alice).account.username == ALICE
        assert len(asked) == 2 and asked[1].user_code != asked[0].user_code
        assert first.ping() == {} and seen_by == {"first": [], "second": []}


def test_socket_in_a_directory_others_may_enter_is_refused(foreign_dir, monkeypatch, sidecar_bin, base_env):
    path = os.path.join(foreign_dir, "agent.sock")
    server = listening_socket(path)
    try:
        with pytest.raises(a.UntrustedSocketError, match="other users may enter") as info:
            a.SidecarClient(socket=path, client_id=CLIENT_ID)
        assert isinstance(info.value, PermissionError) and path in str(info.value)
        # Found in the environment, not named: the one rule of every client and mode (README
        # "The agent"): never connected to, said once, a process as without an agent.
        monkeypatch.setenv("AUTH_SIDECAR_SOCK", path)
        with pytest.warns(RuntimeWarning, match="ignoring the agent socket.*other users may enter"):
            process = a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory", timeout=QUICK)
        with process:
            assert process.socket is None and process.pid is not None and process.ping() == {}
        assert_never_connected(server)
    finally:
        server.close()


def test_symlink_and_non_socket_are_refused(mock_agent, tmp_path):
    link = os.path.join(mock_agent.dir, "link.sock")
    os.symlink(mock_agent.socket, link)
    with pytest.raises(a.UntrustedSocketError, match="not a socket"):
        a.SidecarClient(socket=link, client_id=CLIENT_ID)
    plain = os.path.join(mock_agent.dir, "file.sock")
    open(plain, "w").close()
    with pytest.raises(a.UntrustedSocketError, match="not a socket"):
        a.SidecarClient(socket=plain, client_id=CLIENT_ID)
    dir_link = str(tmp_path / "dir-link")
    os.symlink(mock_agent.dir, dir_link)
    with pytest.raises(a.UntrustedSocketError, match="not a directory"):
        a.SidecarClient(socket=os.path.join(dir_link, "agent.sock"), client_id=CLIENT_ID)


@pytest.mark.skipif(os.getuid() != 0, reason="handing a file to another user needs root")
def test_socket_of_another_user_is_refused():
    own_dir = tempfile.mkdtemp(prefix="as-other-")
    path = os.path.join(own_dir, "agent.sock")
    server = listening_socket(path)
    try:
        os.chown(path, 65534, 65534)
        with pytest.raises(a.UntrustedSocketError, match="belongs to uid 65534"):
            a.SidecarClient(socket=path, client_id=CLIENT_ID)
        os.chown(path, 0, 0)
        os.chown(own_dir, 65534, 65534)
        with pytest.raises(a.UntrustedSocketError, match="directory .* belongs to uid 65534"):
            a.SidecarClient(socket=path, client_id=CLIENT_ID)
        assert_never_connected(server)
    finally:
        server.close()
        os.unlink(path)
        os.rmdir(own_dir)


def test_socket_from_the_environment(start_agent, base_env, sidecar_bin, monkeypatch, tmp_path):
    agent = start_agent(base_env, "--client-id", CLIENT_ID, "--cache", "memory")
    monkeypatch.setenv("AUTH_SIDECAR_SOCK", agent.socket)
    monkeypatch.setenv("AUTH_SIDECAR_BIN", str(tmp_path / "no-binary-needed"))
    with a.SidecarClient(timeout=QUICK) as client:  # configured by the agent's command line
        assert client.socket == agent.socket and client.pid is None
        assert client.get_accounts() == []
    with a.SidecarClient(sidecar_bin, socket=False, env=base_env, client_id=CLIENT_ID, cache="memory",
                         timeout=QUICK) as process:
        assert process.socket is None and process.pid is not None and process.ping() == {}

    missing = os.path.join(agent.dir, "none.sock")
    monkeypatch.setenv("AUTH_SIDECAR_SOCK", missing)  # no agent there: a process, as without an agent
    with a.SidecarClient(sidecar_bin, env=base_env, client_id=CLIENT_ID, cache="memory", timeout=QUICK) as process:
        assert process.socket is None and process.pid is not None
    with pytest.raises(a.AgentUnavailableError, match="none.sock"):  # named explicitly: an error
        a.SidecarClient(sidecar_bin, socket=missing, client_id=CLIENT_ID)


def test_agent_stopped_is_a_clear_error(start_agent, base_env):
    agent = start_agent(base_env, "--client-id", CLIENT_ID, "--cache", "memory")
    client = a.SidecarClient(socket=agent.socket, timeout=QUICK)
    try:
        assert client.ping() == {}
        agent.process.terminate()
        assert agent.process.wait(QUICK) == 0
        with pytest.raises(a.SidecarExitedError) as info:
            client.ping()
        assert "agent at %s closed the connection" % agent.socket in str(info.value)
        assert info.value.returncode is None and isinstance(info.value, ConnectionError)
    finally:
        assert client.close() is None
    with pytest.raises(a.AgentUnavailableError):  # the agent removed its socket
        a.SidecarClient(socket=agent.socket)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 35))


def test_async_clients_share_one_sign_in_and_see_the_agent_stop(mock_agent, config, mock, foreign_dir):
    async def main():
        loop = asyncio.get_running_loop()
        first = a.AsyncSidecarClient(socket=mock_agent.socket, timeout=QUICK, **config)
        assert first.socket is None and first.pid is None  # connected by start()
        async with first, a.AsyncSidecarClient(socket=mock_agent.socket, timeout=QUICK, **config) as second:
            assert first.socket == mock_agent.socket and first.binary is None and first.stderr_tail == ""
            token = await first.acquire_token(SCOPES, timeout=SIGN_IN)
            silent = await second.acquire_token_silent(SCOPES)
            assert silent.from_cache and silent.access_token == token.access_token

            codes, misrouted = [], []

            async def approve(code):
                codes.append(code)
                await loop.run_in_executor(None, lambda: mock.admin.device("approve", code.user_code, username=BOB))

            first.on_device_code = misrouted.append
            assert (await second.acquire_token(SCOPES, flow="deviceCode", on_device_code=approve,
                                               timeout=SIGN_IN)).account.username == BOB
            assert len(codes) == 1 and await first.ping() == {} and misrouted == []

            mock_agent.process.terminate()
            assert await loop.run_in_executor(None, mock_agent.process.wait, QUICK) == 0
            with pytest.raises(a.SidecarExitedError, match="closed the connection"):
                await asyncio.wait_for(first.ping(), QUICK)
        assert await first.close() is None

        with pytest.raises(a.UntrustedSocketError):
            await a.AsyncSidecarClient(socket=os.path.join(foreign_dir, "agent.sock")).start()
        with pytest.raises(a.AgentUnavailableError):
            await a.AsyncSidecarClient(socket=mock_agent.socket).start()
    run(main())
