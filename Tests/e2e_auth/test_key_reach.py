"""A key out of reach is never taken for a key that is gone (issue #35), on the kernel keyring
layer with no D-Bus.

* Another session keyring (`keyctl session -`: systemd system services and timers running as
  the user, some su/sudo set-ups) gets EACCES searching the persistent keyring; another user
  namespace (`unshare -U -r`: rootless containers, toolbox) has a persistent keyring of its
  own. Either way `token` and `logout` leave the file in place and sealed as it was, exit 1
  with a message naming the file, the layer, why and what to do, and the user's own next
  `token` works. `status` says the same.
* The key invalidated (what a reboot does to it) still sets the file aside, and `status` says
  so: test_keystore.py's test_after_a_reboot_the_unreadable_cache_is_set_aside.
* A sign-in where the key cannot be stored fails before the browser or the device code.
* The file's header records the keyring (boot and user namespace) that sealed it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from auth_e2e import CLIENT_ID, process_env
from test_keystore import keyctl, keyring, keyring_sealed, no_dbus  # noqa: F401  (keyring, keyring_sealed: fixtures)


def run(sidecar_bin, mock, tmp_path, cache, *args, prefix=()) -> subprocess.CompletedProcess:
    """A verb without the agent and without D-Bus, configured by a file only, under `prefix`
    (`keyctl session -`, `unshare -U -r`)."""
    home = tmp_path / "reach-config"
    (home / "auth-sidecar").mkdir(parents=True, exist_ok=True)
    (home / "auth-sidecar" / "config.json").write_text(json.dumps({
        "clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
        "cache": {"path": cache}, "cacheProtection": "auto"}))
    env = {k: v for k, v in no_dbus(process_env(mock, tmp_path)).items() if k != "AUTH_SIDECAR_SOCK"}
    env["XDG_CONFIG_HOME"] = str(home)
    return subprocess.run([*prefix, sidecar_bin, *args, "--no-agent"], env=env, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def untouched(cache: str, sealed: bytes) -> None:
    assert open(cache, "rb").read() == sealed
    assert not [n for n in os.listdir(os.path.dirname(cache)) if ".undecryptable-" in n]


OTHER_SESSION = ("keyctl", "session", "-")
OTHER_NAMESPACE = ("unshare", "-U", "-r")


def can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-U", "-r", "true"], capture_output=True).returncode == 0


@pytest.mark.parametrize("prefix, why", [
    (OTHER_SESSION, "the kernel refused to search the user's persistent keyring (Permission denied)"),
    (OTHER_NAMESPACE, "whose keyring is another"),
], ids=["session-keyring", "user-namespace"])
def test_a_key_out_of_reach_leaves_the_file_alone(sidecar_bin, mock, tmp_path, keyring_sealed, prefix, why):
    if prefix == OTHER_NAMESPACE and not can_unshare():
        pytest.skip("unshare -U is not permitted here")
    _, cache, sealed = keyring_sealed
    for verb in (["token"], ["logout"], ["status"]):
        done = run(sidecar_bin, mock, tmp_path, cache, *verb, prefix=prefix)
        message = done.stderr.decode()
        assert done.returncode == 1, (verb, done.returncode, message)
        assert f"the token cache {cache} is left as it is: its key is in the keyring layer, out of reach" in message, message
        assert why in message and "keyctl link @u @s" in message and "AUTH_SIDECAR_SOCK" in message, message
        assert "key file" in message, message
        untouched(cache, sealed)
    mine = run(sidecar_bin, mock, tmp_path, cache, "token")
    assert mine.returncode == 0 and mine.stdout.strip(), mine.stderr.decode()


def test_a_sign_in_where_the_key_cannot_be_stored_fails_before_the_browser(sidecar_bin, mock, tmp_path):
    if shutil.which("keyctl") is None or keyctl("get_persistent", "@u", check=False).returncode != 0:
        pytest.skip("the kernel refuses keyctl here")
    cache = str(tmp_path / "nokey" / "cache.json")
    before = mock.admin.counts()
    for flow in (["login"], ["login", "--device-code"]):
        done = run(sidecar_bin, mock, tmp_path, cache, *flow, prefix=OTHER_SESSION)
        message = done.stderr.decode()
        assert done.returncode == 1 and "keyctl link @u @s" in message, message
        assert "so no key can be stored" in message, message
    assert mock.admin.counts() == before  # no authorize page, no device code asked for
    assert not os.path.exists(tmp_path / "browser.log")
    assert not os.path.exists(cache)
