"""`auth-sidecar status` in one screen (issue 25, item 4): the account and tenant, each cached
access token's scopes and minutes left, a refresh token or not (never its value), the last
failed refresh, the cache and its key, the agent (since when, how many clients); exit status 0
signed in, 2 sign-in needed. Real binary, real cache file, the mock."""
from __future__ import annotations

import json
import os
import re
import time

from auth_e2e import ALICE, CONTOSO_TID
from test_verbs import SIGN_IN_NEEDED, RunningAgent, Verbs, secrets  # noqa: F401
from test_verbs import verbs  # noqa: F401 (the fixture)


def test_signed_in_shows_tokens_scopes_minutes_and_the_refresh_token(verbs):
    verbs.ok("login")
    p = verbs.run("status")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    assert re.search(rf"^account:    {re.escape(ALICE)} \(current\), token expires in (\d+ h )?\d+ min, tenant {CONTOSO_TID}$", text, re.M), text
    assert re.search(rf"^tokens:     {re.escape(ALICE)}: .*(?i:user\.read)\b.* \(tenant \S+\), \d+ min left$", text, re.M), text
    assert f"            {ALICE}: refresh token present" in text
    assert "last refresh: no failure recorded" in text
    assert f"cache:      {verbs.cache} (not encrypted)" in text and "key store:  cacheProtection plaintext" in text
    report = json.loads(verbs.ok("status", "--output", "json"))
    assert report["signedIn"] is True and report["lastRefreshError"] is None
    account = report["accounts"][0]
    assert account["refreshToken"] is True
    assert any("user.read" in [s.lower() for s in t["scopes"]] and t["expiresOn"] > time.time() + 1800
               for t in account["accessTokens"])
    everything = text + p.stderr + json.dumps(report)
    for secret in secrets(verbs):
        assert secret not in everything


def test_nobody_signed_in_exits_2_with_the_report(verbs):
    p = verbs.run("status")
    assert p.returncode == SIGN_IN_NEEDED
    assert "account:    none signed in; run 'auth-sidecar login'" in p.stdout
    assert p.stderr.strip().splitlines()[-1] == "auth-sidecar: no account is signed in; run 'auth-sidecar login'"
    report = json.loads(verbs.run("status", "--output", "json").stdout)
    assert report["signedIn"] is False and report["accounts"] == []


def test_a_revoked_session_is_sign_in_needed_with_the_account_and_why(verbs, mock):
    mock.admin.config(access_token_lifetime=120)  # inside the 5-minute margin: every request refreshes
    verbs.ok("login")
    mock.admin.revoke(username=ALICE, reason="revoked")
    p = verbs.run("status")
    assert p.returncode == SIGN_IN_NEEDED, (p.stdout, p.stderr)
    assert f"account:    {ALICE} (current), sign-in needed, tenant {CONTOSO_TID}" in p.stdout
    assert re.search(rf"^last refresh: failed \d+ s ago for {re.escape(ALICE)}: .*AADSTS50173.* \(interactionRequired\)$",
                     p.stdout, re.M), p.stdout
    assert p.stderr.strip().splitlines()[-1] == "auth-sidecar: a sign-in is needed; run 'auth-sidecar login'"


def test_the_last_failed_refresh_is_shown_until_a_refresh_works(verbs, mock):
    verbs.ok("login")
    mock.admin.fault(endpoint="token:refresh_token", type="status", status=400, times=-1,
                     body={"error": "temporarily_unavailable",
                           "error_description": "AADSTS90033: A transient error has occurred. Please try again."})
    failed = verbs.run("token", "--force-refresh")
    assert failed.returncode == 1, failed.stderr
    before = open(verbs.cache, "rb").read()
    p = verbs.run("status")
    assert p.returncode == 0, p.stderr  # the cached token is still valid
    line = next(line for line in p.stdout.splitlines() if line.startswith("last refresh:"))
    assert re.fullmatch(rf"last refresh: failed \d+ s ago for {re.escape(ALICE)}: .*AADSTS90033.* \(serverError\)", line), line
    report = json.loads(verbs.ok("status", "--output", "json"))
    assert report["lastRefreshError"]["username"] == ALICE and report["lastRefreshError"]["error"] == "serverError"
    assert open(verbs.cache, "rb").read() == before  # kept beside the cache, not in it
    assert oct(os.stat(verbs.cache + ".last-refresh-error").st_mode & 0o777) == "0o600"
    mock.admin.call("faults/clear", {})
    verbs.ok("token", "--force-refresh")
    assert "last refresh: no failure recorded" in verbs.ok("status")
    assert not os.path.exists(verbs.cache + ".last-refresh-error")


def test_the_agent_line_says_since_when_and_how_many_clients(verbs):
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(verbs.binary, path, verbs.env,
                         verbs.tmp / "agent.log")
    try:
        verbs.ok("login")
        report = json.loads(verbs.ok("status", "--output", "json"))
        assert report["agent"]["state"] == "running" and report["agent"]["pid"] == agent.process.pid
        assert report["agent"]["connections"] == 1 and report["agent"]["startedAt"] > 0
        text = verbs.ok("status")
        assert re.search(rf"^agent:      {re.escape(path)} \(running, pid {agent.process.pid}, up \d+ s, 0 other clients\)$",
                         text, re.M), text
    finally:
        agent.close()


def test_a_key_command_runs_once_per_verb_and_never_in_status_with_an_agent(verbs):
    """status asks the engine for the cache's summary (getCacheSummary): it never resolves the
    key or decrypts the file itself, so a key command runs once per process, in the engine."""
    runs = verbs.tmp / "key-command-runs"
    script = verbs.tmp / "key-command.sh"
    script.write_text(f"#!/bin/sh\necho run >> '{runs}'\nprintf '%s\\n' {os.urandom(32).hex()}\n")
    script.chmod(0o700)
    verbs.write_config(cache={"path": verbs.cache, "encryption": {"keyCommand": [str(script)]}}, cacheProtection="keyCommand")

    def count(*args) -> int:
        runs.write_text("")
        p = verbs.run(*args)
        assert p.returncode == 0, (args, p.stderr)
        return runs.read_text().count("run")

    assert count("login") == 1
    assert count("token", "--no-agent") == 1
    report_runs = count("status", "--no-agent", "--output", "json")
    assert report_runs == 1
    report = json.loads(verbs.ok("status", "--output", "json", "--no-agent"))
    assert report["accounts"][0]["accessTokens"] and report["accounts"][0]["refreshToken"] is True, report  # from the engine
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(verbs.binary, path, verbs.env,
                         verbs.tmp / "agent.log")
    try:
        assert count("status") == 1, "the agent's engine, once; none in status's own process"
        assert count("status") == 0 and count("token") == 0, "the agent holds the key"
    finally:
        agent.close()
