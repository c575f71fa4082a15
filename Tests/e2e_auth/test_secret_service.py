"""The Secret Service layer of the key store (issue #20) against a real, headless GNOME
Keyring on a private D-Bus session (keyring_session.py):

* sign in: the key is a libsecret item (`secret-tool search` finds it: schema
  org.auth-sidecar.CacheKey, the cache's path as attribute), the cache file holds none of the
  mock's token bytes, and a fresh process serves the cached token with the mock stopped;
* the same cache from a session without D-Bus (SSH): never set aside, start-up fails naming
  the file, the Secret Service and what to do (issue #35); the file unchanged;
* `cacheProtection: secretService` alone, with no D-Bus session: start-up fails saying why;
* a service that holds its name but never answers (SIGSTOP): skipped after 3 s, saying so;
* the key's copy in the kernel keyring (`secretServiceKeyCacheSeconds`): a `user` key with a
  timeout, this uid only, taken by the next process without libsecret (the keyring daemon
  stopped); a copy that does not open the file is replaced by the service's key.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from mock_idp.testing import AdminClient, start_mock, stop_mock

from auth_e2e import ALICE, CLIENT_ID, AuthSidecar, Mock, process_env
from keyring_session import keyring_session  # noqa: F401  (the fixture)

SS_HEADER = b"auth-sidecar-aes256gcm-v1 secret-service\n"


def private_mock(tmp_path) -> Mock:
    url, ca_file, process = start_mock(tmp_path / "private-mock")
    return Mock(url, ca_file, process, AdminClient(url, ca_file))


def test_the_key_is_kept_in_the_secret_service(sidecar_bin, tmp_path, keyring_session):  # noqa: F811
    mock = private_mock(tmp_path)
    cache = str(tmp_path / "ss" / "cache.json")
    bus = {"DBUS_SESSION_BUS_ADDRESS": keyring_session.address}
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=bus, stderr_path=str(tmp_path / "first.log"))
    try:
        protection = p.initialize(cache=cache, cacheProtection="auto")["cacheProtection"]
        assert protection["layer"] == "secretService" and protection["skipped"] == [], protection
        assert keyring_session.secret_tool("search", "--all", "cache", cache).stdout == b""  # none before a write
        signed_in = p.sign_in(loginHint=ALICE)
        assert p.finish()[1] == 0
    finally:
        p.kill()
    data = open(cache, "rb").read()
    assert data.startswith(SS_HEADER), data[:60]
    for secret in (signed_in["accessToken"], signed_in["idToken"]):
        assert secret.encode() not in data
    assert b"0.MOCK." not in data and b"RefreshToken" not in data and ALICE.encode() not in data

    found = keyring_session.secret_tool("search", "--all", "cache", cache)
    shown = found.stdout.decode() + found.stderr.decode()
    assert "schema = org.auth-sidecar.CacheKey" in shown and f"attribute.cache = {cache}" in shown, shown
    key = keyring_session.secret_tool("lookup", "cache", cache).stdout
    assert len(key.strip()) == 44  # base64 of 32 bytes

    stop_mock(mock.process)  # offline from here on
    q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=bus, stderr_path=str(tmp_path / "second.log"))
    try:
        q.initialize(cache=cache, cacheProtection="auto")
        r = q.silent()
        assert r["fromCache"] is True and r["accessToken"] == signed_in["accessToken"], r
    finally:
        q.kill()

    # The same cache from a session that cannot reach the service (SSH, no D-Bus): the file is
    # never taken for one whose key is gone; the error says where the key is.
    s = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env={"DBUS_SESSION_BUS_ADDRESS": ""},
                          stderr_path=str(tmp_path / "ssh.log"))
    try:
        error = s.call("initialize", s.config_for(cache, cacheProtection="auto"))["error"]
        assert error["code"] == -51005, error
        assert f"the token cache {cache} is left as it is: its key is in the secretService layer, out of reach" in error["message"]
        assert "no D-Bus session" in error["message"] and "AUTH_SIDECAR_SOCK" in error["message"], error
    finally:
        s.kill()
    assert open(cache, "rb").read() == data
    assert not [n for n in os.listdir(os.path.dirname(cache)) if ".undecryptable-" in n]


def test_secret_service_alone_without_a_session_says_why(sidecar_bin, tmp_path, mock):
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env={"DBUS_SESSION_BUS_ADDRESS": ""})
    try:
        cache = str(tmp_path / "alone" / "cache.json")
        error = p.call("initialize", p.config_for(cache, cacheProtection="secretService"))["error"]
        assert error["code"] == -51005, error
        assert "secretService: no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)" in error["message"], error
        assert [layer["layer"] for layer in error["data"]["layers"]] == ["secretService"]
    finally:
        p.kill()
    assert not os.path.exists(cache)


def test_status_names_the_secret_service(sidecar_bin, tmp_path, keyring_session):  # noqa: F811
    cache = str(tmp_path / "st" / "cache.json")
    home = tmp_path / "cfg"
    (home / "auth-sidecar").mkdir(parents=True)
    (home / "auth-sidecar" / "config.json").write_text(json.dumps(
        {"clientId": "00001111-aaaa-2222-bbbb-3333cccc4444", "authority": "https://login.microsoftonline.com/organizations",
         "cache": {"path": cache}}))
    env = {**os.environ, **keyring_session.env, "XDG_CONFIG_HOME": str(home)}
    env.pop("AUTH_SIDECAR_SOCK", None)
    done = subprocess.run([sidecar_bin, "status", "--no-agent", "--output", "json"], env=env, capture_output=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr  # nobody signed in: the report is still whole
    protection = json.loads(done.stdout)["cacheProtection"]
    assert protection["layer"] == "secretService" and protection["skipped"] == [], protection
    text = subprocess.run([sidecar_bin, "status", "--no-agent"], env=env, capture_output=True, timeout=30,
                          stdin=subprocess.DEVNULL).stdout.decode()
    assert "key in the Secret Service" in text, text


def test_a_service_that_never_answers_costs_a_bounded_wait(sidecar_bin, tmp_path, mock, keyring_session):  # noqa: F811
    """A Secret Service that holds its bus name but never answers (stopped here; in life: an
    unlock prompt nobody sees): start-up gives up after the time limit (3 s) and says why,
    instead of waiting for D-Bus's own 25 s or for ever."""
    os.kill(keyring_session.keyring.pid, signal.SIGSTOP)
    try:
        p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env={"DBUS_SESSION_BUS_ADDRESS": keyring_session.address})
        try:
            started = time.monotonic()
            reply = p.call("initialize", p.config_for(str(tmp_path / "slow" / "cache.json"), cacheProtection="auto"),
                           timeout=20)
            took = time.monotonic() - started
        finally:
            p.kill()
    finally:
        os.kill(keyring_session.keyring.pid, signal.SIGCONT)
    skipped = (reply.get("result", {}).get("cacheProtection", {}).get("skipped")
               or reply.get("error", {}).get("data", {}).get("layers"))
    assert skipped[0]["layer"] == "secretService", reply
    assert skipped[0]["reason"].startswith("no answer from the Secret Service within 3 s"), reply
    assert 2.5 < took < 10, took


def keyctl(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["keyctl", *args], capture_output=True, timeout=10, input=input)


def proc_keys_line(key_id: str) -> list[str]:
    """The key's line in /proc/keys: id, flags, usage, timeout, permissions, uid, gid, type, description."""
    wanted = "%08x" % int(key_id)
    with open("/proc/keys") as keys:
        return next(line.split() for line in keys if line.split()[0] == wanted)


def test_the_next_process_takes_the_kernel_keyring_copy(sidecar_bin, tmp_path, keyring_session):  # noqa: F811
    if shutil.which("keyctl") is None or keyctl("get_persistent", "@u").returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("keyctl missing or refused: scripts/setup.sh installs keyutils")
        pytest.skip("keyctl missing or refused here")
    ring = keyctl("get_persistent", "@u").stdout.decode().strip()
    mock = private_mock(tmp_path)
    cache = str(tmp_path / "copy" / "cache.json")
    description = "auth-sidecar:secret-service-key:" + cache
    bus = {"DBUS_SESSION_BUS_ADDRESS": keyring_session.address}
    try:
        p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=bus, stderr_path=str(tmp_path / "first.log"))
        try:
            p.initialize(cache=cache, cacheProtection="auto", secretServiceKeyCacheSeconds=300)
            signed_in = p.sign_in(loginHint=ALICE)
            assert p.finish()[1] == 0
        finally:
            p.kill()
        key = base64.b64decode(keyring_session.secret_tool("lookup", "cache", cache).stdout.strip())
        copy_id = keyctl("search", ring, "user", description).stdout.decode().strip()
        assert copy_id, "no copy in the kernel keyring"
        assert keyctl("pipe", copy_id).stdout == key
        line = proc_keys_line(copy_id)
        assert line[3] != "perm" and line[3][-1] in "sm", line  # a timeout (at most 5 min)
        assert line[4] == "3f3f0000", line  # possessor and this uid only

        # The service stopped (libsecret would wait 3 s, then give up): the copy serves.
        stop_mock(mock.process)
        os.kill(keyring_session.keyring.pid, signal.SIGSTOP)
        try:
            q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=bus, stderr_path=str(tmp_path / "second.log"))
            try:
                started = time.monotonic()
                protection = q.initialize(cache=cache, cacheProtection="auto", secretServiceKeyCacheSeconds=300)[
                    "cacheProtection"]
                r = q.silent()
                took = time.monotonic() - started
            finally:
                q.kill()
        finally:
            os.kill(keyring_session.keyring.pid, signal.SIGCONT)
        assert protection["layer"] == "secretService" and protection["keyCopySeconds"] == 300, protection
        assert r["fromCache"] is True and r["accessToken"] == signed_in["accessToken"], r
        assert took < 1.5, took

        # `status` says where this process's key came from.
        home = tmp_path / "cfg"
        (home / "auth-sidecar").mkdir(parents=True)
        (home / "auth-sidecar" / "config.json").write_text(json.dumps(
            {"clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
             "cache": {"path": cache}, "secretServiceKeyCacheSeconds": 300}))
        env = process_env(mock, tmp_path, env={**bus, "XDG_CONFIG_HOME": str(home)})
        status = subprocess.run([sidecar_bin, "status", "--no-agent"], env=env, capture_output=True, timeout=30,
                                stdin=subprocess.DEVNULL)
        assert "key in the Secret Service (kept in the kernel keyring for 5 min)" in status.stdout.decode(), status

        # A copy that does not open the file: dropped, the service asked, its key kept again.
        keyctl("padd", "user", description, ring, input=b"\x07" * 32)
        assert keyctl("pipe", copy_id).stdout != key
        s = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=bus, stderr_path=str(tmp_path / "third.log"))
        try:
            s.initialize(cache=cache, cacheProtection="auto")
            r = s.silent()
        finally:
            s.kill()
        assert r["fromCache"] is True and r["accessToken"] == signed_in["accessToken"], r
        assert keyctl("pipe", keyctl("search", ring, "user", description).stdout.decode().strip()).stdout == key
        assert not [n for n in os.listdir(os.path.dirname(cache)) if ".undecryptable-" in n]
    finally:
        found = keyctl("search", ring, "user", description)
        if found.returncode == 0:
            keyctl("invalidate", found.stdout.decode().strip())


def test_another_secret_service_leaves_the_file_alone(sidecar_bin, tmp_path, mock, keyring_session):  # noqa: F811
    """Issue #35: a process on another D-Bus session, whose Secret Service holds no item for
    this cache, cannot tell the key is gone: start-up fails naming the file, the layer, why and
    what to do; the file stays sealed as it was, and the first session still reads it. (No
    kernel keyring copy, so the second process asks its own service.)"""
    from keyring_session import KeyringSession
    cache = str(tmp_path / "two-services" / "cache.json")
    mine = {"DBUS_SESSION_BUS_ADDRESS": keyring_session.address}
    p = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=mine, stderr_path=str(tmp_path / "mine.log"))
    try:
        p.initialize(cache=cache, cacheProtection="auto", secretServiceKeyCacheSeconds=0)
        p.sign_in(loginHint=ALICE)
    finally:
        p.kill()
    sealed = open(cache, "rb").read()
    assert sealed.startswith(SS_HEADER)
    other = KeyringSession(str(tmp_path / "other-session"))
    try:
        q = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env={"DBUS_SESSION_BUS_ADDRESS": other.address},
                              stderr_path=str(tmp_path / "other.log"))
        try:
            error = q.call("initialize", q.config_for(cache, cacheProtection="auto", secretServiceKeyCacheSeconds=0))["error"]
        finally:
            q.kill()
    finally:
        other.stop()
    assert error["code"] == -51005, error
    message = error["message"]
    assert f"the token cache {cache} is left as it is: its key is in the secretService layer, out of reach" in message, message
    assert "holds no key for it" in message and "run in the desktop session whose keyring holds the key" in message, message
    assert open(cache, "rb").read() == sealed
    assert not [n for n in os.listdir(os.path.dirname(cache)) if ".undecryptable-" in n]
    r = AuthSidecar.start(sidecar_bin, mock, tmp_path, [], env=mine, stderr_path=str(tmp_path / "again.log"))
    try:
        r.initialize(cache=cache, cacheProtection="auto", secretServiceKeyCacheSeconds=0)
        assert r.silent()["fromCache"] is True
    finally:
        r.kill()
