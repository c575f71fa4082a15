"""The shell verbs (`auth-sidecar token|login|logout|accounts|status`) against the mock.

Each verb runs as a real process, configured only by the default configuration file in
$XDG_CONFIG_HOME (no flags), with the scripted browser as $BROWSER (or no browser at all for
the headless sign-in). $XDG_RUNTIME_DIR is a per-test directory, so no agent is found unless
a test starts one (a tiny NDJSON relay to a spawned `auth-sidecar` on the agent socket).
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import pytest

from auth_e2e import ALICE, BOB, CLIENT_ID, CONTOSO_TID, browser_runs, cache_secrets, process_env
from mock_idp.testing import http

SIGN_IN_NEEDED = 2
FAILURE = 1
USAGE = 64


class Verbs:
    """Runs verbs with one test's environment."""

    def __init__(self, binary: str, mock, tmp_path):
        self.binary, self.mock, self.tmp = binary, mock, tmp_path
        self.cache = str(tmp_path / "cache" / "cache.json")
        self.env = {k: v for k, v in process_env(mock, tmp_path).items()
                    if k not in ("DISPLAY", "WAYLAND_DISPLAY", "AUTH_SIDECAR_SOCK")}
        self.env.update({"XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_RUNTIME_DIR": str(tmp_path / "run")})
        for d in ("home", "run"):
            os.makedirs(tmp_path / d, mode=0o700, exist_ok=True)
        self.write_config()

    @property
    def config_file(self) -> str:
        return os.path.join(self.env["XDG_CONFIG_HOME"], "auth-sidecar", "config.json")

    def write_config(self, **extra) -> None:
        config = {"clientId": CLIENT_ID, "authority": self.mock.url + "/organizations",
                  "knownAuthorities": ["127.0.0.1"], "graphEndpoint": self.mock.url + "/",
                  "cache": {"path": self.cache}, "cacheProtection": "plaintext"}
        config.update(extra)
        os.makedirs(os.path.dirname(self.config_file), exist_ok=True)
        with open(self.config_file, "w") as f:
            json.dump(config, f)

    def run(self, *args, env=None, timeout=30) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args], env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def start(self, *args, env=None) -> subprocess.Popen:
        return subprocess.Popen([self.binary, *args], env=env or self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)

    def ok(self, *args, **kw) -> str:
        p = self.run(*args, **kw)
        assert p.returncode == 0, (args, p.returncode, p.stderr)
        return p.stdout


@pytest.fixture
def verbs(sidecar_bin, mock, tmp_path) -> Verbs:
    return Verbs(sidecar_bin, mock, tmp_path)


def graph_me(mock, token: str):
    return http("GET", mock.url + "/v1.0/me", mock.ca_file, headers={"Authorization": "Bearer " + token})


def secrets(verbs: Verbs) -> list[str]:
    return [s for kind in ("AccessToken", "RefreshToken", "IdToken") for s in cache_secrets(verbs.cache, kind)]


def read_stderr_until(proc: subprocess.Popen, predicate, timeout=20.0) -> list[str]:
    """Lines of the process's stderr up to the first that satisfies predicate."""
    lines: list[str] = []
    found = threading.Event()

    def pump():
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if predicate(line):
                found.set()
                return

    threading.Thread(target=pump, daemon=True).start()
    assert found.wait(timeout), lines
    return lines


def test_login_token_graph_accounts_status_logout(verbs, mock):
    out = verbs.ok("login")
    assert out == f"Signed in as {ALICE}\n"
    assert len(browser_runs(verbs.tmp)) == 1

    token = verbs.ok("token")
    assert token.endswith("\n") and token.count("\n") == 1 and " " not in token
    assert graph_me(mock, token.strip()).json()["userPrincipalName"] == ALICE

    result = json.loads(verbs.ok("token", "--output", "json"))
    assert result["accessToken"] == token.strip() and result["fromCache"] is True
    assert result["account"]["username"] == ALICE and result["tokenType"] == "Bearer"
    assert {"expiresOn", "scopes", "tenantId", "authority"} <= result.keys()

    assert verbs.ok("accounts").startswith(ALICE + "  ")
    accounts = json.loads(verbs.ok("accounts", "--output", "json"))["accounts"]
    assert [a["username"] for a in accounts] == [ALICE]

    status = verbs.run("status")
    assert status.returncode == 0, status.stderr
    assert f"{ALICE} (current), token expires in" in status.stdout
    assert CLIENT_ID in status.stdout and verbs.cache in status.stdout and "(not encrypted)" in status.stdout
    assert f"file {verbs.config_file}" in status.stdout and "not running" in status.stdout
    report = json.loads(verbs.ok("status", "--output", "json"))
    assert report["engine"] == "inProcess" and report["agent"]["state"] == "not running"
    assert report["configuration"]["clientId"] == CLIENT_ID
    assert report["accounts"][0]["current"] is True and report["accounts"][0]["token"]["state"] == "valid"
    everything = status.stdout + status.stderr + json.dumps(report)
    for secret in secrets(verbs):
        assert secret not in everything

    assert verbs.ok("logout") == f"Signed out {ALICE}\n"
    after = verbs.run("token")
    assert after.returncode == SIGN_IN_NEEDED and after.stdout == ""
    assert after.stderr.count("\n") == 1 and "auth-sidecar login" in after.stderr, after.stderr
    nothing = verbs.run("logout")
    assert nothing.returncode == FAILURE and "no account is signed in" in nothing.stderr


def test_token_options_and_stdout_is_only_the_output(verbs, mock):
    verbs.ok("login", "--login-hint", BOB, "--scope", "User.Read")
    refreshes = mock.admin.count("token:refresh_token")
    forced = verbs.run("token", "--force-refresh", "--tenant", CONTOSO_TID, "--account", BOB)
    assert forced.returncode == 0, forced.stderr
    assert forced.stderr == "" and graph_me(mock, forced.stdout.strip()).status == 200
    assert mock.admin.count("token:refresh_token") == refreshes + 1
    missing = verbs.run("token", "--account", "nobody@contoso.com")
    assert missing.returncode == SIGN_IN_NEEDED and missing.stdout == ""
    assert "auth-sidecar login --login-hint nobody@contoso.com" in missing.stderr
    mock.admin.revoke(username=BOB)
    expired = verbs.run("token", "--force-refresh")
    assert expired.returncode == SIGN_IN_NEEDED and expired.stdout == ""
    assert expired.stderr.count("\n") == 1 and "auth-sidecar login" in expired.stderr


def test_login_json_holds_no_token(verbs):
    result = json.loads(verbs.ok("login", "--output", "json"))
    assert result["account"]["username"] == ALICE and "accessToken" not in result and "idToken" not in result


def test_device_code_login(verbs, mock):
    proc = verbs.start("login", "--device-code")
    lines = read_stderr_until(proc, lambda line: "enter the code" in line)
    mock.admin.device("approve", "latest")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, (lines, err)
    assert out == f"Signed in as {ALICE}\n"
    assert any("/devicelogin" in line for line in lines), lines
    assert browser_runs(verbs.tmp) == []


def test_browser_login_without_a_browser_prints_the_url_and_completes_when_it_is_followed(verbs, mock):
    env = {k: v for k, v in verbs.env.items() if k != "BROWSER"}
    proc = verbs.start("login", "--browser", env=env)
    lines = read_stderr_until(proc, lambda line: "waiting for the sign-in" in line)
    urls = [line for line in lines if line.startswith("https://")]
    assert len(urls) == 1 and "/authorize?" in urls[0], lines
    url = urls[0]
    port = url.split("redirect_uri=http%3A%2F%2Flocalhost%3A", 1)[1].split("&", 1)[0]
    assert f"ssh -L {port}:127.0.0.1:{port} " in "\n".join(lines), lines
    browser = subprocess.run([verbs.env["BROWSER"], url], env={**verbs.env, "SCRIPTED_BROWSER_WAIT": "1"},
                             capture_output=True, text=True, timeout=20)
    assert browser.returncode == 0, browser.stderr
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out == f"Signed in as {ALICE}\n"
    assert verbs.run("token").returncode == 0


def test_the_default_config_file_also_configures_the_stdio_mode(verbs):
    verbs.ok("login")
    p = subprocess.run([verbs.binary], input='{"jsonrpc":"2.0","id":1,"method":"getAccounts"}\n', env=verbs.env,
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"]["accounts"][0]["username"] == ALICE


def test_without_a_client_id_the_message_says_how_to_configure(verbs):
    os.remove(verbs.config_file)
    p = verbs.run("token")
    assert p.returncode == FAILURE and p.stdout == ""
    assert "--client-id" in p.stderr and verbs.config_file in p.stderr and p.stderr.count("\n") == 1
    flags = verbs.run("accounts", "--client-id", CLIENT_ID, "--cache", verbs.cache, "--cache-protection", "plaintext")
    assert flags.returncode == 0 and flags.stdout == ""
    assert "no accounts" in flags.stderr


def test_a_failing_refresh_prints_one_line_not_the_retries(verbs, mock):
    """#52: `token --force-refresh` while the token endpoint resets every connection: the
    verb's one line (the cause and what to check), not the engine's retry log lines first."""
    verbs.ok("login")
    mock.admin.fault(endpoint="token", type="reset", times=-1)
    p = verbs.run("token", "--force-refresh", timeout=60)
    assert p.returncode == FAILURE and p.stdout == "", (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and "(networkError)" in p.stderr, p.stderr
    assert "check the network connection" in p.stderr, p.stderr
    assert mock.admin.count("token") >= 2, "the engine did not retry at all"


def test_a_client_id_the_service_does_not_know_ends_the_browser_login_at_once(verbs):
    """#52: `login` with a client id the service does not know: one line naming AADSTS700016
    and the key to check within 10 s (was: the browser opened, then the 600 s wait); no browser
    opens, nothing is cached."""
    verbs.write_config(clientId="99999999-8888-7777-6666-555555555555")
    start = time.monotonic()
    p = verbs.run("login", "--browser", timeout=20)
    assert time.monotonic() - start < 10, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert p.returncode == FAILURE and p.stdout == "", (p.returncode, p.stderr)
    assert "AADSTS700016" in last and "clientId" in last, p.stderr
    assert browser_runs(verbs.tmp) == [] and secrets(verbs) == []


@pytest.mark.parametrize("args, needle", [
    (["frobnicate"], "frobnicate"),
    (["token", "--output", "xml"], "xml"),
    (["accounts", "--output", "token"], "token"),
    (["login", "--device-code", "--login-hint", ALICE], "--login-hint"),
    (["token", "--tenant", "a/b"], "--tenant"),
    (["token", "--tenant", ".."], "--tenant: '..' is not a tenant"),
    (["token", "--tenant", "."], "--tenant: '.' is not a tenant"),
])
def test_bad_input_is_a_usage_error(verbs, args, needle):
    p = verbs.run(*args)
    assert p.returncode == USAGE, (p.returncode, p.stderr)
    assert p.stdout == "" and needle in p.stderr


def test_help_for_each_verb(verbs):
    for verb in ("token", "login", "logout", "accounts", "status"):
        p = verbs.run(verb, "--help")
        assert p.returncode == 0 and f"auth-sidecar {verb}" in p.stdout
    root = verbs.run("--help")
    assert all(verb in root.stdout for verb in ("token", "login", "logout", "accounts", "status"))


# ---- (a): a running agent on the socket ---------------------------------------------------

class RunningAgent:
    """`auth-sidecar agent` on the verbs' default socket, with the configuration of `env` (each verb
    sends its configuration in `initialize` too; what runs or reads a file as the user, such as the
    cache path, must be the agent's own: issue 47, finding 5)."""

    def __init__(self, binary: str, path: str, env: dict, log_path):
        self.path, self.log_path = path, log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen([binary, "agent", "--socket", path, "--log-level", "debug"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, env=env)
        deadline = time.monotonic() + 10
        while "agent listening" not in log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline and self.process.poll() is None, log_path.read_text(errors="replace")
            time.sleep(0.02)

    @property
    def connections(self) -> int:
        return self.log_path.read_text(errors="replace").count("connection opened")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()


def test_a_running_agent_is_used(verbs, mock):
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(verbs.binary, path, verbs.env,
                         verbs.tmp / "agent.log")
    try:
        verbs.ok("login")
        token = verbs.ok("token").strip()
        assert graph_me(mock, token).status == 200
        report = json.loads(verbs.ok("status", "--output", "json"))
        assert report["engine"] == "agent" and report["agent"]["state"] == "running" and report["agent"]["socket"] == path
        assert report["configuration"]["clientId"] == CLIENT_ID  # the verb's configuration, sent in initialize
        assert agent.connections == 3
        assert json.loads(verbs.ok("status", "--output", "json", "--no-agent"))["engine"] == "inProcess"
        assert agent.connections == 3
    finally:
        agent.close()
    gone = json.loads(verbs.ok("status", "--output", "json"))
    assert gone["engine"] == "inProcess" and gone["agent"]["state"] == "not running"


def test_a_refused_configuration_is_the_answer_even_when_the_agent_has_its_own(verbs, mock):
    """`token` sends its request right behind `initialize`: when `initialize` is refused, the
    agent's own configuration answers that request, and the verb must not print its token."""
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    verbs.ok("login")
    agent = RunningAgent(verbs.binary, path, verbs.env, verbs.tmp / "agent.log")  # the same config file as the verbs
    try:
        assert verbs.ok("token").count(".") == 2
        refused = verbs.run("token", "--http-timeout-seconds", "9999")
        assert refused.returncode == FAILURE and refused.stdout == "", refused.stderr
        assert "httpTimeoutSeconds" in refused.stderr and refused.stderr.count("\n") == 1
        assert agent.connections == 2
    finally:
        agent.close()


def test_a_socket_of_another_kind_is_refused(verbs):
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    os.makedirs(os.path.dirname(path), mode=0o700)
    os.symlink("/dev/null", path)
    p = verbs.run("status", "--output", "json")
    assert p.returncode == SIGN_IN_NEEDED, p.stderr  # nobody signed in
    assert json.loads(p.stdout)["agent"]["state"] == "refused"
    assert "ignoring the agent socket" in p.stderr
