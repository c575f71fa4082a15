"""A newcomer's path with each package and nothing else (issue #40): the toolchain hidden, a
fresh HOME, no clone. The documentation's own lines (README.md and docs/install.md, found by
heading: Tests/e2e/doc_sections.py), extracted here so they cannot drift, are run as written in
the directory holding the packages: `sha256sum -c`, the package's "Install" block (README's one
line per package is that block's install line), README's quick start (`eval
"$(auth-sidecar-try)"`, the mock every package carries, a sign-in and a first token), a first
token over JSON-RPC, the package's client quick start (the wheel's Python, the npm package's
Node), and `az` from the place docs/install.md gives for that package's az shim. (The
`systemctl --user` lines are optional and not run: no user systemd here;
Tests/e2e_auth/test_systemd_unit.py starts the agent as the unit would.)"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tarfile
import tempfile
import zipfile

import pytest

from as_user import REPO, library_version, no_toolchain
from doc_sections import blocks, section  # Tests/e2e/doc_sections.py

JWT = re.compile(r"^[\w-]+\.[\w-]+\.[\w-]+$")
SECTIONS = {"wheel": "## The wheel (Python: the client and the binary)", "deb": "## The .deb",
            "npm": "## The npm package (Node: the client and the binary)", "tarball": "## The tarball"}
README_LINE = {"wheel": "pip install ", "deb": "sudo apt install ", "npm": "npm install ", "tarball": "tar -xzf "}
QUICK_START = "## Quick start: a first token against the bundled mock"


def commands(block: str) -> list[str]:
    """A block's lines without their comments."""
    return [line.split("  #")[0].strip() for line in block.strip().splitlines()]


def line_starting(block: str, prefix: str) -> str:
    (found,) = [line for line in block.splitlines() if line.startswith(prefix)]
    return found


def az_shim_dir(kind: str) -> str:
    """Where docs/install.md says the package's az shim is: made by the Install block's `ln -s` (the
    wheel, npm), else named in the section's text."""
    text = section(SECTIONS[kind])
    made = re.findall(r'ln -s "[^"]+" (\S+)/az\b', text)
    named = re.findall(r"The az shim is `([^`]+)/az`", text)
    (where,) = made or named
    return where.replace("~", "$HOME")


def newcomer_script(kind: str) -> str:
    """The README's lines, in the order a newcomer runs them, for one package."""
    sums, = blocks("# Install", "sh")[:1]
    install = blocks(SECTIONS[kind], "sh")[0]
    assert library_version() in install, install
    # README's one line for this package is the install line of that block
    one_line = line_starting("\n".join(commands(blocks("## Install", "sh")[0])), README_LINE[kind])
    assert one_line in commands(install), (one_line, install)
    quick = blocks(QUICK_START, "sh")[0].strip().splitlines()
    try_line = quick[0]
    if kind == "npm":  # no bin directory on PATH: npx runs the package's
        (try_line,) = re.findall(r'npm, in your project: `(eval "\$\(npx auth-sidecar-try\)")`',
                                 section(QUICK_START).replace("\n", " "))
    shell = blocks("## From a shell", "sh")[1]
    login = line_starting(shell, "auth-sidecar login --device-code")
    graph = line_starting(shell, "curl ")
    first_token, = blocks("## Sign in from a shell", "sh")
    az = line_starting(blocks("### For tools that call az", "sh")[0], "az account get-access-token")
    return "\n".join([
        "set -eo pipefail",
        # root on a machine without sudo (a container): as a user with sudo would
        "command -v sudo >/dev/null || sudo() { \"$@\"; }",
        sums, install.replace("sudo apt install", "sudo env DEBIAN_FRONTEND=noninteractive apt install -y -q"),
        "echo '--- try'", try_line.split("  #")[0],
        "echo '--- readme'", *[line.split("  #")[0] for line in quick[1:]],
        "echo '--- first token'", first_token, "echo '--- login'", login.split("  #")[0], graph,
        "echo '--- quick start'", 'eval "$QUICK_START"',
        "echo '--- az'", f'PATH="{az_shim_dir(kind)}:$PATH" {az}',
    ]) + "\n"


def quick_start(kind: str) -> tuple[str, str]:
    """The client's quick start as its README prints it (wheel: Python, npm: Node), else none."""
    if kind == "wheel":
        install, = blocks("## Quick start", "sh", "clients/python/README.md")
        # the client's README installs as the main README does
        assert commands(install) == commands(blocks(SECTIONS["wheel"], "sh")[0])[:2]
        code, = blocks("## Quick start", "python", "clients/python/README.md")
        # and `python -m auth_sidecar.mock` is auth-sidecar-try (README's quick start)
        return 'python -c "$1" && python -m auth_sidecar.mock env | grep -q "^export AUTH_SIDECAR_CONFIG="', code
    if kind == "npm":
        install, = blocks("## Quick start", "sh", "clients/node/README.md")
        assert commands(install) == commands(blocks(SECTIONS["npm"], "sh")[0])[:1], install
        code, = blocks("## Quick start", "js", "clients/node/README.md")
        return 'printf "%s" "$1" >quick.mjs && node quick.mjs', code
    return "true", ""


def stop_the_mock(home: str) -> None:
    try:
        with open(os.path.join(home, ".cache", "auth-sidecar-try", "try.pid")) as f:
            os.kill(int(f.read()), signal.SIGTERM)
    except (OSError, ValueError):
        pass


def walk_the_path(kind: str, dist: dict[str, str]) -> tuple[str, str]:
    """Runs the newcomer's script for `kind` in a copy of the packages' directory; (stdout, home)."""
    work = tempfile.mkdtemp(prefix=f"newcomer-{kind}-")
    os.chmod(work, 0o755)  # apt's sandbox user reads the .deb from here
    for path in dist.values():
        shutil.copy(path, work)
    home = os.path.join(work, "home")
    os.mkdir(home)
    command, code = quick_start(kind)
    env = {"HOME": home, "LANG": "C.UTF-8", "QUICK_START": command,
           # offline, as the packages need nothing from an index
           "PIP_NO_INDEX": "1", "npm_config_offline": "true", "npm_config_update_notifier": "false",
           "npm_config_audit": "false", "npm_config_fund": "false"}
    if kind == "deb":  # root's PATH, which dpkg needs
        env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
    try:
        done = no_toolchain.run(["bash", "-c", newcomer_script(kind), "newcomer", code], env=env, cwd=work,
                                timeout=300)
    finally:
        stop_the_mock(home)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, work


def after(stdout: str, marker: str) -> list[str]:
    part = stdout.split(f"--- {marker}\n", 1)[1]
    return part.split("\n--- ", 1)[0].splitlines()


def assert_the_path(stdout: str, kind: str) -> None:
    assert stdout.count(": OK") == 4, stdout
    readme = after(stdout, "readme")
    assert readme[0] == "Signed in as alice@contoso.com" and JWT.match(readme[1]), readme
    token = after(stdout, "first token")
    assert "enter the code" in token[0] and JWT.match(token[1]), token
    login = after(stdout, "login")
    assert login[0] == "Signed in as alice@contoso.com" and '"Alice Example"' in login[1].replace('":"', '": "'), login
    quick = after(stdout, "quick start")
    if kind in ("wheel", "npm"):
        assert quick[0].startswith("alice@contoso.com ") and "Alice Example" in "\n".join(quick), quick
    az, = after(stdout, "az")
    assert JWT.match(az), az


@pytest.mark.parametrize("kind", ["wheel", "npm", "tarball"])
def test_the_readme_alone_reaches_a_token_with(kind, dist):
    stdout, work = walk_the_path(kind, dist)
    try:
        assert_the_path(stdout, kind)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("CI"), reason="apt install needs root")
def test_the_readme_alone_reaches_a_token_with_the_deb(dist):
    try:
        stdout, work = walk_the_path("deb", dist)
        assert_the_path(stdout, "deb")
        shutil.rmtree(work, ignore_errors=True)
    finally:
        removed = no_toolchain.run(["bash", "-c", "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q auth-sidecar"],
                                   env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=300)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not os.path.exists("/usr/bin/auth-sidecar-try")


def test_try_sh_in_a_clone_without_swift_uses_the_installed_binary_and_says_so(dist, tmp_path):
    """A clone without Swift (the toolchain hidden), the tarball installed: scripts/try.sh needs
    no AUTH_SIDECAR_BIN, and --help prints its whole header, that line included."""
    with tarfile.open(dist["tarball"]) as tarball:
        tarball.extractall(tmp_path / "unpacked", filter="tar")
    (top,) = os.listdir(tmp_path / "unpacked")
    prefix, try_dir = tmp_path / "prefix", tmp_path / "try"
    script = ('"$1/install.sh" --prefix "$2" 2>/dev/null && export PATH="$2/bin:$PATH" && "$3" --help && "$3" '
              '&& source "$TRY_DIR/env" && auth-sidecar login --device-code; status=$?; "$3" stop; exit $status')
    try_sh = os.path.join(REPO, "scripts", "try.sh")
    done = no_toolchain.run(["bash", "-c", script, "bash", str(tmp_path / "unpacked" / top), str(prefix), try_sh],
                            env={"HOME": str(tmp_path), "TRY_DIR": str(try_dir), "LANG": "C.UTF-8"}, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(try_sh, encoding="utf-8") as f:
        header = [line[2:] for line in f.read().split("\nset ", 1)[0].splitlines()[1:] if line.startswith("# ")]
    assert header[-1].strip() == "AUTH_SIDECAR_BIN=$(command -v auth-sidecar) scripts/try.sh", header
    assert all(line in done.stdout for line in header), done.stdout
    assert f"try: Swift is not installed: using the installed {prefix}/bin/auth-sidecar" in done.stderr, done.stderr
    assert "Signed in as alice@contoso.com" in done.stdout, done.stdout


def test_the_package_docs_assume_no_clone(dist):
    """What the package indexes show (the wheel's METADATA, the npm package's README and
    package.json): no link relative to a clone, the quick start installing the package itself,
    the binary it carries said."""
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = wheel.read(name).decode()
    with tarfile.open(dist["npm"]) as npm:
        readme = npm.extractfile("package/README.md").read().decode()
        manifest = json.load(npm.extractfile("package/package.json"))
    for text, package in ((metadata, os.path.basename(dist["wheel"])), (readme, os.path.basename(dist["npm"]))):
        assert not re.findall(r"\]\((?!https://|#)[^)]*\)", text), re.findall(r"\]\((?!https://|#)[^)]*\)", text)
        quick = text.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
        assert package in quick and "clients/" not in quick, quick
        assert "carries the auth-sidecar binary" in " ".join(text.split())
    assert "Summary: auth-sidecar and its Python client" in metadata
    assert "carries the Linux x86-64 binary" in manifest["description"], manifest
