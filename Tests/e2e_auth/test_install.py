"""scripts/install.sh: the binary, the man page generated from --help's source, and shell
completions under a prefix."""
from __future__ import annotations

import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.time_limit(900)  # builds the man page generator on a fresh clone
def test_install_puts_binary_man_page_and_completions_under_the_prefix(tmp_path):
    prefix = tmp_path / "prefix"
    run = subprocess.run(["bash", os.path.join(REPO, "scripts", "install.sh"), "--prefix", str(prefix)],
                         capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == ""
    binary = prefix / "bin" / "auth-sidecar"
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.strip()
    page = subprocess.run(["man", "-l", str(prefix / "share" / "man" / "man1" / "auth-sidecar.1")],
                          capture_output=True, text=True, timeout=30, env={**os.environ, "MANWIDTH": "100"})
    assert page.returncode == 0 and "AUTH-SIDECAR" in page.stdout
    for verb in ("token", "login", "logout", "accounts", "status", "agent", "where", "--client-id"):
        assert verb in page.stdout, verb
    # its own sections (scripts/man/sections.mdoc, kept true by Tests/e2e/test_man_page.py) in
    # place of the generator's generic exit status
    assert "CONFIGURATION" in page.stdout and "clientId string" in page.stdout, page.stdout[-3000:]
    assert page.stdout.count("EXIT STATUS") == 1 and "64      A usage error" in page.stdout, page.stdout[-3000:]
    found = subprocess.run(["man", "-w", "auth-sidecar"], capture_output=True, text=True, timeout=30,
                           env={**os.environ, "MANPATH": str(prefix / "share" / "man")})
    assert found.stdout.strip().endswith("auth-sidecar.1")
    bash = prefix / "share" / "bash-completion" / "completions" / "auth-sidecar"
    assert subprocess.run(["bash", "-n", str(bash)]).returncode == 0 and "token" in bash.read_text()
    assert "where" in bash.read_text() and "neovim" in bash.read_text()  # the verb and its names
    assert (prefix / "share" / "zsh" / "site-functions" / "_auth-sidecar").stat().st_size > 0
    assert (prefix / "share" / "fish" / "vendor_completions.d" / "auth-sidecar.fish").stat().st_size > 0
    docs = prefix / "share" / "doc" / "auth-sidecar" / "protocol"
    assert (docs / "README.md").read_text() == open(os.path.join(REPO, "protocol", "README.md")).read()
    assert (docs / "openrpc.json").stat().st_size > 0 and (docs / "schemas").is_dir()
    az = prefix / "share" / "auth-sidecar" / "az-shim" / "bin" / "az"
    assert az.is_symlink() and os.path.realpath(az) == os.path.realpath(binary)
    help_text = " ".join(subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30).stdout.split())
    assert "protocol/README.md" in help_text and "'auth-sidecar where docs'" in help_text, help_text
    assert "man auth-sidecar" in help_text, help_text
    # The plugins, recipes and docs every package ships, where `auth-sidecar where` finds them.
    for name, directory, member in (("neovim", "share/auth-sidecar/neovim", "lua/auth_sidecar/init.lua"),
                                    ("emacs", "share/auth-sidecar/emacs", "auth-sidecar.el"),
                                    ("shell", "share/auth-sidecar/shell", "README.md"),
                                    ("docs", "share/doc/auth-sidecar", "README.md"),
                                    ("az", "share/auth-sidecar/az-shim/bin", "az")):
        where = subprocess.run([str(binary), "where", name], capture_output=True, text=True, timeout=30)
        assert where.returncode == 0 and where.stdout == f"{prefix / directory}\n", (name, where)
        assert (prefix / directory / member).exists(), (name, member)
    assert (prefix / "share" / "doc" / "auth-sidecar" / "protocol" / "README.md").exists()


def test_install_refuses_an_unknown_option():
    run = subprocess.run(["bash", os.path.join(REPO, "scripts", "install.sh"), "--prefxi", "/tmp/x"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 64 and "unknown option '--prefxi'" in run.stderr


def test_az_shim_link_is_made_in_its_own_directory_and_never_over_another_az(sidecar_bin, tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "auth-sidecar").symlink_to(sidecar_bin)
    script = os.path.join(REPO, "scripts", "install-az-shim.sh")
    for _ in range(2):  # a second run leaves the link as it is
        run = subprocess.run(["bash", script, str(prefix)], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0 and run.stderr == "", run.stderr
    shim = prefix / "share" / "auth-sidecar" / "az-shim" / "bin"
    # Relative, so the link survives the packages' staging tree.
    assert sorted(os.listdir(shim)) == ["az"] and os.readlink(shim / "az") == "../../../../bin/auth-sidecar"
    assert not (prefix / "bin" / "az").exists()
    refused = subprocess.run([str(shim / "az"), "group", "list"], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "real Azure CLI" in refused.stderr
    # a real Azure CLI where the link would go is left alone
    (shim / "az").unlink()
    (shim / "az").write_text("#!/bin/sh\necho real az\n")
    run = subprocess.run(["bash", script, str(prefix)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "left as it is" in run.stderr
    assert (shim / "az").read_text() == "#!/bin/sh\necho real az\n"
