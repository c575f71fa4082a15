"""The release binary (scripts/build.sh) is the lean one every package ships: it needs only
libc, libm and libgcc_s (the Swift runtime, jansson and libstdc++ are linked in, libcurl is
opened with dlopen), it is stripped and position-independent, and it runs where no toolchain
is installed (issue #21)."""
from __future__ import annotations

import json
import os
import subprocess

import no_toolchain

ALLOWED = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def dynamic_section(binary: str) -> str:
    return subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout


def test_needs_only_libc_libm_and_libgcc_s(sidecar_bin):
    needed = {line.split("[", 1)[1].rstrip("]") for line in dynamic_section(sidecar_bin).splitlines()
              if "(NEEDED)" in line}
    assert needed <= ALLOWED, f"needs {sorted(needed - ALLOWED)} too"
    loaded = subprocess.run(["ldd", sidecar_bin], capture_output=True, text=True, check=True).stdout
    for library in no_toolchain.toolchain_libraries():
        assert library not in loaded, loaded


def test_is_stripped_and_position_independent(sidecar_bin):
    sections = subprocess.run(["readelf", "-S", "-W", sidecar_bin], capture_output=True, text=True,
                              check=True).stdout
    assert ".symtab" not in sections, "not stripped"
    header = subprocess.run(["readelf", "-h", sidecar_bin], capture_output=True, text=True, check=True).stdout
    assert "DYN (Position-Independent Executable" in header, header
    assert "PIE" in dynamic_section(sidecar_bin)


def test_relative_relocations_are_packed(sidecar_bin):
    # -z pack-relative-relocs (lld): the loader applies ~53,000 relative relocations from a
    # 10 KB bitmap (DT_RELR) instead of reading a 1.3 MB table at every start.
    dynamic = dynamic_section(sidecar_bin)
    assert "(RELR)" in dynamic, dynamic
    relacount = [int(line.split()[-1]) for line in dynamic.splitlines() if "(RELACOUNT)" in line]
    assert relacount in ([], [0]), f"{relacount} relative relocations still in .rela.dyn"


def test_exports_only_what_the_loader_needs(sidecar_bin):
    # --no-export-dynamic: the Swift runtime's start-up (dladdr, for the backtracer's path) walks
    # every dynamic symbol of the executable; with swiftc's -export-dynamic there were 12,849.
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", sidecar_bin], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    assert len(symbols) < 1000, f"{len(symbols)} dynamic symbols"


def test_runs_with_the_toolchain_hidden(sidecar_bin):
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n"
    done = no_toolchain.run([sidecar_bin, "--client-id", "11111111-2222-3333-4444-555555555555", "--cache", "memory"],
                            input=ping)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert os.path.isdir(no_toolchain.toolchain_dir())  # still there outside the namespace
