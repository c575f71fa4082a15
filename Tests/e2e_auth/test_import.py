"""`auth-sidecar login --import` (issue #20): the sign-ins Azure CLI and azure-identity already
made, imported read-only into an empty cache, so a first run needs no new sign-in.

* Azure CLI: a cache MSAL for Python (PyPI msal, as Azure CLI uses it) wrote at Azure CLI's
  path ($AZURE_CONFIG_DIR/msal_token_cache.json) for Azure CLI's client id, a family (FOCI)
  refresh token: `status` says it can be imported; `login --import` imports it; a silent token
  for our client then works through the mock (a family refresh, with our client id); the
  source is unchanged byte for byte (and its mode and time).
* azure-identity: its Secret Service item (schema msal.cache.nocae, attribute
  MsalClientID=Microsoft.Developer.IdentityService), written by Debian's msal-extensions
  (LibsecretPersistence, /usr/bin/python3 with python3-gi, gir1.2-secret-1), in a headless
  GNOME Keyring: imported; the item unchanged.
* Only our authority's environment: a configuration at another origin imports nothing.
* A malformed source: a clear error naming it; the file untouched. A cache with sign-ins is
  never filled.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from auth_e2e import ALICE, CLIENT_ID, process_env
from keyring_session import keyring_session  # noqa: F401  (the fixture)
from msal_python import default_port, interactive_cache  # noqa: F401  (default_port: the fixture)

AZ_CLIENT_ID = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"


@pytest.fixture
def azure_cli_cache(mock, tmp_path, monkeypatch, default_port) -> bytes:  # noqa: F811
    """The JSON MSAL for Python writes for Azure CLI's client after an interactive sign-in
    against the mock at https://localhost (the family's refresh token)."""
    mock.admin.config(foci="1")
    mock.admin.clients(client_id=AZ_CLIENT_ID, family="1", name="Azure CLI")
    data = interactive_cache(mock, tmp_path, monkeypatch, default_port, AZ_CLIENT_ID)
    assert [rt["family_id"] for rt in json.loads(data)["RefreshToken"].values()] == ["1"]
    return data


def run(sidecar_bin, mock, tmp_path, *args, authority=None, env=None, origin=None, cache=None):
    """A verb configured by a configuration file (our client at `authority`, default: the
    origin's), no agent."""
    config = {"clientId": CLIENT_ID, "authority": (authority or origin.url) + "/organizations",
              "knownAuthorities": [origin.host if origin and not authority else "127.0.0.1"],
              "cache": {"path": cache or str(tmp_path / "ours" / "cache.json")}, "cacheProtection": "plaintext"}
    home = tmp_path / "verb-config"
    (home / "auth-sidecar").mkdir(parents=True, exist_ok=True)
    (home / "auth-sidecar" / "config.json").write_text(json.dumps(config))
    e = {k: v for k, v in process_env(mock, tmp_path).items() if k != "AUTH_SIDECAR_SOCK"}
    e.update({"XDG_CONFIG_HOME": str(home), "DBUS_SESSION_BUS_ADDRESS": "", "AZURE_CONFIG_DIR": str(tmp_path / "azure")})
    e.update(origin.env if origin else {})
    e.update(env or {})
    return subprocess.run([sidecar_bin, *args, "--no-agent"], env=e, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def snapshot(path: str) -> tuple:
    st = os.stat(path)
    return open(path, "rb").read(), st.st_mode, st.st_mtime_ns, st.st_ino


def test_azure_cli_sign_ins_are_imported_read_only(sidecar_bin, mock, tmp_path, azure_cli_cache, default_port):  # noqa: F811
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir()
    source.write_bytes(azure_cli_cache)
    os.chmod(source, 0o644)  # as Azure CLI leaves it; never "fixed" by us
    before = snapshot(str(source))

    status = run(sidecar_bin, mock, tmp_path, "status", origin=default_port)
    assert status.returncode == 2, status.stderr  # nobody signed in yet
    assert "1 account can be imported: auth-sidecar login --import" in status.stdout.decode(), status.stdout
    assert b"can be imported" in status.stderr, status.stderr
    shown = run(sidecar_bin, mock, tmp_path, "status", "--output", "json", origin=default_port)
    assert json.loads(shown.stdout)["importableAccounts"] == 1

    done = run(sidecar_bin, mock, tmp_path, "login", "--import", origin=default_port)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith(f"Imported 1 account from Azure CLI ({source}): {ALICE}"), done.stdout
    ours = json.loads(open(tmp_path / "ours" / "cache.json").read())
    assert not ours["AccessToken"] and [rt["client_id"] for rt in ours["RefreshToken"].values()] == [AZ_CLIENT_ID]

    mock.admin.counts__reset()
    mock.admin.log__clear()
    token = run(sidecar_bin, mock, tmp_path, "token", origin=default_port)
    assert token.returncode == 0, token.stderr
    assert token.stdout.strip().count(b".") == 2  # a JWT
    assert mock.admin.count("token:refresh_token") == 1
    assert [r["form"]["client_id"] for r in mock.admin.log("token")] == [CLIENT_ID]  # the family token, our id

    again = run(sidecar_bin, mock, tmp_path, "login", "--import", origin=default_port)
    assert again.returncode == 1 and b"already holds sign-ins" in again.stderr, again
    assert snapshot(str(source)) == before


def test_only_our_authoritys_environment_is_imported(sidecar_bin, mock, tmp_path, azure_cli_cache):
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir()
    source.write_bytes(azure_cli_cache)  # environment "localhost"; ours is 127.0.0.1:PORT
    done = run(sidecar_bin, mock, tmp_path, "login", "--import", authority=mock.url)
    assert done.returncode == 1 and b"nothing to import" in done.stderr, done
    assert not os.path.exists(tmp_path / "ours" / "cache.json")
    assert open(source, "rb").read() == azure_cli_cache


def test_a_malformed_source_is_a_clear_error_and_left_alone(sidecar_bin, mock, tmp_path):
    source = tmp_path / "azure" / "msal_token_cache.json"
    source.parent.mkdir()
    source.write_bytes(b'{"RefreshToken": [1, 2')
    done = run(sidecar_bin, mock, tmp_path, "login", "--import", authority=mock.url)
    assert done.returncode == 1, done
    assert f"Azure CLI ({source}): not an MSAL token cache (not JSON".encode() in done.stderr, done.stderr
    assert open(source, "rb").read() == b'{"RefreshToken": [1, 2'


MSAL_EXTENSIONS_WRITE = r"""
import sys
from msal_extensions.persistence import LibsecretPersistence
p = LibsecretPersistence(sys.argv[1], schema_name="msal.cache.nocae",
                         attributes={"MsalClientID": "Microsoft.Developer.IdentityService"})
p.save(sys.stdin.read())
print(p.load() == p.load())
"""


def test_azure_identitys_secret_service_item_is_imported(sidecar_bin, mock, tmp_path, azure_cli_cache, default_port,  # noqa: F811
                                                        keyring_session):  # noqa: F811
    probe = subprocess.run(["/usr/bin/python3", "-c", "import gi, msal_extensions; gi.require_version('Secret', '1')"],
                           capture_output=True)
    if probe.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"scripts/setup.sh installs python3-msal-extensions python3-gi gir1.2-secret-1: {probe.stderr}")
        pytest.skip("Debian's python3-msal-extensions, python3-gi, gir1.2-secret-1 are missing")
    env = {**os.environ, **keyring_session.env}
    written = subprocess.run(["/usr/bin/python3", "-c", MSAL_EXTENSIONS_WRITE, str(tmp_path / "signal")],
                             input=azure_cli_cache, env=env, capture_output=True, timeout=30)
    assert written.returncode == 0, written.stderr
    lookup = ["lookup", "xdg:schema", "msal.cache.nocae", "MsalClientID", "Microsoft.Developer.IdentityService"]
    item = keyring_session.secret_tool(*lookup).stdout
    assert item == azure_cli_cache

    bus = {"DBUS_SESSION_BUS_ADDRESS": keyring_session.address}
    done = run(sidecar_bin, mock, tmp_path, "login", "--import", origin=default_port, env=bus)
    assert done.returncode == 0, done.stderr
    assert f"from azure-identity (Secret Service item msal.cache.nocae): {ALICE}" in done.stdout.decode(), done.stdout
    token = run(sidecar_bin, mock, tmp_path, "token", origin=default_port, env=bus)
    assert token.returncode == 0, token.stderr
    assert keyring_session.secret_tool(*lookup).stdout == item
    found = keyring_session.secret_tool("search", "--all", "xdg:schema", "msal.cache.nocae").stdout.decode()
    assert found.count("[/") == 1, found  # still one item, not rewritten by us
