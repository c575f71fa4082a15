"""The man page's own sections (scripts/man/sections.mdoc, which scripts/install.sh puts in
place of the generator's generic EXIT STATUS) are true: CONFIGURATION lists exactly the keys
the configuration decoder accepts (each with a type and one line), and EXIT STATUS exactly the
statuses the code exits with, each of them produced here by the real binary.
(Tests/e2e_auth/test_install.py checks the installed page carries these sections.) And
docs/configuration.md's table has the same keys."""
from __future__ import annotations

import json
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS = os.path.join(REPO, "scripts", "man", "sections.mdoc")
GUID = "11111111-2222-3333-4444-555555555555"


def man_section(name: str) -> str:
    with open(SECTIONS, encoding="utf-8") as f:
        text = f.read()
    start = text.index(f".Sh {name}\n")
    end = text.find("\n.Sh ", start + 1)
    return text[start:end if end > 0 else len(text)]


def man_keys() -> dict[str, tuple[str, str]]:
    """key -> (type, its line) of CONFIGURATION's list."""
    items = re.findall(r"^\.It Cm (\w+) Ar (.+)\n([^.\n][^\n]*)$", man_section("CONFIGURATION"), re.M)
    keys = {key: (kind, line) for key, kind, line in items}
    assert len(keys) == len(items), "a key listed twice"
    return keys


def man_statuses() -> dict[int, str]:
    items = re.findall(r"^\.It (\d+)\n([^\n]+)$", man_section("EXIT STATUS"), re.M)
    return {int(status): line for status, line in items}


def source(path: str) -> str:
    with open(os.path.join(REPO, "Sources", path), encoding="utf-8") as f:
        return f.read()


def decoder_keys() -> set[str]:
    """ConfigurationOverrides.keys (the keys of a file, a profile and `initialize`), with the
    constants it names resolved, plus what a file also allows at its top (ConfigurationFile)."""
    overrides = source("Sidecar/ConfigurationOverrides.swift")
    (literal,) = re.findall(r"public static let keys: Set<String> = \[(.*?)\]\n", overrides, re.S)
    keys = set(re.findall(r'"(\w+)"', literal))
    for constant in re.findall(r"\b(\w+)\.key\b", literal):
        found = [f for f in os.listdir(os.path.join(REPO, "Sources", "Sidecar")) if f.startswith(constant)]
        texts = "".join(source(os.path.join("Sidecar", f)) for f in found)
        (value,) = re.findall(r'static let key = "(\w+)"', texts)
        keys.add(value)
    file_reader = source("Sidecar/ConfigurationFile.swift")
    (extra,) = re.findall(r"ConfigurationOverrides\.keys\.union\(\[([^\]]*)\]\)", file_reader)
    return keys | set(re.findall(r'"(\w+)"', extra))


def test_the_man_page_lists_every_configuration_key_and_only_those():
    keys = man_keys()
    assert set(keys) == decoder_keys(), (set(keys) ^ decoder_keys())
    for key, (kind, line) in keys.items():
        assert kind.strip() and len(line) > 15, (key, kind, line)


def test_docs_configuration_table_lists_every_key_and_only_those():
    """docs/configuration.md's key table, the long form of the page's list."""
    from doc_sections import section
    table = section("## Configuration", "docs/configuration.md").split("### ", 1)[0]
    keys = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert len(keys) == len(set(keys)) and set(keys) == decoder_keys(), set(keys) ^ decoder_keys()


def test_every_listed_key_is_one_the_binary_reads(sidecar_bin, tmp_path):
    """Each key of the page in a configuration file is read as that key (a wrong value may be
    refused, an unknown key never), and a misspelt one is refused naming the file, exit 1."""
    def run(config: dict) -> subprocess.CompletedProcess:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        return subprocess.run([sidecar_bin, "--config", str(path), "--cache", "memory"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=30,
                              env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "AUTH_SIDECAR_NO_AGENT": "1"})
    for key in man_keys():
        done = run({"clientId": GUID, key: 2.5})
        assert "unknown key" not in done.stderr, (key, done.stderr)
    done = run({"clientId": GUID, "clientid": GUID})
    assert done.returncode == 1 and "unknown key 'clientid'" in done.stderr and str(tmp_path) in done.stderr, done


def code_statuses() -> set[int]:
    """The statuses the program's own code names (named constants, literals given to a
    failure, exit() calls), beside ArgumentParser's 64 for a usage error."""
    found = set()
    for top in ("SidecarCLI", "AzEmulator", "Agent", "JSONRPC"):
        for root, _, files in os.walk(os.path.join(REPO, "Sources", top)):
            for name in files:
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    text = f.read()
                found |= {int(n) for n in re.findall(r"[sS]tatus: Int32 = (\d+)", text)}
                found |= {int(n) for n in re.findall(r"VerbFailure\(status: (\d+)", text)}
                found |= {int(n) for n in re.findall(r"Failure\(message: [^\n]*, status: (\d+)\)", text)}
                found |= {int(n) for n in re.findall(r"\bexit\((\d+)\)", text)}
                found |= {int(n) for pair in re.findall(r"exitStatus = [^\n]*\? (\d+) : (\d+)", text) for n in pair}
    return found | {64}


def test_the_man_page_lists_the_exit_statuses_the_code_uses(sidecar_bin, tmp_path):
    statuses = man_statuses()
    assert set(statuses) == code_statuses(), (sorted(statuses), sorted(code_statuses()))
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "AUTH_SIDECAR_NO_AGENT": "1"}
    common = ["--client-id", GUID, "--cache", "memory"]
    config = tmp_path / "typo.json"
    config.write_text(json.dumps({"clientId": GUID, "authoriti": "https://login.microsoftonline.com/common"}))
    cases = {
        0: [sidecar_bin, "--version"],
        1: [sidecar_bin, "--config", str(config)],
        2: [sidecar_bin, "token", *common],
        64: [sidecar_bin, "--no-such-option"],
        127: [sidecar_bin, "exec", *common, "--", str(tmp_path / "no-such-program")],
    }
    assert set(cases) == set(statuses)
    for status, argv in cases.items():
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, env=env)
        assert done.returncode == status, (status, argv, done.stderr)
