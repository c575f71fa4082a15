"""How a client reaches auth-sidecar: a child process's pipes, or a connection to a running
agent's Unix socket. The clients see one shape (``send``, ``incoming``, ``ended``, ...);
only these classes know which it is. ``binary`` is the process's binary, ``socket`` the
agent's socket; the other is None.

Lifecycle, as the clients drive it: ``send`` messages and read ``incoming`` lines until EOF;
the reader then calls ``input_ended``. ``close`` (the client's) calls ``end_output``, then
``wait(timeout)`` (the process exits, else is killed; the agent closes its side, else the
connection is dropped), then ``release``.
"""
from __future__ import annotations

import asyncio
import socket as _socket
import subprocess
import threading
from typing import Any, Dict, Optional, Union

from . import _common as c
from .errors import AgentUnavailableError, SidecarExitedError, SidecarNotFoundError, UntrustedSocketError

__all__ = ["ProcessPipes", "AgentConnection", "AsyncProcessPipes", "AsyncAgentConnection", "open_transport",
           "open_async_transport"]


# ---- synchronous ---------------------------------------------------------------------------

class ProcessPipes:
    """auth-sidecar as a child process: messages over its stdin/stdout; the tail of its
    stderr kept for errors."""

    socket: Optional[str] = None

    def __init__(self, binary: str, args, env: Optional[Dict[str, str]], cwd: Optional[str], stderr: Any):
        self.binary: Optional[str] = binary
        self._tail = c.StderrTail(stderr)
        try:
            self._proc = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=env, cwd=cwd)
        except OSError as err:
            raise SidecarNotFoundError("cannot start auth-sidecar %r: %s" % (binary, err)) from err
        self.incoming = self._proc.stdout
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="auth-sidecar-stderr", daemon=True)
        self._stderr_reader.start()

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        return self._proc.poll()

    @property
    def stderr_tail(self) -> str:
        return self._tail.text()

    def send(self, data: bytes) -> None:
        self._proc.stdin.write(data)
        self._proc.stdin.flush()

    def ended(self, what: str) -> SidecarExitedError:
        return c.exited_error(what, self._proc.poll(), self._tail.text())

    def input_ended(self) -> None:
        """stdout closed: the process is gone (or going); collect its exit code and stderr."""
        try:
            self._proc.wait(2)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(1)

    def end_output(self) -> None:
        try:
            self._proc.stdin.close()
        except OSError:
            pass

    def wait(self, timeout: float) -> None:
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def release(self) -> None:
        self._stderr_reader.join(5)
        for stream in (self._proc.stdout, self._proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def kill(self) -> None:
        self._proc.kill()

    def _read_stderr(self) -> None:
        stream = self._proc.stderr
        try:
            while True:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                if not chunk:
                    break
                self._tail.feed(chunk)
        except (OSError, ValueError):
            pass


class AgentConnection:
    """A connection to a running agent's Unix socket, checked to be the user's own before
    anything is sent. No process of ours: ``pid`` and ``returncode`` are None, no stderr;
    the agent keeps running after the connection closes."""

    binary: Optional[str] = None
    pid: Optional[int] = None
    returncode: Optional[int] = None
    stderr_tail = ""

    def __init__(self, path: str):
        self.socket: str = c.check_agent_socket(path)
        self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            self._sock.connect(self.socket)
        except OSError as err:
            self._sock.close()
            raise c.agent_unavailable(self.socket, err) from err
        self.incoming = self._sock.makefile("rb")
        self._eof = threading.Event()

    def send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def ended(self, what: str) -> SidecarExitedError:
        return c.agent_closed_error(self.socket, what)

    def input_ended(self) -> None:
        self._eof.set()

    def end_output(self) -> None:
        self._shutdown(_socket.SHUT_WR)

    def wait(self, timeout: float) -> None:
        if not self._eof.wait(timeout):
            self._shutdown(_socket.SHUT_RDWR)

    def release(self) -> None:
        self.incoming.close()
        self._sock.close()

    def kill(self) -> None:
        """Drop the connection at once (the agent cancels what this connection asked for)."""
        self._shutdown(_socket.SHUT_RDWR)

    def _shutdown(self, how: int) -> None:
        try:
            self._sock.shutdown(how)
        except OSError:
            pass


Transport = Union[ProcessPipes, AgentConnection]


def open_transport(binary: Optional[str], sock: c.SocketOption, args, env: Optional[Dict[str, str]],
                   cwd: Optional[str], stderr: Any) -> Transport:
    """The agent's socket when one is named (``sock``, else $AUTH_SIDECAR_SOCK), else a
    process. With the socket only from $AUTH_SIDECAR_SOCK, no agent there or one not the
    user's own means a process, as without an agent (c.socket_fallback)."""
    path, explicit = c.agent_socket(sock)
    if path is not None:
        try:
            return AgentConnection(path)
        except (AgentUnavailableError, UntrustedSocketError) as err:
            c.socket_fallback(err, explicit)
    return ProcessPipes(c.find_binary(binary), args, env, cwd, stderr)


# ---- asyncio -------------------------------------------------------------------------------

class AsyncProcessPipes:
    """:class:`ProcessPipes` for asyncio."""

    socket: Optional[str] = None

    def __init__(self, binary: str, proc: asyncio.subprocess.Process, stderr: Any):
        self.binary: Optional[str] = binary
        self._proc = proc
        self._tail = c.StderrTail(stderr)
        self.incoming: asyncio.StreamReader = proc.stdout  # type: ignore[assignment]
        self._stderr_task = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, binary: str, args, env: Optional[Dict[str, str]], cwd: Optional[str],
                    stderr: Any) -> "AsyncProcessPipes":
        try:
            proc = await asyncio.create_subprocess_exec(
                binary, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, limit=c.MAX_LINE)
        except OSError as err:
            raise SidecarNotFoundError("cannot start auth-sidecar %r: %s" % (binary, err)) from err
        return cls(binary, proc, stderr)

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        return self._proc.returncode

    @property
    def stderr_tail(self) -> str:
        return self._tail.text()

    async def send(self, data: bytes) -> None:
        self._proc.stdin.write(data)  # type: ignore[union-attr]
        await self._proc.stdin.drain()  # type: ignore[union-attr]

    def ended(self, what: str) -> SidecarExitedError:
        return c.exited_error(what, self._proc.returncode, self._tail.text())

    async def input_ended(self) -> None:
        try:
            await asyncio.wait_for(self._proc.wait(), 2)
        except asyncio.TimeoutError:
            pass
        await asyncio.wait({self._stderr_task}, timeout=1)

    def end_output(self) -> None:
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
        except (OSError, RuntimeError):
            pass

    async def wait(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._proc.wait(), timeout)
        except asyncio.TimeoutError:
            self.kill()
            await self._proc.wait()

    async def release(self) -> None:
        await asyncio.wait({self._stderr_task}, timeout=5)

    def kill(self) -> None:
        try:
            self._proc.kill()
        except ProcessLookupError:
            pass

    async def _read_stderr(self) -> None:
        try:
            while True:
                chunk = await self._proc.stderr.read(65536)  # type: ignore[union-attr]
                if not chunk:
                    break
                self._tail.feed(chunk)
        except (OSError, ValueError):
            pass


class AsyncAgentConnection:
    """:class:`AgentConnection` for asyncio."""

    binary: Optional[str] = None
    pid: Optional[int] = None
    returncode: Optional[int] = None
    stderr_tail = ""

    def __init__(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.socket: str = path
        self.incoming = reader
        self._writer = writer
        self._eof = asyncio.Event()

    @classmethod
    async def open(cls, path: str) -> "AsyncAgentConnection":
        path = c.check_agent_socket(path)
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=c.MAX_LINE)
        except OSError as err:
            raise c.agent_unavailable(path, err) from err
        return cls(path, reader, writer)

    async def send(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    def ended(self, what: str) -> SidecarExitedError:
        return c.agent_closed_error(self.socket, what)

    async def input_ended(self) -> None:
        self._eof.set()

    def end_output(self) -> None:
        try:
            self._writer.write_eof()
        except (OSError, RuntimeError):
            pass

    async def wait(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._eof.wait(), timeout)
        except asyncio.TimeoutError:
            self.kill()

    async def release(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass

    def kill(self) -> None:
        """Drop the connection at once."""
        self._writer.transport.abort()


AsyncTransport = Union[AsyncProcessPipes, AsyncAgentConnection]


async def open_async_transport(binary: Optional[str], path: Optional[str], explicit: bool, args,
                               env: Optional[Dict[str, str]], cwd: Optional[str],
                               stderr: Any) -> AsyncTransport:
    """As :func:`open_transport`, with the socket already resolved (``c.agent_socket``)."""
    if path is not None:
        try:
            return await AsyncAgentConnection.open(path)
        except (AgentUnavailableError, UntrustedSocketError) as err:
            c.socket_fallback(err, explicit)
    return await AsyncProcessPipes.start(c.find_binary(binary), args, env, cwd, stderr)
