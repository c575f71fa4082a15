"""The `az` shim as Terraform, the Azure SDKs for C++ and Go and a bare environment call it
(issue #39): no HOME and no XDG_RUNTIME_DIR (the C++ SDK runs `az` with PATH alone),
`az version`, subscriptions as Azure CLI keeps them, and `az login --claims-challenge`.
Shapes are compared with a real Azure CLI 2.91.0's, recorded in Tests/e2e_auth/fixtures/az/.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from auth_e2e import ALICE, CONTOSO_TID
from test_adapters import claims
from test_verbs import RunningAgent, Verbs, verbs  # noqa: F401 (fixture)

STORAGE_DEFAULT = "https://storage.azure.com/.default"
BARE_PATH = "/usr/bin:/bin"
SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"


@pytest.fixture
def az(verbs: Verbs, tmp_path) -> Path:
    shim = tmp_path / "az-shim" / "bin"
    shim.mkdir(parents=True)
    (shim / "az").symlink_to(verbs.binary)
    return shim


def namespace_prefix() -> list[str]:
    """`unshare` for a mount namespace of the test's own (root: as is; else a user namespace
    mapping this user to root), skipping when the machine allows neither."""
    prefix = ["unshare", "--mount", "--propagation", "private"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here (unshare): the bare-environment runs need one to stand in a home")
    return prefix


class BareUser:
    """The password database's home of the user a command runs as, and /run/user/UID, stood in
    by directories of the test's own inside a mount namespace (nothing outside it changes), and
    the system CA bundle with the mock's CA added (a bare environment names no SSL_CERT_FILE)."""

    def __init__(self, verbs: Verbs, tmp_path: Path):
        self.verbs = verbs
        self.home = tmp_path / "passwd-home"
        self.runtime = tmp_path / "run-user-uid"
        for d in (self.home, self.runtime):
            d.mkdir(mode=0o700)
        (self.home / ".config" / "auth-sidecar").mkdir(parents=True)
        shutil.copy(verbs.config_file, self.home / ".config" / "auth-sidecar" / "config.json")
        self.ca = tmp_path / "ca-bundle.crt"
        self.ca.write_bytes(Path(SYSTEM_CA).read_bytes() + b"\n" + Path(verbs.mock.ca_file).read_bytes())
        self.prefix = namespace_prefix()

    def run(self, argv: list[str], runtime_dir: bool = False, env_path: str = BARE_PATH, timeout=60):
        """`env -i PATH=env_path ARGV` in the namespace; with `runtime_dir`, /run/user/UID is
        self.runtime (else there is none)."""
        steps = ['home=$(getent passwd "$(id -u)" | cut -d: -f6)', 'mount --bind "$HOME_SRC" "$home"',
                 'mount --bind "$CA_SRC" ' + SYSTEM_CA, "mkdir -p /run/user", "mount -t tmpfs -o mode=755 tmpfs /run/user"]
        if runtime_dir:
            steps += ['mkdir -m 700 "/run/user/$(id -u)"', 'mount --bind "$RUNTIME_SRC" "/run/user/$(id -u)"']
        steps.append("exec env -i PATH=" + shlex.quote(env_path) + " " + " ".join(shlex.quote(a) for a in argv))
        env = {"PATH": os.environ["PATH"], "HOME_SRC": str(self.home), "RUNTIME_SRC": str(self.runtime),
               "CA_SRC": str(self.ca)}
        return subprocess.run([*self.prefix, "sh", "-ec", " && ".join(steps)], env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def bare(verbs, tmp_path) -> BareUser:
    return BareUser(verbs, tmp_path)


# ---- no HOME, no XDG_RUNTIME_DIR ------------------------------------------------------------

def test_a_bare_environment_finds_the_configuration_in_the_password_databases_home(verbs, mock, az, bare):
    verbs.ok("login")
    p = bare.run([str(az / "az"), "account", "get-access-token", "--output", "json", "--scope", STORAGE_DEFAULT])
    assert p.returncode == 0, p.stderr
    token = json.loads(p.stdout)
    assert claims(token["accessToken"])["aud"] == "https://storage.azure.com" and token["tenant"] == CONTOSO_TID
    shown = bare.run([str(az / "az"), "account", "show", "-o", "json"])
    assert shown.returncode == 0 and json.loads(shown.stdout)["user"]["name"] == ALICE, shown.stderr


def test_a_bare_environment_without_a_configuration_names_the_file_looked_at(verbs, az, bare):
    (bare.home / ".config" / "auth-sidecar" / "config.json").unlink()
    p = bare.run([str(az / "az"), "account", "show"])
    assert p.returncode == 1 and "$XDG_CONFIG_HOME" not in p.stderr, p.stderr
    looked_at = bare.run(["sh", "-c", 'echo "$(getent passwd "$(id -u)" | cut -d: -f6)/.config/auth-sidecar/config.json"'])
    assert looked_at.stdout.strip() in p.stderr, (looked_at.stdout, p.stderr)


def test_a_bare_environment_reaches_the_agent_under_run_user_uid(verbs, mock, az, bare):
    verbs.ok("login")
    socket = bare.runtime / "auth-sidecar" / "agent.sock"
    agent = RunningAgent(verbs.binary, str(socket), verbs.env, verbs.tmp / "agent.log")
    try:
        p = bare.run([str(az / "az"), "account", "get-access-token", "--scope", STORAGE_DEFAULT], runtime_dir=True)
        assert p.returncode == 0, p.stderr
        assert claims(json.loads(p.stdout)["accessToken"])["aud"] == "https://storage.azure.com"
        assert agent.connections == 1  # the shim found the agent at /run/user/UID/auth-sidecar/agent.sock
        without = bare.run([str(az / "az"), "account", "show"], runtime_dir=False)
        assert without.returncode == 0 and agent.connections == 1, without.stderr  # no /run/user/UID: in process
    finally:
        agent.close()
