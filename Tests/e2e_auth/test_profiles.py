"""Profiles (issue #25, item 1) against the mock: a configuration file with two named profiles
(two client ids, two authorities of the mock), each signed in as its own user, each with its
own cache file; `--profile`, `AUTH_SIDECAR_PROFILE`, `profiles` and `profiles use`, and an agent
serving both at once. Run as test_verbs.py runs the verbs (the default configuration file in
$XDG_CONFIG_HOME, no flags unless a test gives them).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from auth_e2e import ALICE, BOB, CLIENT_ID, CONTOSO_TID
from test_adapters import claims
from test_verbs import FAILURE, USAGE, RunningAgent, Verbs, verbs  # noqa: F401 (fixture)

LAB_CLIENT = "00002222-aaaa-4444-bbbb-5555dddd6666"


def write_profiles(verbs: Verbs, **top) -> bytes:
    """work (the mock's client, /organizations) and lab (a second client, the Contoso tenant),
    sharing the top-level keys; no cache key, so each gets its own file. Returns the bytes."""
    url = verbs.mock.url
    config = {"knownAuthorities": ["127.0.0.1"], "graphEndpoint": url + "/", "cacheProtection": "plaintext",
              "profiles": {"work": {"clientId": CLIENT_ID, "authority": url + "/organizations"},
                           "lab": {"clientId": LAB_CLIENT, "authority": f"{url}/{CONTOSO_TID}"}},
              "defaultProfile": "work", **top}
    text = json.dumps(config, indent=2).encode() + b"\n"
    with open(verbs.config_file, "wb") as f:
        f.write(text)
    return text


@pytest.fixture
def profiles(verbs, mock) -> Verbs:
    """Both profiles signed in: work as alice, lab as bob."""
    mock.admin.clients(client_id=LAB_CLIENT)
    write_profiles(verbs)
    verbs.ok("login")
    verbs.ok("login", "--profile", "lab", "--login-hint", BOB)
    return verbs


def who(token: str) -> tuple[str, str]:
    c = claims(token.strip())
    return c["preferred_username"], c["azp"]


def cache_file(verbs: Verbs, profile: str) -> str:
    return os.path.join(verbs.env["XDG_CACHE_HOME"], "auth-sidecar", f"msal_token_cache.{profile}.json")


def test_each_profile_has_its_own_sign_in_token_and_cache(profiles):
    assert who(profiles.ok("token")) == (ALICE, CLIENT_ID)
    assert who(profiles.ok("token", "--profile", "work")) == (ALICE, CLIENT_ID)
    assert who(profiles.ok("token", "--profile", "lab")) == (BOB, LAB_CLIENT)
    assert who(profiles.ok("token", env={"AUTH_SIDECAR_PROFILE": "lab"})) == (BOB, LAB_CLIENT)
    assert who(profiles.ok("token", "--profile", "work", env={"AUTH_SIDECAR_PROFILE": "lab"})) == (ALICE, CLIENT_ID)
    with open(cache_file(profiles, "work")) as f:
        work = f.read()
    with open(cache_file(profiles, "lab")) as f:
        lab = f.read()
    assert ALICE in work and BOB not in work and BOB in lab and ALICE not in lab
    # every verb and adapter takes it: accounts, the cache export, kubectl's credential
    assert json.loads(profiles.ok("accounts", "--profile", "lab", "--output", "json"))["accounts"][0]["username"] == BOB
    assert BOB in profiles.ok("cache", "export", "--plaintext", "--profile", "lab")
    credential = json.loads(profiles.ok("kubectl-credential", "--profile", "lab", "--scope", "User.Read"))
    assert who(credential["status"]["token"]) == (BOB, LAB_CLIENT)
    status = json.loads(profiles.ok("status", "--output", "json", env={"AUTH_SIDECAR_PROFILE": "lab"}))
    assert status["configurationSources"] == [f"file {profiles.config_file}", "profile lab"]
    assert status["configuration"]["clientId"] == LAB_CLIENT
    assert status["configuration"]["cache"]["path"] == cache_file(profiles, "lab")


def test_profiles_lists_each_with_its_account_and_use_switches_the_default(profiles):
    listed = json.loads(profiles.ok("profiles", "--output", "json"))
    assert listed["file"] == profiles.config_file and listed["defaultProfile"] == "work"
    rows = {p["name"]: p for p in listed["profiles"]}
    assert list(rows) == ["work", "lab"]
    assert (rows["work"]["account"]["username"], rows["work"]["isDefault"], rows["work"]["clientId"]) == (ALICE, True, CLIENT_ID)
    assert (rows["lab"]["account"]["username"], rows["lab"]["isDefault"], rows["lab"]["clientId"]) == (BOB, False, LAB_CLIENT)
    text = profiles.ok("profiles").splitlines()
    assert text[0].split() == ["work", ALICE, profiles.mock.url + "/organizations", "(default)"], text
    assert text[1].split() == ["lab", BOB, f"{profiles.mock.url}/{CONTOSO_TID}"], text

    before = open(profiles.config_file, "rb").read()
    assert profiles.ok("profiles", "use", "lab") == "Default profile: lab\n"
    after = open(profiles.config_file, "rb").read()
    assert after == before.replace(b'"defaultProfile": "work"', b'"defaultProfile": "lab"')
    assert who(profiles.ok("token")) == (BOB, LAB_CLIENT)
    assert json.loads(profiles.ok("profiles", "--output", "json"))["defaultProfile"] == "lab"

    refused = profiles.run("profiles", "use", "nope")
    assert refused.returncode == FAILURE and refused.stdout == "", refused.stderr
    assert "unknown profile 'nope'" in refused.stderr and "work, lab" in refused.stderr
    assert open(profiles.config_file, "rb").read() == after


def test_an_unknown_profile_is_refused_naming_the_known_ones(verbs, mock):
    write_profiles(verbs)
    p = verbs.run("token", "--profile", "nope")
    assert p.returncode == FAILURE and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert "unknown profile 'nope'" in p.stderr and "work, lab" in p.stderr
    p = verbs.run("token", env={"AUTH_SIDECAR_PROFILE": "nope"})
    assert p.returncode == FAILURE and "work, lab" in p.stderr
    stdio = subprocess.run([verbs.binary, "--profile", "nope"], env=verbs.env, capture_output=True, text=True,
                           input="", timeout=30)
    assert stdio.returncode == USAGE and "work, lab" in stdio.stderr
    write_profiles(verbs, defaultProfile=None)
    p = verbs.run("token")
    assert p.returncode == FAILURE and "no defaultProfile" in p.stderr and "--profile" in p.stderr, p.stderr


def silent_over(sock_path: str, initialize: dict) -> dict:
    """One session on the agent's socket: initialize with these params, then a silent token."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sock_path)
        s.settimeout(20)
        messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
                    {"jsonrpc": "2.0", "id": 2, "method": "acquireTokenSilent", "params": {"scopes": ["User.Read"]}}]
        s.sendall("".join(json.dumps(m) + "\n" for m in messages).encode())
        replies = {}
        with s.makefile("r") as lines:
            while len(replies) < 2:
                reply = json.loads(lines.readline())
                replies[reply["id"]] = reply
    assert "result" in replies[1], replies
    return {"initialize": replies[1]["result"], "token": replies[2]}


def test_the_agent_serves_every_profile_at_once(profiles):
    path = os.path.join(profiles.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(profiles.binary, path, profiles.env, profiles.tmp / "agent.log")
    try:
        assert who(profiles.ok("token", "--profile", "lab")) == (BOB, LAB_CLIENT)
        assert who(profiles.ok("token")) == (ALICE, CLIENT_ID)
        assert agent.connections == 2
        # a client on the socket names the profile in initialize; the agent reads it from its file
        lab = silent_over(path, {"profile": "lab"})
        assert lab["initialize"]["profile"] == "lab" and lab["initialize"]["configuration"]["clientId"] == LAB_CLIENT
        assert who(lab["token"]["result"]["accessToken"]) == (BOB, LAB_CLIENT)
        assert who(silent_over(path, {})["token"]["result"]["accessToken"]) == (ALICE, CLIENT_ID)
        # the stdio mode relays to the agent with its profile
        request = {"jsonrpc": "2.0", "id": 1, "method": "acquireTokenSilent", "params": {"scopes": ["User.Read"]}}
        relayed = subprocess.run([profiles.binary, "--profile", "lab"], input=json.dumps(request) + "\n",
                                 env=profiles.env, capture_output=True, text=True, timeout=30)
        assert who(json.loads(relayed.stdout)["result"]["accessToken"]) == (BOB, LAB_CLIENT), relayed.stderr
        assert agent.connections == 5
    finally:
        agent.close()


def test_a_running_agent_serves_a_profile_added_to_the_file_after_it_started(profiles):
    path = os.path.join(profiles.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(profiles.binary, path, profiles.env, profiles.tmp / "agent.log")
    try:
        assert who(silent_over(path, {"profile": "lab"})["token"]["result"]["accessToken"]) == (BOB, LAB_CLIENT)
        config = json.loads(open(profiles.config_file).read())
        config["profiles"]["lab2"] = {**config["profiles"]["lab"], "cache": {"path": cache_file(profiles, "lab")}}
        with open(profiles.config_file, "w") as f:
            json.dump(config, f)
        added = silent_over(path, {"profile": "lab2"})  # a library client naming the new profile
        assert added["initialize"]["profile"] == "lab2"
        assert who(added["token"]["result"]["accessToken"]) == (BOB, LAB_CLIENT)
        with socket.socket(socket.AF_UNIX) as s:  # still unknown: refused, naming the file's profiles as they are now
            s.connect(path)
            s.settimeout(20)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"profile":"nope"}}\n')
            error = json.loads(s.makefile("r").readline())["error"]
        assert error["code"] == -32602 and "unknown profile 'nope'" in error["message"], error
        assert "lab2" in error["message"], error
    finally:
        agent.close()


def test_initialize_refuses_an_unknown_profile_listing_the_known_ones(profiles):
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"profile": "nope"}}
    p = subprocess.run([profiles.binary], input=json.dumps(request) + "\n", env=profiles.env, capture_output=True,
                       text=True, timeout=30)
    error = json.loads(p.stdout)["error"]
    assert error["code"] == -32602 and error["data"]["member"] == "profile", error
    assert "unknown profile 'nope'" in error["message"] and "work, lab" in error["message"]


def test_an_agent_started_with_a_profile_gives_it_to_sessions_that_name_none(profiles):
    path = os.path.join(profiles.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(profiles.binary, path, {**profiles.env, "AUTH_SIDECAR_PROFILE": "lab"}, profiles.tmp / "agent.log")
    try:
        bare = silent_over(path, {})
        assert bare["initialize"]["profile"] == "lab"
        assert who(bare["token"]["result"]["accessToken"]) == (BOB, LAB_CLIENT)
        assert who(profiles.ok("token")) == (ALICE, CLIENT_ID)  # a verb sends its own (default) profile
        listed = {p["name"]: p["account"]["username"] for p in json.loads(profiles.ok("profiles", "--output", "json"))["profiles"]}
        assert listed == {"work": ALICE, "lab": BOB}
        assert agent.connections == 4
    finally:
        agent.close()


def test_shell_completion_offers_the_files_profiles(verbs, mock):
    write_profiles(verbs)
    for shell in ("bash", "zsh", "fish"):
        script = verbs.ok("--generate-completion-script", shell)
        assert "--profile" in script and "---completion" in script, shell
    # what the scripts run for `auth-sidecar token --profile <TAB>` and `profiles use <TAB>`
    for words in (["token", "--", "--profile", "3", "0", "token", "--profile", ""],
                  ["profiles", "use", "--", "positional@0", "3", "0", "profiles", "use", ""]):
        assert verbs.ok("---completion", *words).split() == ["work", "lab"], words


def test_profiles_use_rewrites_a_linked_file_in_place_keeping_its_mode(verbs, mock):
    """A dotfiles manager's link stays a link; the target keeps its mode; nothing is left beside it."""
    real_dir = verbs.tmp / "dotfiles"
    real_dir.mkdir()
    real = real_dir / "auth-sidecar.json"
    text = write_profiles(verbs)
    os.unlink(verbs.config_file)
    real.write_bytes(text.replace(b'  "defaultProfile": "work"\n', b'  "scopes": ["User.Read"]\n'))
    os.chmod(real, 0o640)
    os.symlink(real, verbs.config_file)
    before = real.read_bytes()
    assert b"defaultProfile" not in before
    assert verbs.ok("profiles", "use", "lab", "--output", "json") == json.dumps(
        {"file": verbs.config_file, "defaultProfile": "lab"}, separators=(",", ":")) + "\n"
    assert os.path.islink(verbs.config_file) and os.stat(real).st_mode & 0o777 == 0o640
    assert real.read_bytes() == before.replace(b'{\n', b'{\n  "defaultProfile": "lab",\n', 1)
    assert sorted(os.listdir(real_dir)) == ["auth-sidecar.json"]
    assert json.loads(verbs.ok("profiles", "--output", "json"))["defaultProfile"] == "lab"


@pytest.mark.time_limit(300)
def test_profiles_use_killed_mid_rewrite_leaves_no_temporary_file_after_the_next_run(verbs, mock):
    """kill -9 at random moments of `profiles use` (issue #42: 8 in 100 rounds left a
    config.json.tmp-PID), then one normal run: no temporary file beside the configuration, and
    the file is whole. A dead writer's file of each naming (this version's and the earlier
    `config.json.tmp-PID`) is planted too, so the removal is tested even when no kill lands
    between the write and the rename; a live writer's is kept."""
    import random
    import signal
    import time
    write_profiles(verbs)
    directory = os.path.dirname(verbs.config_file)
    dead = subprocess.Popen(["true"])
    dead.wait()
    planted = [os.path.join(directory, f"config.json.tmp-{dead.pid}"),
               os.path.join(directory, f".config.json.tmp-{dead.pid}-7")]
    live = os.path.join(directory, f".config.json.tmp-{os.getpid()}-8")
    for path in planted + [live]:
        with open(path, "w") as f:
            f.write("{}")
    rng = random.Random(42)
    rounds = int(os.environ.get("PROFILES_KILL_ROUNDS", "100"))
    for i in range(rounds):
        p = subprocess.Popen([verbs.binary, "profiles", "use", ("lab", "work")[i % 2]], env=verbs.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.02))
        p.send_signal(signal.SIGKILL)
        p.wait()
        json.load(open(verbs.config_file))  # always whole
    assert verbs.ok("profiles", "use", "lab") == "Default profile: lab\n"
    assert sorted(os.listdir(directory)) == sorted(["config.json", os.path.basename(live)])
    os.unlink(live)
