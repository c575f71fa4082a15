"""The key store (issue #20): the cache encrypted at rest with a key from the first layer that
works, plaintext only when chosen, a plaintext cache migrated in place, `status` saying which.

* Kernel keyring (no D-Bus session): the key is in the user's persistent keyring, visible to
  `keyctl` and not to another uid; the cache file holds none of the mock's token bytes; a fresh
  process serves the cached token without a token request. These tests run whenever the kernel
  accepts keyctl here and are skipped (saying so) only when it refuses it (a container's
  seccomp profile); keyutils (`keyctl`) is installed by scripts/setup.sh.
* A reboot (the keyring forgets the key): the cache is set aside, renamed, never deleted, and a
  new empty one starts; `status` says so.
* Nothing available (keyctl refused by a seccomp filter this test installs, as Docker's does)
  and no choice: start-up fails naming each layer, why, and the line that enables it; with
  `cacheProtection: plaintext` it works and `status` says so.
* Migration: a plaintext cache MSAL for Python wrote is encrypted in place; kill -9 at random
  points during migration never loses it: KEYSTORE_KILL_ROUNDS rounds (default the issue's 100,
  about 18 s; fewer for a quick local run).
* Key command: works; a failing, slow or too talkative command is a clear error.
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env
from msal_python import default_port, interactive_cache  # noqa: F401  (default_port: the fixture)

HEADER = b"auth-sidecar-aes256gcm-v1\n"
KILL_ROUNDS = int(os.environ.get("KEYSTORE_KILL_ROUNDS", "100"))


# --- the kernel keyring, as keyctl(1) sees it -------------------------------------------------

def keyctl(*args, user=None, check=True) -> subprocess.CompletedProcess:
    argv = ["keyctl", *args] if user is None else ["runuser", "-u", user, "--", "keyctl", *args]
    return subprocess.run(argv, capture_output=True, timeout=10, check=check)


@pytest.fixture
def keyring():
    """The persistent keyring's id; skips only when the kernel refuses keyctl here."""
    if shutil.which("keyctl") is None:
        if os.environ.get("CI"):
            pytest.fail("keyctl missing: scripts/setup.sh installs keyutils")
        pytest.skip("keyctl missing (apt-get install keyutils)")
    probe = keyctl("get_persistent", "@u", check=False)
    if probe.returncode != 0:
        pytest.skip(f"the kernel refuses keyctl here: {probe.stderr.decode().strip()}")
    ring = probe.stdout.decode().strip()
    made: list[str] = []
    yield ring, made
    for description in made:  # the keys this test made (their descriptions name tmp paths)
        found = keyctl("search", ring, "user", description, check=False)
        if found.returncode == 0:
            keyctl("unlink", found.stdout.decode().strip(), ring, check=False)


def key_description(cache: str) -> str:
    return "auth-sidecar:cache-key:" + cache


def no_dbus(env: dict | None = None) -> dict:
    return {"DBUS_SESSION_BUS_ADDRESS": "", **(env or {})}


# --- a seccomp filter refusing keyctl and add_key, as Docker's default profile does ---------

_SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}  # add_key, keyctl


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def refuse_keyctl():
    """preexec_fn: the child's add_key and keyctl fail with EPERM."""
    add_key, keyctl_nr = _SYSCALLS[platform.machine()]
    program = (_Filter * 5)(
        _Filter(0x20, 0, 0, 0),                        # ld [nr]
        _Filter(0x15, 2, 0, add_key),                  # jeq add_key -> errno
        _Filter(0x15, 1, 0, keyctl_nr),                # jeq keyctl -> errno
        _Filter(0x06, 0, 0, 0x7FFF0000),               # ret ALLOW
        _Filter(0x06, 0, 0, 0x00050000 | 1))           # ret ERRNO(EPERM)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:                # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    prog = _Program(5, program)
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


needs_seccomp = pytest.mark.skipif(platform.machine() not in _SYSCALLS, reason="the seccomp filter knows x86_64 and aarch64")


# --- the binary as the user runs it ---------------------------------------------------------

def verb(sidecar_bin, mock, tmp_path, cache, *args, protection=None, preexec_fn=None, key_file=None, origin=None):
    """Runs a verb configured by a configuration file only (no agent, no D-Bus session); with
    `origin` (a DefaultPort), at https://localhost as MSAL for Python's cache names it."""
    authority, known = (origin.url, origin.host) if origin else (mock.url, "127.0.0.1")
    config = {"clientId": CLIENT_ID, "authority": authority + "/organizations", "knownAuthorities": [known],
              "cache": {"path": cache, **({"encryption": {"keyFile": key_file}} if key_file else {})}}
    if protection:
        config["cacheProtection"] = protection
    home = tmp_path / "verb-config"
    (home / "auth-sidecar").mkdir(parents=True, exist_ok=True)
    (home / "auth-sidecar" / "config.json").write_text(json.dumps(config))
    env = {k: v for k, v in no_dbus(process_env(mock, tmp_path)).items() if k != "AUTH_SIDECAR_SOCK"}
    env["XDG_CONFIG_HOME"] = str(home)
    env.update(origin.env if origin else {})
    return subprocess.run([sidecar_bin, *args, *([] if args[:1] == ("cache",) else ["--no-agent"])], env=env,
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL, preexec_fn=preexec_fn)


def status_json(sidecar_bin, mock, tmp_path, cache, **kw) -> dict:
    done = verb(sidecar_bin, mock, tmp_path, cache, "status", "--output", "json", **kw)
    assert done.returncode in (0, 2), done.stderr  # 2: nobody signed in
    return json.loads(done.stdout)


def text(done: subprocess.CompletedProcess) -> str:
    return done.stdout.decode()


def keyring_header() -> bytes:
    """The header line of a file this process's kernel keyring sealed: the boot and the user
    namespace whose persistent keyring holds the key (issue #35)."""
    boot = open("/proc/sys/kernel/random/boot_id").read().strip()
    userns = os.readlink("/proc/self/ns/user").split("[")[1].rstrip("]")
    return f"auth-sidecar-aes256gcm-v1 keyring boot={boot} userns={userns}\n".encode()


def token_bytes_absent(path: str, secrets: list[str], header: bytes = HEADER) -> None:
    data = open(path, "rb").read()
    assert data.startswith(header), data[:100]
    for secret in secrets:
        assert secret and secret.encode() not in data
    assert b"0.MOCK." not in data and b"RefreshToken" not in data and ALICE.encode() not in data


# --- kernel keyring ---------------------------------------------------------------------------

def test_keyring_keeps_the_key_and_the_file_holds_no_token(launch, mock, tmp_path, keyring, sidecar_bin):
    ring, made = keyring
    cache = str(tmp_path / "kr" / "cache.json")
    made.append(key_description(cache))
    p = launch(cache=cache, cacheProtection="auto", env=no_dbus(), initialize=False)
    result = p.initialize(cache=cache, cacheProtection="auto")
    protection = result["cacheProtection"]
    assert protection["layer"] == "keyring", protection
    assert protection["skipped"] == [{"layer": "secretService", "reason": "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"}]
    # No key is stored for a cache never written.
    assert keyctl("search", ring, "user", key_description(cache), check=False).returncode != 0
    signed_in = p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    token_bytes_absent(cache, [signed_in["accessToken"], signed_in.get("idToken")], keyring_header())

    # keyctl sees the key in the persistent keyring; another uid does not.
    key_id = keyctl("search", ring, "user", key_description(cache)).stdout.decode().strip()
    assert len(keyctl("pipe", key_id).stdout) == 32
    if os.geteuid() == 0:
        os.chmod(tmp_path, 0o755)  # runuser's working directory may be here; nothing else matters
        other = keyctl("pipe", key_id, user="nobody", check=False)
        assert other.returncode != 0 and len(other.stdout) == 0, other
        other = keyctl("search", ring, "user", key_description(cache), user="nobody", check=False)
        assert other.returncode != 0, other

    # A fresh process serves the cached token: no token request.
    before = mock.admin.counts()
    q = launch(cache=cache, cacheProtection="auto", env=no_dbus())
    r = q.silent()
    assert r["fromCache"] is True and r["accessToken"] == signed_in["accessToken"], r
    after = mock.admin.counts()
    assert {k: v for k, v in after.items() if k.startswith("token")} == \
        {k: v for k, v in before.items() if k.startswith("token")}

    status = status_json(sidecar_bin, mock, tmp_path, cache)
    assert status["cacheProtection"]["layer"] == "keyring" and status["cacheProtection"]["encrypted"] is True
    shown = text(verb(sidecar_bin, mock, tmp_path, cache, "status"))
    assert "(encrypted), key in the kernel keyring" in shown and "secretService skipped: no D-Bus session" in shown


def test_processes_starting_together_agree_on_one_key(launch, mock, tmp_path, keyring):
    """Two processes start with no key in the keyring (each makes one); the first to write
    stores its key, under the cache's lock, and the other adopts it: both keep working."""
    ring, made = keyring
    cache = str(tmp_path / "two" / "cache.json")
    made.append(key_description(cache))
    first = launch(cache=cache, cacheProtection="auto", env=no_dbus())
    second = launch(cache=cache, cacheProtection="auto", env=no_dbus())
    first.sign_in(loginHint=ALICE)
    assert second.silent()["fromCache"] is True  # it reads what the first sealed
    second.ok("acquireTokenSilent", {"scopes": ["User.Read"], "forceRefresh": True}, timeout=30)  # and writes
    third = launch(cache=cache, cacheProtection="auto", env=no_dbus())
    assert third.silent()["fromCache"] is True


@pytest.fixture
def keyring_sealed(launch, mock, tmp_path, keyring):
    """A cache sealed by the kernel keyring layer, ALICE signed in; (ring, cache, sealed bytes)."""
    ring, made = keyring
    cache = str(tmp_path / "sealed" / "cache.json")
    made.append(key_description(cache))
    p = launch(cache=cache, cacheProtection="auto", env=no_dbus())
    p.sign_in(loginHint=ALICE)
    assert p.finish()[1] == 0
    sealed = open(cache, "rb").read()
    assert sealed.startswith(keyring_header()), sealed[:100]
    return ring, cache, sealed


def test_after_a_reboot_the_unreadable_cache_is_set_aside(mock, tmp_path, keyring_sealed, sidecar_bin):
    """A reboot empties the kernel keyring: the key is gone, so the sealed cache can never be
    opened again. It is renamed (kept), a new empty cache starts, and status says so. The
    reboot's stand-in: `keyctl invalidate` (issue #35: this process's own keyring provably has
    no key, so it is still set aside)."""
    ring, cache, sealed = keyring_sealed
    key_id = keyctl("search", ring, "user", key_description(cache)).stdout.decode().strip()
    keyctl("invalidate", key_id)  # what a reboot does to it

    status = status_json(sidecar_bin, mock, tmp_path, cache)
    protection = status["cacheProtection"]
    assert protection["keyCreated"] is True and protection["setAside"], protection
    assert open(protection["setAside"], "rb").read() == sealed
    assert status["accounts"] == []
    shown = text(verb(sidecar_bin, mock, tmp_path, cache, "status"))
    assert "set aside" in shown and "sign in again" in shown


# --- nothing available ------------------------------------------------------------------------

@needs_seccomp
def test_no_layer_and_no_choice_fails_naming_each_layer(sidecar_bin, mock, tmp_path):
    cache = str(tmp_path / "none" / "cache.json")
    done = verb(sidecar_bin, mock, tmp_path, cache, "status", preexec_fn=refuse_keyctl)
    assert done.returncode == 1, done
    message = done.stderr.decode()
    for line in ("secretService: no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)",
                 "keyring: the kernel refused keyctl(KEYCTL_GET_PERSISTENT): Operation not permitted",
                 'keyFile: not configured; to use it: "cache": {"encryption": {"keyFile": "/absolute/path"}}',
                 "keyCommand: not configured",
                 'plaintext: not chosen; to use it: "cacheProtection": "plaintext"'):
        assert line in message, message
    assert not os.path.exists(cache)


@needs_seccomp
def test_plaintext_works_when_chosen_and_status_says_so(launch, sidecar_bin, mock, tmp_path):
    cache = str(tmp_path / "plain" / "cache.json")
    launch(cache=cache, cacheProtection="plaintext").sign_in(loginHint=ALICE)
    json.load(open(cache))  # MSAL's JSON
    status = status_json(sidecar_bin, mock, tmp_path, cache, protection="plaintext", preexec_fn=refuse_keyctl)
    assert status["cacheProtection"]["layer"] == "plaintext" and status["cacheProtection"]["encrypted"] is False
    assert [a["account"]["username"] for a in status["accounts"]] == [ALICE]
    shown = text(verb(sidecar_bin, mock, tmp_path, cache, "status", protection="plaintext", preexec_fn=refuse_keyctl))
    assert '(not encrypted), plaintext chosen: cacheProtection "plaintext"' in shown


# --- migration --------------------------------------------------------------------------------

def write_key(tmp_path) -> str:
    path = tmp_path / "cache.key"
    path.write_bytes(os.urandom(32))
    os.chmod(path, 0o600)
    return str(path)


@pytest.fixture
def plaintext_cache(mock, tmp_path, monkeypatch, default_port):  # noqa: F811
    """(path, bytes, refresh tokens) of a plaintext cache MSAL for Python (unmodified) wrote:
    its interactive sign-in against the mock through the scripted browser, serialized."""
    data = interactive_cache(mock, tmp_path, monkeypatch, default_port, CLIENT_ID)
    path = tmp_path / "mig" / "cache.json"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(data)
    os.chmod(path, 0o600)
    secrets = [e["secret"] for e in json.loads(data)["RefreshToken"].values()]
    assert secrets
    return str(path), data, secrets


def test_a_plaintext_cache_is_encrypted_in_place_at_start_up(sidecar_bin, mock, tmp_path, plaintext_cache, default_port):  # noqa: F811
    cache, data, secrets = plaintext_cache
    key = write_key(tmp_path)
    status = status_json(sidecar_bin, mock, tmp_path, cache, key_file=key, origin=default_port)
    protection = status["cacheProtection"]
    assert protection["migrated"] is True and protection["encrypted"] is True and protection["layer"] == "keyFile"
    assert [a["account"]["username"] for a in status["accounts"]] == [ALICE]
    token_bytes_absent(cache, secrets)
    assert set(os.listdir(os.path.dirname(cache))) <= {"cache.json", "cache.json.lockfile"}  # no plaintext copy left

    exported = verb(sidecar_bin, mock, tmp_path, cache, "cache", "export", "--plaintext", key_file=key)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout) == json.loads(data)
    assert b"warning: this is your token cache in plaintext" in exported.stderr
    refused = verb(sidecar_bin, mock, tmp_path, cache, "cache", "export", key_file=key)
    assert refused.returncode != 0 and b"--plaintext is required" in refused.stderr


@pytest.mark.time_limit(600)
def test_kill_9_during_migration_loses_nothing(sidecar_bin, mock, tmp_path, plaintext_cache):
    cache, data, _ = plaintext_cache
    key = write_key(tmp_path)
    verb(sidecar_bin, mock, tmp_path, cache, "cache", "export", "--plaintext", key_file=key)  # writes the config
    env = {k: v for k, v in no_dbus(process_env(mock, tmp_path)).items() if k != "AUTH_SIDECAR_SOCK"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "verb-config")
    expected = json.loads(data)
    rng = random.Random(20)
    outcomes = {"plain": 0, "sealed": 0}
    for _ in range(KILL_ROUNDS):
        with open(cache, "wb") as f:
            f.write(data)
        os.chmod(cache, 0o600)
        proc = subprocess.Popen([sidecar_bin, "status", "--no-agent"], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = open(cache, "rb").read()  # there is always a file
        if now.startswith(HEADER):
            outcomes["sealed"] += 1
            exported = subprocess.run([sidecar_bin, "cache", "export", "--plaintext"], env=env, capture_output=True,
                                      timeout=30, stdin=subprocess.DEVNULL)
            assert exported.returncode == 0, exported.stderr
            assert json.loads(exported.stdout) == expected
        else:
            outcomes["plain"] += 1
            assert now == data
    print(f"kill -9 rounds: {outcomes}")
    done = subprocess.run([sidecar_bin, "status", "--no-agent"], env=env, capture_output=True, timeout=30,
                          stdin=subprocess.DEVNULL)  # left alone, the migration completes
    assert done.returncode in (0, 2) and open(cache, "rb").read().startswith(HEADER), done.stderr


# --- key command ------------------------------------------------------------------------------

def key_command_init(launch, tmp_path, command):
    cache = str(tmp_path / "kc" / "cache.json")
    p = launch(cache={"path": cache, "encryption": {"keyCommand": command}}, cacheProtection="auto", initialize=False)
    return p, p.call("initialize", p.config_for({"path": cache, "encryption": {"keyCommand": command}},
                                                cacheProtection="auto"), timeout=30), cache


def test_a_key_command_gives_the_key(launch, tmp_path):
    key = os.urandom(32).hex()
    p, reply, cache = key_command_init(launch, tmp_path, ["printf", "%s\\n", key])
    assert reply["result"]["cacheProtection"]["layer"] == "keyCommand", reply
    p.sign_in(loginHint=ALICE)
    assert open(cache, "rb").read().startswith(HEADER)


@pytest.mark.time_limit(60)
@pytest.mark.parametrize("command, reason", [
    (["false"], "false: exited with status 1"),
    (["no-such-key-program-here"], "no-such-key-program-here: cannot start"),
    (["yes"], "yes: printed more than 4096 bytes; killed"),
    (["printf", "short"], "printf printed no 32-byte key"),
    (["sleep", "30"], "sleep: no answer within 10 s; killed"),
])
def test_a_failing_key_command_is_a_clear_error(launch, tmp_path, command, reason):
    p, reply, cache = key_command_init(launch, tmp_path, command)
    error = reply["error"]
    assert error["code"] == -51005 and reason in error["message"], error
    assert "keyCommand" in error["message"]
    assert not os.path.exists(cache)
