"""What each package puts on PATH and beside its binary, installed as a user would with no
clone (issues #50, #52): npm's `auth-sidecar` on PATH after a global install; the multi-call
names from every package (`docker-credential-auth-sidecar` on PATH; `keyring` and `az` each in a
directory of its own that `auth-sidecar where` names) answering through the sidecar, az's
passthrough reaching the real az past the shim;
the wheel's keyring backend registered; `auth-sidecar where` naming the package's own files."""
from __future__ import annotations

import base64
import json
import os
import re

import pytest

from installed import install

JWT = re.compile(r"^[\w-]+\.[\w-]+\.[\w-]+$")
DEVOPS = "499b84ac-1321-427f-aa17-267ca6975798"
FEED = "https://pkgs.dev.azure.com/contoso/_packaging/feed/pypi/simple/"

SCRIPT = r"""set -e
trap 'auth-sidecar-try stop >/dev/null 2>&1 || true' EXIT
echo "AUTH_SIDECAR $(command -v auth-sidecar)"
echo "HELPER $(command -v docker-credential-auth-sidecar)"
docker-credential-auth-sidecar version
printf 'registry.example.com\n' | docker-credential-auth-sidecar get && exit 9 || echo "HELPER-GET $?"
auth-sidecar where
eval "$(auth-sidecar-try)"
auth-sidecar login --device-code >/dev/null 2>&1
export PATH="$(auth-sidecar where keyring):$PATH"
echo "KEYRING $(command -v keyring)"
echo "PASSWORD $(keyring get "$1" someone)"
keyring get https://example.com/simple/ someone && exit 9 || echo "NOT-FOUND $?"
export PATH="$(auth-sidecar where az):$PATH"
echo "AZ $(command -v az)"
echo "AZ-TOKEN $(az account get-access-token --query accessToken -o tsv)"
# azPassthrough: what the shim does not answer goes to the real az further down PATH (a stand-in
# here), not back to the shim
mkdir "$HOME/real-az" && printf '#!/bin/sh\necho "real az: $*"\n' >"$HOME/real-az/az" && chmod +x "$HOME/real-az/az"
python3 -c 'import json, os, sys; c = json.load(open(os.environ["AUTH_SIDECAR_CONFIG"])); c["azPassthrough"] = True
json.dump(c, open(sys.argv[1], "w"))' "$HOME/passthrough.json"
echo "PASSED $(AUTH_SIDECAR_CONFIG="$HOME/passthrough.json" PATH="$PATH:$HOME/real-az" az group list)"
"""


def claims(token: str) -> dict:
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


@pytest.mark.parametrize("kind", ["wheel", "npm", "tarball"])
def test_commands_on_path_and_the_multi_call_names_answer_from(kind, dist, tmp_path):
    user = install(kind, dist, tmp_path)
    done = user.run(SCRIPT, FEED, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    said = dict(line.split(" ", 1) for line in lines if re.match(r"[A-Z_-]+ ", line))
    bin_dir = user.path.split(":")[0]
    assert said["AUTH_SIDECAR"] == f"{bin_dir}/auth-sidecar", said  # npm -g: PREFIX/bin
    assert said["HELPER"] == f"{bin_dir}/docker-credential-auth-sidecar", said
    assert "docker-credential-auth-sidecar (auth-sidecar " in done.stdout
    assert said["HELPER-GET"] == "1" and "credentials not found in native keychain" in done.stdout
    # `auth-sidecar where`: the package's own directories, each one there.
    share, docs = os.path.join(user.prefix, "share", "auth-sidecar"), os.path.join(user.prefix, "share", "doc", "auth-sidecar")
    listed = dict(line.split("\t") for line in lines if "\t" in line)
    assert {name: listed.get(name) for name in ("neovim", "emacs", "shell", "docs", "keyring", "az")} == {
        "neovim": f"{share}/neovim", "emacs": f"{share}/emacs", "shell": f"{share}/shell", "docs": docs,
        "keyring": f"{share}/keyring-shim/bin", "az": f"{share}/az-shim/bin"}, listed
    for member in ("README.md", "protocol/README.md", "protocol/openrpc.json"):
        assert os.path.getsize(os.path.join(docs, member)) > 0, member
    assert open(os.path.join(share, "shell", "README.md")).read().startswith("# auth-sidecar from the shell")
    # keyring from its own directory: a token for Azure DevOps through the sidecar, "not found" else.
    assert said["KEYRING"] == f"{share}/keyring-shim/bin/keyring", said
    password = said["PASSWORD"]
    assert JWT.match(password) and claims(password)["aud"] == DEVOPS, password
    assert said["NOT-FOUND"] == "1", said
    # az from its own directory (the wheel's and npm's a script, the others' a link)
    assert said["AZ"] == f"{share}/az-shim/bin/az", said
    assert JWT.match(said["AZ-TOKEN"]), said
    assert said["PASSED"] == "real az: group list", done.stdout + done.stderr


def test_the_wheel_registers_its_keyring_backend(dist, tmp_path):
    """twine and pip --keyring-provider import find the backend by its entry point."""
    user = install("wheel", dist, tmp_path)
    found = user.run("python -c 'import importlib.metadata as m; "
                     "print([e.value for e in m.distribution(\"auth_sidecar\").entry_points if e.group == \"keyring.backends\"])'")
    assert found.returncode == 0 and found.stdout.strip() == "['auth_sidecar.keyring_backend']", found
