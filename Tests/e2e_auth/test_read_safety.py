"""Issue 35, item 4: everything read from a path (the cache, the key file, the configuration
file, `login --import`'s Azure CLI cache) is opened without blocking and without following a
link, then refused unless it is a regular file of the user's that group and others cannot
write. A FIFO at any of those paths used to hang start-up, `token`, `status` and
`login --import` forever; `login --import` followed links and imported files other users own
or can write (their refresh token, used as the victim's).

Each command must answer within 2 s (a FIFO with no writer would block `open` for ever) with
an error naming the path. The machine runs the tests as root, so "another user's file" is a
file chowned to `nobody`."""
from __future__ import annotations

import json
import os
import pwd
import subprocess

import pytest

import sidecar as sc
from auth_e2e import CLIENT_ID, process_env

FAST = 2  # seconds: a FIFO read would block for ever


def verb(sidecar_bin, mock, tmp_path, *args, cache=None, key_file=None, protection="plaintext", config_text=None):
    """A verb (no agent, no D-Bus) configured by $XDG_CONFIG_HOME/auth-sidecar/config.json,
    Azure CLI's directory at tmp_path/azure; raises TimeoutExpired if it does not answer."""
    home = tmp_path / "verb-config"
    (home / "auth-sidecar").mkdir(parents=True, exist_ok=True)
    config_path = home / "auth-sidecar" / "config.json"
    if config_text is None and not os.path.exists(config_path):
        encryption = {"encryption": {"keyFile": key_file}} if key_file else {}
        config = {"clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
                  "cache": {"path": cache or str(tmp_path / "ours" / "cache.json"), **encryption}}
        if not key_file:
            config["cacheProtection"] = protection
        config_path.write_text(json.dumps(config))
    env = {k: v for k, v in process_env(mock, tmp_path).items() if k != "AUTH_SIDECAR_SOCK"}
    env.update({"XDG_CONFIG_HOME": str(home), "DBUS_SESSION_BUS_ADDRESS": "", "AZURE_CONFIG_DIR": str(tmp_path / "azure")})
    done = subprocess.run([sidecar_bin, *args, "--no-agent"], env=env, capture_output=True, timeout=FAST,
                          stdin=subprocess.DEVNULL)
    return done, done.stdout.decode() + done.stderr.decode()


def fifo(path) -> str:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.mkfifo(path, 0o600)
    return str(path)


# --- a FIFO at each path: an answer, not a hang --------------------------------------------

@pytest.mark.parametrize("command", [["token", "--scope", "User.Read"], ["status"]])
def test_a_fifo_at_the_key_file_is_refused_at_once(sidecar_bin, mock, tmp_path, command):
    key = fifo(tmp_path / "keys" / "cache.key")
    done, text = verb(sidecar_bin, mock, tmp_path, *command, key_file=key)
    assert done.returncode != 0 or command == ["status"], text
    assert key in text and "FIFO" in text, text


@pytest.mark.parametrize("command", [["token", "--scope", "User.Read"], ["status"]])
def test_a_fifo_at_the_cache_is_refused_at_once(sidecar_bin, mock, tmp_path, command):
    cache = fifo(tmp_path / "ours" / "cache.json")
    done, text = verb(sidecar_bin, mock, tmp_path, *command, cache=cache)
    assert done.returncode != 0, text
    assert cache in text and "not a regular file" in text, text


@pytest.mark.parametrize("command", [["token", "--scope", "User.Read"], ["status"]])
def test_a_fifo_at_the_configuration_file_is_refused_at_once(sidecar_bin, mock, tmp_path, command):
    config = fifo(tmp_path / "verb-config" / "auth-sidecar" / "config.json")
    done, text = verb(sidecar_bin, mock, tmp_path, *command, config_text="")
    assert done.returncode != 0, text
    assert config in text and "FIFO" in text, text


def test_the_stdio_mode_answers_with_fifos_at_its_paths(launch, sidecar_bin, mock, tmp_path):
    # start-up with a FIFO as --config: refused at once, naming it
    config = fifo(tmp_path / "fifo-config.json")
    done = subprocess.run([sidecar_bin, "--config", config], env=process_env(mock, tmp_path), capture_output=True,
                          timeout=FAST, stdin=subprocess.DEVNULL)
    # a configuration failure, not a usage error: one line naming the file, status 1
    assert done.returncode == 1 and config in done.stderr.decode() and "FIFO" in done.stderr.decode(), done.stderr
    assert "Usage:" not in done.stderr.decode(), done.stderr
    # a FIFO as the key file: initialize refuses it
    key = fifo(tmp_path / "keys" / "cache.key")
    p = launch(initialize=False)
    r = p.call("initialize", p.config_for({"path": str(tmp_path / "c" / "cache.json"), "encryption": {"keyFile": key}}),
               timeout=FAST)
    e = sc.assert_error(r, -32602, name="invalidParams")
    assert key in e["message"] and "FIFO" in e["message"], e
    # a FIFO as the cache: each request answers
    cache = fifo(tmp_path / "fifo-cache" / "cache.json")
    p = launch(cache=cache, cacheProtection="plaintext")
    e = p.error("getAccounts", {}, -51005, name="cacheUnavailable", timeout=FAST)
    assert cache in e["message"] and "not a regular file" in e["message"], e


def test_a_fifo_at_azure_clis_cache_neither_hangs_status_nor_import(sidecar_bin, mock, tmp_path):
    source = fifo(tmp_path / "azure" / "msal_token_cache.json")
    done, text = verb(sidecar_bin, mock, tmp_path, "status")
    assert done.returncode == 2, text  # nobody signed in, nothing importable
    assert "can be imported" not in text, text
    assert f"import:     Azure CLI ({source}): refused" in text and "FIFO" in text, text
    done, _ = verb(sidecar_bin, mock, tmp_path, "status", "--output", "json")
    problems = json.loads(done.stdout)["importProblems"]
    assert len(problems) == 1 and source in problems[0] and "FIFO" in problems[0], problems
    done, text = verb(sidecar_bin, mock, tmp_path, "login", "--import")
    assert done.returncode != 0, text
    assert source in text and "FIFO" in text, text


# --- login --import: links, other users' files, loose directories --------------------------

MSAL_CACHE = json.dumps({"AccessToken": {}, "RefreshToken": {}, "IdToken": {}, "Account": {}, "AppMetadata": {}})


def planted(tmp_path) -> str:
    """An MSAL cache somewhere else (another user's, say), which no import may read."""
    theirs = tmp_path / "theirs" / "msal_token_cache.json"
    theirs.parent.mkdir(mode=0o700)
    theirs.write_text(MSAL_CACHE)
    os.chmod(theirs, 0o600)
    return str(theirs)


def refused(sidecar_bin, mock, tmp_path, path, words):
    done, text = verb(sidecar_bin, mock, tmp_path, "login", "--import")
    assert done.returncode != 0, text
    assert "refused" in text and str(path) in text, text
    for word in words:
        assert word in text, text


def test_import_refuses_a_linked_source(sidecar_bin, mock, tmp_path):
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir(mode=0o700)
    os.symlink(planted(tmp_path), source)
    refused(sidecar_bin, mock, tmp_path, source, ["symbolic link"])


def test_import_refuses_a_linked_directory(sidecar_bin, mock, tmp_path):
    theirs = planted(tmp_path)
    os.symlink(os.path.dirname(theirs), tmp_path / "azure")
    refused(sidecar_bin, mock, tmp_path, tmp_path / "azure", ["symbolic link"])


def test_import_refuses_another_users_source(sidecar_bin, mock, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    nobody = pwd.getpwnam("nobody").pw_uid
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir(mode=0o700)
    source.write_text(MSAL_CACHE)
    os.chmod(source, 0o600)
    os.chown(source, nobody, -1)
    refused(sidecar_bin, mock, tmp_path, source, ["owned by another user", f"uid {nobody}"])
    os.chown(source, 0, -1)
    os.chown(source.parent, nobody, -1)
    refused(sidecar_bin, mock, tmp_path, source.parent, ["owned by another user"])


@pytest.mark.parametrize("mode", [0o620, 0o602])
def test_import_refuses_a_source_others_can_write(sidecar_bin, mock, tmp_path, mode):
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir(mode=0o700)
    source.write_text(MSAL_CACHE)
    os.chmod(source, mode)
    refused(sidecar_bin, mock, tmp_path, source, ["writable by group or others", f"chmod 600 {source}"])
    assert os.stat(source).st_mode & 0o777 == mode, "the source is never changed"


@pytest.mark.parametrize("mode", [0o770, 0o777])
def test_import_refuses_a_directory_others_can_write(sidecar_bin, mock, tmp_path, mode):
    directory = tmp_path / "azure"
    directory.mkdir()
    os.chmod(directory, mode)
    (directory / "msal_token_cache.json").write_text(MSAL_CACHE)
    os.chmod(directory / "msal_token_cache.json", 0o600)
    refused(sidecar_bin, mock, tmp_path, directory, ["writable by group or others", f"chmod 700 {directory}"])


def test_a_key_file_in_a_directory_others_can_write_is_refused(sidecar_bin, mock, tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    os.chmod(keys, 0o777)
    key = keys / "cache.key"
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    done, text = verb(sidecar_bin, mock, tmp_path, "token", "--scope", "User.Read", key_file=str(key))
    assert done.returncode != 0 and str(keys) in text and "writable by group or others" in text, text
