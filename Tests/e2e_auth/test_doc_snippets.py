"""Every fenced sh/bash/python snippet of README.md and docs/*.md is run by a test or listed
below as not runnable on a test machine, with the reason: a snippet that nobody runs fails
the suite (test_every_snippet_is_run_or_excused). The snippets of docs/tools-and-az.md's
"Use it from git, kubectl and Azure SDKs" and of `exec` are run here as written, against the
mock that scripts/try.sh starts (test_readme.py's fixture), in a scratch HOME."""
from __future__ import annotations

import json
import os
import re
import socket
import stat
import time

import pytest

from doc_sections import REPO, all_blocks, blocks, doc_files, section  # Tests/e2e/doc_sections.py
from test_readme import JWT, assert_home_untouched, run_sh, tried  # noqa: F401  (the fixture)

LANGUAGES = ("sh", "bash", "shell", "console", "python", "py")
TOOLS = "## Use it from git, kubectl and Azure SDKs"
FEEDS = "### Package feeds and container registries"

# (file, heading, the snippet's first line starts with) -> the test file that runs it (it must
# name the heading), or "not runnable here: WHY".
LEDGER: dict[tuple[str, str, str], str] = {
    ("README.md", "## Install", "pip install auth_sidecar"): "Tests/packages/test_newcomer.py",
    ("README.md", "## Quick start: a first token against the bundled mock", 'eval "$(auth-sidecar-try)"'):
        "Tests/packages/test_newcomer.py",
    ("README.md", "## Two commands (from a clone)", "scripts/demo.sh"):
        "not runnable here: it is the suite itself (scripts/test.sh, .ci/run's command: checked by "
        "test_readme.py::test_two_commands_are_what_ci_runs) and the demo (scripts/demo.sh, run by hand)",
    ("README.md", "## Two commands (from a clone)", "scripts/try.sh"): "Tests/e2e_auth/test_readme.py",
    ("docs/install.md", "# Install", "sha256sum -c"): "Tests/packages/test_newcomer.py",
    ("docs/install.md", "## The wheel (Python: the client and the binary)", "python3 -m venv"):
        "Tests/packages/test_newcomer.py",
    ("docs/install.md", "## The .deb", "sudo apt install"): "Tests/packages/test_newcomer.py",
    ("docs/install.md", "## The .deb", "systemctl --user"):
        "not runnable here: it needs a user systemd (optional; Tests/e2e_auth/test_systemd_unit.py starts "
        "the agent as the unit does)",
    ("docs/install.md", "## The npm package (Node: the client and the binary)", "npm install"):
        "Tests/packages/test_newcomer.py",
    ("docs/install.md", "## The tarball", "tar -xzf"): "Tests/packages/test_newcomer.py",
    ("docs/install.md", "## From source", "scripts/install.sh"):
        "not runnable here: it installs into this machine's ~/.local and /usr/local "
        "(Tests/e2e_auth/test_install.py runs scripts/install.sh --prefix into a scratch directory, man included)",
    ("docs/command-line.md", "## Pipe JSON through it", "printf"): "Tests/e2e_auth/test_readme.py",
    ("docs/command-line.md", "## From a shell", "mkdir -p ~/.config/auth-sidecar"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/command-line.md", "## From a shell", "auth-sidecar login"): "Tests/e2e_auth/test_readme.py",
    ("docs/command-line.md", "## Profiles", "auth-sidecar login --profile"):
        "not runnable here: it needs the two registrations of the profiles file above (a B2C tenant); "
        "Tests/e2e_auth/test_profiles.py runs each verb with profiles against the mock",
    ("docs/command-line.md", "## Sign in from a shell", "echo '{"): "Tests/e2e_auth/test_readme.py",
    ("docs/agent-and-forwarding.md", "## One agent for all your programs", "auth-sidecar agent &"):
        "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/agent-and-forwarding.md", "### Sign in on the laptop, use tokens on a remote machine", "# laptop"):
        "not runnable here: it needs a second machine over ssh (Tests/e2e_auth/test_forwarding.py forwards "
        "the socket with a real `ssh -R`-like relay)",
    ("docs/agent-and-forwarding.md", "### Sign in on the laptop, use tokens on a remote machine",
     "auth-sidecar agent --forward-socket"):
        "not runnable here: it needs a container image and a docker daemon",
    ("docs/tools-and-az.md", TOOLS, "# az's JSON"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/tools-and-az.md", TOOLS, "# git:"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/tools-and-az.md", TOOLS, "# kubectl:"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/tools-and-az.md", TOOLS, "# Azure SDKs:"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/tools-and-az.md", TOOLS, "# azd:"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/tools-and-az.md", "### For tools that call az", "# an `az` link"): "Tests/packages/test_newcomer.py",
    ("docs/tools-and-az.md", FEEDS, 'export PATH="$HOME/.local/share/auth-sidecar/keyring-shim'):
        "not runnable here: it needs an Azure Artifacts feed (Tests/e2e_auth/test_feeds.py runs pip, uv and "
        "twine through the keyring name against a local feed)",
    ("docs/tools-and-az.md", FEEDS, "auth-sidecar docker-config"):
        "not runnable here: it needs an Azure Container Registry (Tests/e2e_auth/test_feeds.py runs the "
        "credential helper's exchange against a stand-in registry)",
    ("docs/tools-and-az.md", FEEDS, "auth-sidecar exec"): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/ssh.md", "# SSH with Entra ID certificates", "auth-sidecar ssh-cert"):
        "not runnable here: it needs an Azure VM with AADSSHLoginForLinux (Tests/e2e_auth/test_ssh_cert.py "
        "gets certificates from the mock and checks them with ssh-keygen)",
    ("docs/pop.md", "# Proof-of-possession tokens", "url="): "Tests/e2e_auth/test_doc_snippets.py",
    ("docs/broker.md", "# Managed Linux devices: the broker", "auth-sidecar login --broker"):
        "not runnable here: it needs Microsoft's identity broker on the session bus (Tests/e2e_auth/test_broker.py "
        "runs the verbs against a stand-in)",
}


def runnable_blocks():
    for path in doc_files():
        for block in all_blocks(path):
            if block.language in LANGUAGES:
                yield block


def entry_of(block) -> list[tuple[str, str, str]]:
    first = block.text.lstrip().splitlines()[0] if block.text.strip() else ""
    return [key for key in LEDGER if key[0] == block.path and key[1] == block.heading and first.startswith(key[2])]


def test_every_snippet_is_run_or_excused():
    seen = set()
    for block in runnable_blocks():
        keys = entry_of(block)
        assert len(keys) == 1, (f"{block.path}, under '{block.heading}': a ```{block.language} snippet that no test "
                                f"runs and LEDGER does not excuse (or matches {len(keys)} entries):\n{block.text}")
        seen.add(keys[0])
    assert not set(LEDGER) - seen, f"LEDGER names snippets the docs no longer have: {set(LEDGER) - seen}"
    for (path, heading, _), how in LEDGER.items():
        if how.startswith("not runnable here: "):
            assert len(how) > len("not runnable here: ") + 10, how
            continue
        with open(os.path.join(REPO, how), encoding="utf-8") as f:
            assert f'"{heading}"' in f.read(), f"{how} does not read '{heading}'"


def test_an_unlisted_snippet_fails_the_check(tmp_path, monkeypatch):
    """The check can fail: a docs file with a new sh block not in LEDGER."""
    import doc_sections
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "README.md").write_text("# x\n\n## Anything\n\n```sh\necho new\n```\n")
    monkeypatch.setattr(doc_sections, "REPO", str(tmp_path))
    with pytest.raises(AssertionError, match="no test runs"):
        test_every_snippet_is_run_or_excused()


def signed_in(tried):
    done = run_sh(tried, "auth-sidecar login --device-code")
    assert done.returncode == 0 and "Signed in as alice@contoso.com" in done.stdout, done


def test_the_configuration_file_lines(tried, tmp_path):
    """From a shell's set-up lines write the default configuration file (a scratch HOME, no
    try environment: the placeholder is then named by the verbs)."""
    setup = blocks("## From a shell", "sh")[0]
    home = tmp_path / "home"
    home.mkdir()
    done = run_sh(tried, f'unset AUTH_SIDECAR_CONFIG XDG_CONFIG_HOME && export HOME="{home}"\n{setup}\nauth-sidecar token')
    config = json.loads((home / ".config" / "auth-sidecar" / "config.json").read_text())
    assert config["clientId"] == "YOUR-CLIENT-ID" and config["authority"].startswith("https://"), config
    assert done.returncode == 1 and "YOUR-CLIENT-ID" in done.stderr, done  # the placeholder, named


def test_az_git_and_kubectl_lines(tried):
    signed_in(tried)
    az, git, kubectl = blocks(TOOLS, "sh")[:3]
    done = run_sh(tried, az)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert JWT.match(answer["accessToken"]) and answer["tokenType"] == "Bearer", answer
    done = run_sh(tried, git + '\ngit config --global --get credential.https://dev.azure.com.helper')
    assert done.returncode == 0 and done.stdout == "!auth-sidecar git-credential\n", done
    done = run_sh(tried, "unset KUBECONFIG\n" + kubectl + "\nkubectl config view -o json")
    assert done.returncode == 0, done.stderr
    (user,) = [u for u in json.loads(done.stdout.split("\n", 1)[1])["users"] if u["name"] == "entra"]
    assert user["user"]["exec"]["command"] == "auth-sidecar" and user["user"]["exec"]["args"] == ["kubectl-credential"]
    assert_home_untouched(tried)


def port_of(url: str) -> int:
    return int(re.match(r"http://127\.0\.0\.1:(\d+)", url).group(1))


def assert_gone(pid: int, port: int) -> None:
    """The endpoint's process ended and its port refuses connections, within 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                alive = f.read().split(") ", 1)[1][0] != "Z"
        except FileNotFoundError:
            alive = False
        if not alive:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the endpoint (pid {pid}) still runs after the snippet's kill")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_managed_identity_snippet_kill_reaches_the_endpoint(tried):
    """The snippet as written: the endpoint's export lines through a FIFO, a token through
    azure-identity's ManagedIdentityCredential, then `kill "$mi"` ends the very endpoint (the
    old `eval "$(auth-sidecar managed-identity &)"` left a server no `kill %1` reached)."""
    signed_in(tried)
    (snippet,) = [b for b in blocks(TOOLS, "sh") if b.startswith("# Azure SDKs:")]
    done = run_sh(tried, snippet + 'echo "pid=$mi endpoint=$IDENTITY_ENDPOINT"\n', timeout=60)
    assert done.returncode == 0, done.stderr
    expires_on, facts = done.stdout.splitlines()
    assert int(expires_on) > time.time(), done.stdout
    pid, endpoint = re.fullmatch(r"pid=(\d+) endpoint=(\S+)", facts).groups()
    assert_gone(int(pid), port_of(endpoint))
    assert_home_untouched(tried)


def test_azd_snippet_kill_reaches_the_endpoint(tried, tmp_path):
    """The same for azd's endpoint; `azd` here is a stand-in that asks the endpoint for a token
    as azd's RemoteCredential does (azd itself is not installed on the test machine)."""
    signed_in(tried)
    fake = tmp_path / "bin" / "azd"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nexec curl -sf -X POST "$AZD_AUTH_ENDPOINT/token?api-version=2023-07-12-preview" '
                    '-H "Authorization: Bearer $AZD_AUTH_KEY" -H "Content-Type: application/json" '
                    """-d '{"scopes":["https://graph.microsoft.com/.default"]}'\n""")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (snippet,) = [b for b in blocks(TOOLS, "sh") if b.startswith("# azd:")]
    assert "\nazd provision\n" in snippet
    done = run_sh(tried, f'export PATH="{fake.parent}:$PATH"\n' + snippet.replace("\nazd provision\n", "\nazd provision; echo\n")
                  + 'echo "pid=$azd_auth endpoint=$AZD_AUTH_ENDPOINT"\n', timeout=60)
    assert done.returncode == 0, done.stderr
    answer, facts = done.stdout.splitlines()
    answer = json.loads(answer)
    assert answer["status"] == "success" and JWT.match(answer["token"]), answer
    pid, endpoint = re.fullmatch(r"pid=(\d+) endpoint=(\S+)", facts).groups()
    assert_gone(int(pid), port_of(endpoint))


def test_exec_lines(tried):
    signed_in(tried)
    (snippet,) = [b for b in blocks(FEEDS, "sh") if b.startswith("auth-sidecar exec")]
    sdk, graph = snippet.strip().splitlines()
    done = run_sh(tried, sdk, timeout=60)
    assert done.returncode == 0 and int(done.stdout) > time.time(), done
    done = run_sh(tried, graph, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["displayName"] == "Alice Example", done
    assert_home_untouched(tried)


def test_the_user_unit_lines_say_they_need_a_user_systemd():
    """The one snippet a package's newcomer cannot always run says so on its own line."""
    (line,) = [b for b in blocks("## The .deb", "sh") if b.startswith("systemctl --user")]
    assert "optional: needs a user systemd" in line, line
    assert "only where there is a user systemd" in " ".join(section("## The .deb").split())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def test_every_relative_link_of_the_docs_resolves():
    """Moving text between README.md and docs/ keeps every relative link and its #anchor
    pointing at a file and a heading that exist."""
    broken = []
    for path in doc_files():
        with open(os.path.join(REPO, path), encoding="utf-8") as f:
            text = re.sub(r"^```.*?^```$", "", f.read(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(REPO, os.path.dirname(path), file_part)) if file_part \
                else os.path.join(REPO, path)
            if not os.path.exists(resolved):
                broken.append((path, target))
            elif anchor and resolved.endswith(".md"):
                with open(resolved, encoding="utf-8") as f:
                    body = re.sub(r"^```.*?^```$", "", f.read(), flags=re.S | re.M)
                anchors = {slug(h) for h in re.findall(r"^#+ (.*)$", body, re.M)}
                if anchor not in anchors:
                    broken.append((path, target))
    assert not broken, broken


def test_the_agent_line(tried):
    """`auth-sidecar agent &` in a shell: the verbs then go through it (status says so), and
    `kill %1` ends it."""
    line = blocks("## One agent for all your programs", "sh")[0]
    script = (line + "\nfor _ in $(seq 100); do [ -S \"$AUTH_SIDECAR_SOCK\" ] && break; sleep 0.1; done\n"
              "auth-sidecar status; kill %1; wait %1; echo \"agent exit $?\"")
    done = run_sh(tried, script, timeout=60)
    assert "agent exit 0" in done.stdout or "agent exit 143" in done.stdout, done
    assert re.search(r"agent.*pid \d+", done.stdout, re.I), done.stdout
    assert_home_untouched(tried)


def test_the_pop_line_reaches_graph_with_a_signed_request(tried):
    """The PoP snippet as written, against the mock's Graph, which accepts a PoP token only
    with a signed HTTP request made with the token's key (mock/mock_idp/pop.py)."""
    signed_in(tried)
    (snippet,) = blocks("# Proof-of-possession tokens", "sh")
    done = run_sh(tried, snippet, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["displayName"] == "Alice Example", done.stdout
    assert_home_untouched(tried)
