"""The agent's systemd user unit (contrib/systemd, which every package ships) runs the agent
where the user's shells reach the same cache key (issue #35): the agent is started the way the
unit would start it, its namespace and keyring settings applied with `unshare` and `keyctl`
(systemd is not needed), a sign-in goes through it, and a shell's `token` without the agent
then reads the cache the agent sealed.

In a user unit every setting that needs a mount namespace implies PrivateUsers=yes (systemd
>= 253), a user namespace with a persistent keyring of its own: run here as `unshare -U -c`.
KeyringMode=private is `keyctl session -` (a session keyring without the user keyring),
shared the same with the user keyring linked in, inherit (a user unit's default) as is.
"""
from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import time

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env
from test_keystore import key_description, keyring, no_dbus  # noqa: F401  (keyring: the fixture)

UNIT = os.path.join(os.path.dirname(__file__), "..", "..", "contrib", "systemd", "auth-sidecar-agent.service")

# The sandboxing settings that need a mount (or other) namespace: in a user unit each implies
# PrivateUsers=yes (systemd.exec(5)).
IMPLY_PRIVATE_USERS = {
    "PrivateUsers", "PrivateTmp", "PrivateDevices", "PrivateMounts", "PrivateNetwork", "PrivateIPC",
    "ProtectSystem", "ProtectHome", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
    "ProtectControlGroups", "ProtectHostname", "ProtectProc", "ProcSubset", "ReadWritePaths", "ReadOnlyPaths",
    "InaccessiblePaths", "ExecPaths", "NoExecPaths", "TemporaryFileSystem", "BindPaths", "BindReadOnlyPaths",
    "RootDirectory", "RootImage", "MountImages",
}


def unit_service(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # keys as written
    parser.read_string(text)
    return dict(parser["Service"])


def launch_prefix(service: dict[str, str]) -> list[str]:
    """The commands that give the agent the unit's user namespace and session keyring."""
    prefix: list[str] = []
    if any(service.get(k, "no").lower() not in ("no", "false", "0", "") for k in IMPLY_PRIVATE_USERS):
        prefix += ["unshare", "-U", "-c"]
    mode = service.get("KeyringMode", "inherit")  # a user unit's default
    if mode == "private":
        prefix += ["keyctl", "session", "-"]
    elif mode == "shared":
        prefix += ["keyctl", "session", "-", "sh", "-c", 'keyctl link @u @s >/dev/null && exec "$@"', "sh"]
    return prefix


def agent_argv(service: dict[str, str], binary: str) -> list[str]:
    words = service["ExecStart"].split()
    assert words[0].endswith("/auth-sidecar") and words[1] == "agent", words
    return [binary, *words[1:]]


def test_the_unit_keeps_the_agent_in_the_users_namespace_and_keyring():
    service = unit_service(open(UNIT).read())
    assert launch_prefix(service)[:3] != ["unshare", "-U", "-c"], "the unit puts the agent in a private user namespace"
    assert service.get("KeyringMode") == "shared"


@pytest.mark.parametrize("unit", ["shipped", "with PrivateTmp"])
def test_a_shells_token_reads_what_the_agent_sealed(sidecar_bin, mock, tmp_path, keyring, launch, unit):  # noqa: F811
    text = open(UNIT).read()
    if unit == "with PrivateTmp":  # what the unit had before issue #35: the agent's key out of the shell's reach
        if shutil.which("unshare") is None or subprocess.run(["unshare", "-U", "-c", "true"]).returncode != 0:
            pytest.skip("unshare -U is not permitted here")
        text = text.replace("NoNewPrivileges=yes", "NoNewPrivileges=yes\nPrivateTmp=yes")
    service = unit_service(text)
    if shutil.which("keyctl") is None:
        pytest.skip("keyctl missing")
    ring, made = keyring
    cache = str(tmp_path / "unit" / "cache.json")
    made.append(key_description(cache))
    config_home = tmp_path / "config"
    (config_home / "auth-sidecar").mkdir(parents=True)
    (config_home / "auth-sidecar" / "config.json").write_text(json.dumps({
        "clientId": CLIENT_ID, "authority": mock.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
        "cache": {"path": cache}, "cacheProtection": "auto", "scopes": ["User.Read"]}))
    socket = str(tmp_path / "agent" / "agent.sock")
    env = no_dbus(process_env(mock, tmp_path, env={"XDG_CONFIG_HOME": str(config_home), "AUTH_SIDECAR_SOCK": socket}))
    log = tmp_path / "agent.log"
    with open(log, "wb") as stderr:
        agent = subprocess.Popen([*launch_prefix(service), *agent_argv(service, sidecar_bin), "--log-level", "info"],
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 20
        while "agent listening" not in log.read_text(errors="replace"):
            assert agent.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.05)
        p = launch(env=env, initialize=False)  # a client of the agent
        p.initialize(cache=cache, cacheProtection="auto", scopes=["User.Read"])
        p.sign_in(loginHint=ALICE)
        assert os.path.exists(cache)
        shell = subprocess.run([sidecar_bin, "token", "--no-agent"], env=env, capture_output=True, timeout=60,
                               stdin=subprocess.DEVNULL)
        if unit == "shipped":
            assert shell.returncode == 0 and shell.stdout.strip(), shell.stderr.decode()
        else:
            assert shell.returncode == 1 and b"out of reach" in shell.stderr, shell.stderr.decode()
        assert not [n for n in os.listdir(os.path.dirname(cache)) if ".undecryptable-" in n]
    finally:
        agent.kill()
        agent.wait()
