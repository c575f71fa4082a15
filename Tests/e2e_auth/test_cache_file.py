"""The token cache file: permissions, the msal-extensions lock file convention, and two
sidecar processes sharing one file."""
from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import time

import pytest

import sidecar as sc
from auth_e2e import ALICE, SCOPES, read_cache


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_file_0600_and_created_directories_0700(launch, mock, tmp_path):
    base = tmp_path / "made-by-sidecar"
    path = base / "deeper" / "cache.json"
    old = os.umask(0)  # the child inherits a permissive umask: the modes must not depend on it
    try:
        p = launch(cache=str(path))
    finally:
        os.umask(old)
    p.sign_in()
    assert path.is_file()
    assert mode(path) == 0o600, oct(mode(path))
    assert mode(path.parent) == 0o700, oct(mode(path.parent))
    assert mode(base) == 0o700, oct(mode(base))
    assert read_cache(str(path))["RefreshToken"], "no refresh token in the cache file"
    # After more writes (refresh rotates the refresh token) the file keeps its mode.
    p.silent(forceRefresh=True)
    assert mode(path) == 0o600, oct(mode(path))
    # The lock file is released (deleted) once no request runs.
    assert not os.path.exists(str(path) + ".lockfile")
    # The refresh lock (one byte-range lock per refreshed token) stays: empty and 0600.
    refresh_lock = path.parent / "cache.json.refresh.lock"
    assert refresh_lock.stat().st_size == 0 and mode(refresh_lock) == 0o600, oct(mode(refresh_lock))
    leftovers = [n for n in os.listdir(path.parent) if n not in ("cache.json", "cache.json.refresh.lock")]
    assert leftovers == [], f"temporary files left next to the cache: {leftovers}"


def test_existing_directory_mode_left_alone(launch, mock, tmp_path):
    d = tmp_path / "shared-dir"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    p = launch(cache=str(d / "cache.json"))
    p.sign_in()
    assert mode(d / "cache.json") == 0o600
    assert mode(d) == 0o755


def test_a_killed_writers_temporary_file_is_removed_by_a_reader(launch, mock, tmp_path):
    """A writer killed between writing its temporary file and the rename leaves a full copy
    of the cache: the next process that reads the cache removes it, without writing."""
    path = tmp_path / "cache" / "cache.json"
    launch(cache=str(path), stderr_name="writer.log").sign_in()
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = path.parent / f".cache.json.tmp-{dead.pid}-12345"
    live = path.parent / f".cache.json.tmp-{os.getpid()}-67890"  # a writer still running
    for f in (orphan, live):
        f.write_bytes(path.read_bytes())
        os.chmod(f, 0o600)
    inode = os.stat(path).st_ino
    p = launch(cache=str(path))
    assert p.ok("getCurrentAccount")["account"]["username"] == ALICE
    assert p.silent()["fromCache"] is True
    assert os.stat(path).st_ino == inode, "the cache was rewritten: not a read-only run"
    assert not orphan.exists(), "a dead writer's copy of the tokens was left"
    assert live.exists(), "a live writer's temporary file was removed"


class HeldLock:
    """Holds `<cache>.lockfile` as msal-extensions does: created exclusively (existence),
    optionally flock'ed (portalocker flavour), "pid argv0" written in it."""

    def __init__(self, cache_path: str, use_flock: bool):
        self.path = cache_path + ".lockfile"
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        if use_flock:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(self.fd, f"{os.getpid()} pytest".encode())

    def release(self):
        if self.fd is not None:
            os.unlink(self.path)
            os.close(self.fd)
            self.fd = None


@pytest.mark.parametrize("use_flock", [True, False], ids=["flock", "existence"])
def test_waits_for_the_lockfile_of_another_process(launch, mock, tmp_path, use_flock):
    """Writers wait for another process's lock; reads of an unchanged file need no lock."""
    path = str(tmp_path / "locked" / "cache.json")
    p = launch(cache=path)
    p.sign_in()
    lock = HeldLock(path, use_flock)
    try:
        accounts = p.ok("getAccounts")["accounts"]
        assert [a["username"] for a in accounts] == [ALICE]
        assert p.silent()["fromCache"] is True
        oid = p.submit("signout", {})
        p.expect_silence(1.0)  # the write must wait for the lock
        assert os.path.exists(lock.path)
    finally:
        lock.release()
    assert sc.assert_result(p.wait_for(oid, 10))["signedOut"] is True
    assert p.ok("getAccounts")["accounts"] == []
    p.ping()


def test_two_processes_share_one_cache_file(launch, mock, tmp_path):
    path = str(tmp_path / "shared" / "cache.json")
    a = launch(cache=path)
    b = launch(cache=path)
    assert b.ok("getCurrentAccount") == {"account": None, "previousAccount": None}
    assert b.ok("getAccounts")["accounts"] == []

    signed = a.sign_in()
    seen = b.ok("getCurrentAccount")
    assert seen["account"] and seen["account"]["username"] == ALICE, seen
    assert seen["account"]["homeAccountId"] == signed["account"]["homeAccountId"]
    assert [x["username"] for x in b.ok("getAccounts")["accounts"]] == [ALICE]
    before = mock.counts()
    r = b.silent()
    assert r["fromCache"] is True and r["accessToken"] == signed["accessToken"], r
    assert mock.counts() == before

    # A signs out: B sees it, and reports the account it knew as previousAccount.
    a.ok("signout", {})
    after = b.ok("getCurrentAccount")
    assert after["account"] is None, after
    assert after["previousAccount"] and after["previousAccount"]["username"] == ALICE, after
    b.error("acquireTokenSilent", {"scopes": SCOPES}, -50002, name="interactionRequired")


def test_concurrent_writers_on_one_file(launch, mock, tmp_path):
    """Two processes refreshing at the same time: the file stays valid JSON with both
    processes' writes serialized by the lock."""
    path = str(tmp_path / "busy" / "cache.json")
    a = launch(cache=path)
    b = launch(cache=path)
    a.sign_in()
    ids_a = [a.submit("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}) for _ in range(5)]
    ids_b = [b.submit("acquireTokenSilent", {"scopes": SCOPES, "forceRefresh": True}) for _ in range(5)]
    for i in ids_a:
        sc.assert_result(a.wait_for(i, 20))
    for i in ids_b:
        sc.assert_result(b.wait_for(i, 20))
    doc = read_cache(path)
    assert len(doc["Account"]) == 1 and len(doc["RefreshToken"]) == 1, doc.keys()
    assert a.silent()["fromCache"] is True and b.silent()["fromCache"] is True
