"""Each package of scripts/package.sh installed the way a user would, on a machine without the
Swift toolchain (issue #21): the wheel in a fresh venv, the .deb with apt, the npm package in a
scratch project, the tarball with its install.sh; each then runs its quick start against the
mock. The binaries they ship are the release binary and load no toolchain library."""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile

import pytest

from as_user import as_a_user, blocks, library_version, no_toolchain

VERSION_LINE = re.compile(r"auth-sidecar (\S+) \(commit [0-9a-f]{12}(\+dirty)?, release-lean build\)")
ALLOWED_LIBRARIES = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shipped_binaries(dist) -> dict[str, bytes]:
    """The auth-sidecar binary inside each package."""
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".data/scripts/auth-sidecar")]
        found = {"wheel": wheel.read(name)}
    with tarfile.open(dist["npm"]) as npm:
        found["npm"] = npm.extractfile("package/bin/auth-sidecar").read()
    with tarfile.open(dist["tarball"]) as tarball:
        (member,) = [m for m in tarball.getmembers() if m.name.endswith("/bin/auth-sidecar")]
        found["tarball"] = tarball.extractfile(member).read()
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", dist["deb"]], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as deb:
        found["deb"] = deb.extractfile("./usr/bin/auth-sidecar").read()
    return found


def assert_agent_reaches_the_users_keyring(unit: str) -> None:
    """The shipped unit keeps the agent where the user's shells reach the cache key (issue #35;
    Tests/e2e_auth/test_systemd_unit.py starts the agent as the unit would): no setting that
    gives a user unit a private user namespace, and the user keyring in its session keyring."""
    settings = [line.split("=", 1)[0] for line in unit.splitlines() if "=" in line and not line.startswith("#")]
    assert not {"PrivateTmp", "PrivateUsers", "PrivateDevices", "ProtectSystem", "ProtectHome"} & set(settings), settings
    assert "KeyringMode=shared" in unit.splitlines()


def test_sums_and_every_binary_is_the_release_binary_needing_no_toolchain(dist, sidecar_bin, tmp_path):
    sums = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=os.path.dirname(dist["sums"]),
                          capture_output=True, text=True)
    assert sums.returncode == 0 and sums.stdout.count(": OK") == 4, sums.stdout + sums.stderr
    with open(sidecar_bin, "rb") as f:
        release = f.read()
    toolchain = no_toolchain.toolchain_libraries()
    for kind, body in shipped_binaries(dist).items():
        assert sha256(body) == sha256(release), f"the {kind} package ships another binary"
        path = tmp_path / kind
        path.write_bytes(body)
        path.chmod(0o755)
        loaded = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
        assert not [lib for lib in toolchain if lib in loaded], (kind, loaded)
        names = {line.split("=>")[0].strip() for line in loaded.splitlines() if "=>" in line}
        assert names <= ALLOWED_LIBRARIES, (kind, names)


def test_wheel_in_a_fresh_venv_runs_the_python_quick_start(dist, tried, tmp_path):
    venv = tmp_path / "venv"
    installed = as_a_user(tried, tmp_path, 'python3 -m venv "$1" && "$1/bin/pip" install -q --no-index "$2"',
                          no_toolchain.BARE_PATH, str(venv), dist["wheel"], timeout=180)
    assert installed.returncode == 0, installed.stderr
    # auth-sidecar on the venv's PATH, the wheel's own binary.
    on_path = as_a_user(tried, tmp_path, 'command -v auth-sidecar && auth-sidecar --version',
                        f"{venv}/bin:{no_toolchain.BARE_PATH}")
    assert on_path.returncode == 0, on_path.stderr
    where, version = on_path.stdout.splitlines()
    assert where == f"{venv}/bin/auth-sidecar"
    assert VERSION_LINE.fullmatch(version) and version.split()[1] == library_version(), version
    # The README's quick start with the venv's python, the venv not on PATH: the client finds
    # the binary installed with it.
    quick, = blocks("## Quick start", "python", "clients/python/README.md")
    code = "import auth_sidecar._common as c; print(c.find_binary())\n" + quick
    done = as_a_user(tried, tmp_path, '"$1" -c "$2"', no_toolchain.BARE_PATH, f"{venv}/bin/python", code, timeout=60)
    assert done.returncode == 0, done.stderr
    binary, result = done.stdout.split("\n", 1)
    assert binary == f"{venv}/bin/auth-sidecar"
    # $AUTH_SIDECAR_BIN still comes first, and the argument before it.
    order = as_a_user(tried, tmp_path, 'AUTH_SIDECAR_BIN=/bin/true "$1" -c "$2"', no_toolchain.BARE_PATH,
                      f"{venv}/bin/python", "import auth_sidecar._common as c; print(c.find_binary(), c.find_binary('/bin/ls'))")
    assert order.stdout.split() == ["/bin/true", "/bin/ls"], order
    assert result.startswith("alice@contoso.com ") and "Alice Example" in result, done.stdout


@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("CI"), reason="apt install needs root")
def test_deb_installs_with_apt_man_page_version_unit_then_removes(dist, tried, tmp_path):
    system_path = "/usr/sbin:/usr/bin:/sbin:/bin"
    control = subprocess.run(["dpkg-deb", "-f", dist["deb"], "Version", "Depends"], capture_output=True,
                             text=True, check=True).stdout
    assert f"Version: {library_version()}" in control and "libc6" in control and "libcurl4" in control, control
    # From a directory apt's sandbox user (_apt) can read, as a user's ./dist would be.
    readable = tempfile.mkdtemp(prefix="auth-sidecar-deb-")
    os.chmod(readable, 0o755)
    deb = shutil.copy(dist["deb"], readable)
    installed = as_a_user(tried, tmp_path, 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1"',
                          system_path, deb, timeout=300)
    try:
        assert installed.returncode == 0, installed.stdout + installed.stderr
        version = as_a_user(tried, tmp_path, "auth-sidecar --version")
        assert version.returncode == 0 and VERSION_LINE.fullmatch(version.stdout.strip()), version
        page = as_a_user(tried, tmp_path, "MANWIDTH=100 man -P cat auth-sidecar")
        assert page.returncode == 0 and "AUTH-SIDECAR" in page.stdout and "--client-id" in page.stdout, page
        with open("/usr/lib/systemd/user/auth-sidecar-agent.service") as f:
            unit = f.read()
        assert "ExecStart=/usr/bin/auth-sidecar agent" in unit
        assert_agent_reaches_the_users_keyring(unit)
        # The az link (docs/tools-and-az.md "For tools that call az"), in a directory of its own.
        assert os.path.realpath("/usr/share/auth-sidecar/az-shim/bin/az") == "/usr/bin/auth-sidecar"
        assert not os.path.exists("/usr/bin/az") or os.path.realpath("/usr/bin/az") != "/usr/bin/auth-sidecar"
        for path in ("/usr/share/bash-completion/completions/auth-sidecar",
                     "/usr/share/zsh/vendor-completions/_auth-sidecar",
                     "/usr/share/fish/vendor_completions.d/auth-sidecar.fish",
                     "/usr/share/doc/auth-sidecar/protocol/README.md", "/usr/share/doc/auth-sidecar/copyright"):
            assert os.path.getsize(path) > 0, path
        ping = as_a_user(tried, tmp_path, "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}' | "
                         "auth-sidecar --client-id 11111111-2222-3333-4444-555555555555 --cache memory")
        assert json.loads(ping.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}, ping
    finally:
        removed = as_a_user(tried, tmp_path, "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q auth-sidecar",
                            system_path, timeout=300)
        shutil.rmtree(readable)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not os.path.exists("/usr/bin/auth-sidecar")


@pytest.mark.skipif(shutil.which("lintian") is None, reason="lintian is not installed (optional)")
def test_deb_is_lintian_clean(dist):
    judged = subprocess.run(["lintian", "--no-cfg", dist["deb"]], capture_output=True, text=True, timeout=300)
    tags = [line for line in judged.stdout.splitlines() if re.match(r"[EW]: ", line)]
    assert judged.returncode == 0 and not tags, judged.stdout + judged.stderr


def test_npm_package_in_a_scratch_project_runs_the_node_quick_start(dist, tried, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "scratch", "private": true, "type": "module"}\n')
    if shutil.which("npm"):
        added = as_a_user(tried, tmp_path, 'cd "$1" && npm install --offline --no-audit --no-fund "$2"',
                          no_toolchain.BARE_PATH, str(project), dist["npm"], timeout=180)
        assert added.returncode == 0, added.stdout + added.stderr
    else:  # as npm would lay it out
        with tarfile.open(dist["npm"]) as npm:
            npm.extractall(project / "node_modules", filter="tar")
        (project / "node_modules" / "package").rename(project / "node_modules" / "auth-sidecar")
        (project / "node_modules" / ".bin").mkdir()
        (project / "node_modules" / ".bin" / "auth-sidecar").symlink_to("../auth-sidecar/bin/auth-sidecar")
    version = as_a_user(tried, tmp_path, '"$1/node_modules/.bin/auth-sidecar" --version', no_toolchain.BARE_PATH,
                        str(project))
    assert version.returncode == 0 and VERSION_LINE.fullmatch(version.stdout.strip()), version
    quick, = blocks("## Quick start", "js", "clients/node/README.md")
    (project / "quick.mjs").write_text("import { findBinary } from 'auth-sidecar';\nconsole.log(findBinary());\n" + quick)
    done = as_a_user(tried, tmp_path, 'cd "$1" && node quick.mjs', no_toolchain.BARE_PATH, str(project), timeout=60)
    assert done.returncode == 0, done.stderr
    binary, result = done.stdout.split("\n", 1)
    assert os.path.realpath(binary) == str(project / "node_modules" / "auth-sidecar" / "bin" / "auth-sidecar")
    (project / "order.mjs").write_text("import { findBinary } from 'auth-sidecar';\n"
                                       "console.log(findBinary(), findBinary('/bin/ls'));\n")
    order = as_a_user(tried, tmp_path, 'cd "$1" && AUTH_SIDECAR_BIN=/bin/true node order.mjs', no_toolchain.BARE_PATH,
                      str(project))
    assert order.stdout.split() == ["/bin/true", "/bin/ls"], order
    assert result.startswith("alice@contoso.com ") and "Alice Example" in result, done.stdout


def test_tarball_unpacked_installs_under_a_prefix_and_runs(dist, tried, tmp_path):
    with tarfile.open(dist["tarball"]) as tarball:
        tarball.extractall(tmp_path / "unpacked", filter="tar")
    (top,) = os.listdir(tmp_path / "unpacked")
    prefix = tmp_path / "prefix"
    hidden = as_a_user(tried, tmp_path, '! command -v swift && [ -z "$(ls -A "$1")" ]', no_toolchain.BARE_PATH,
                       no_toolchain.toolchain_dir())
    assert hidden.returncode == 0, "the toolchain is not hidden"
    installed = as_a_user(tried, tmp_path, '"$1/install.sh" --prefix "$2"', no_toolchain.BARE_PATH,
                          str(tmp_path / "unpacked" / top), str(prefix))
    assert installed.returncode == 0, installed.stderr
    version = as_a_user(tried, tmp_path, "auth-sidecar --version", f"{prefix}/bin:{no_toolchain.BARE_PATH}")
    assert version.returncode == 0 and VERSION_LINE.fullmatch(version.stdout.strip()), version
    page = as_a_user(tried, tmp_path, 'MANWIDTH=100 MANPATH="$1" man -P cat auth-sidecar', no_toolchain.BARE_PATH,
                     str(prefix / "share" / "man"))
    assert page.returncode == 0 and "AUTH-SIDECAR" in page.stdout, page
    unit = (prefix / "share" / "systemd" / "user" / "auth-sidecar-agent.service").read_text()
    assert f"ExecStart={prefix}/bin/auth-sidecar agent" in unit
    assert_agent_reaches_the_users_keyring(unit)
    az = prefix / "share" / "auth-sidecar" / "az-shim" / "bin" / "az"
    assert os.path.realpath(az) == os.path.realpath(prefix / "bin" / "auth-sidecar")
    assert (prefix / "share" / "doc" / "auth-sidecar" / "protocol" / "openrpc.json").stat().st_size > 0
    # docs/command-line.md's first pipe, with the installed binary on PATH.
    pipe, = blocks("## Pipe JSON through it", "sh")
    done = as_a_user(tried, tmp_path, pipe, f"{prefix}/bin:{no_toolchain.BARE_PATH}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "{}", done.stdout
