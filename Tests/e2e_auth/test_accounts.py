"""`auth-sidecar accounts` and `accounts use` (issue #25, item 2) against the mock: every
account with the tenants the cache holds its tokens for, the current one marked (what
`getCurrentAccount` returns), and the switch of the current account that `token` (no
`--account`) and `getCurrentAccount` then follow. Run as test_verbs.py runs the verbs.
"""
from __future__ import annotations

import json
import os
import subprocess

from auth_e2e import ALICE, BOB, CONTOSO_TID
from test_verbs import SIGN_IN_NEEDED, RunningAgent, Verbs, verbs  # noqa: F401 (fixture)
from test_adapters import claims

GUEST_TID = "22222222-0000-4000-8000-00000000aaaa"


def current_account(verbs: Verbs) -> dict:
    """getCurrentAccount, asked of the stdio mode in a process of its own."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "getCurrentAccount", "params": {}}
    p = subprocess.run([verbs.binary], input=json.dumps(request) + "\n", env=verbs.env, capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["result"]


def two_accounts(verbs: Verbs, mock) -> dict:
    """alice (also with a token of a second tenant) then bob signed in; bob is current."""
    verbs.ok("login")
    mock.admin.tenants(id=GUEST_TID, domains=["fabrikam.example"])
    verbs.ok("token", "--tenant", GUEST_TID, "--account", ALICE)
    verbs.ok("login", "--login-hint", BOB)
    return {a["username"]: a for a in json.loads(verbs.ok("accounts", "--output", "json"))["accounts"]}


def test_accounts_shows_each_account_with_its_tenants_and_the_current_one(verbs, mock):
    accounts = two_accounts(verbs, mock)
    assert set(accounts) == {ALICE, BOB}
    assert accounts[ALICE]["tenants"] == [CONTOSO_TID, GUEST_TID]
    assert accounts[BOB]["tenants"] == [CONTOSO_TID]
    assert (accounts[ALICE]["isCurrent"], accounts[BOB]["isCurrent"]) == (False, True)
    assert current_account(verbs)["account"]["username"] == BOB
    lines = verbs.ok("accounts").splitlines()
    assert sorted(lines) == sorted([
        f"{ALICE}  Alice Example  tenants {CONTOSO_TID}, {GUEST_TID}",
        f"{BOB}  Bob Example  tenant {CONTOSO_TID}  (current)"]), lines


def test_accounts_use_switches_the_current_account(verbs, mock):
    accounts = two_accounts(verbs, mock)
    assert claims(verbs.ok("token").strip())["preferred_username"] == BOB

    assert verbs.ok("accounts", "use", ALICE) == f"Current account: {ALICE}\n"
    assert current_account(verbs)["account"]["username"] == ALICE
    assert claims(verbs.ok("token").strip())["preferred_username"] == ALICE
    assert f"{ALICE}  Alice Example  tenants {CONTOSO_TID}, {GUEST_TID}  (current)" in verbs.ok("accounts")

    # by home account ID, with the JSON answer; one call with --account does not switch
    switched = json.loads(verbs.ok("accounts", "use", accounts[BOB]["homeAccountId"], "--output", "json"))
    assert switched["account"]["username"] == BOB and switched["previousAccount"]["username"] == ALICE
    assert claims(verbs.ok("token", "--account", ALICE).strip())["preferred_username"] == ALICE
    assert current_account(verbs)["account"]["username"] == BOB
    assert claims(verbs.ok("token").strip())["preferred_username"] == BOB


def test_accounts_use_of_an_unknown_account_names_the_login(verbs, mock):
    verbs.ok("login")
    p = verbs.run("accounts", "use", "nobody@contoso.com")
    assert p.returncode == SIGN_IN_NEEDED and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and "auth-sidecar login" in p.stderr and "nobody@contoso.com" in p.stderr
    assert current_account(verbs)["account"]["username"] == ALICE


def test_set_current_account_is_reported_as_a_change_by_the_next_get_current_account(verbs, mock):
    two_accounts(verbs, mock)
    proc = subprocess.Popen([verbs.binary], env=verbs.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)

    def call(rid, method, params):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == rid and "result" in reply, reply
        return reply["result"]

    try:
        assert call(1, "getCurrentAccount", {})["account"]["username"] == BOB
        switched = call(2, "setCurrentAccount", {"account": {"username": ALICE}})
        assert (switched["account"]["username"], switched["previousAccount"]["username"]) == (ALICE, BOB)
        after = call(3, "getCurrentAccount", {})
        assert (after["account"]["username"], after["previousAccount"]["username"]) == (ALICE, BOB)
        assert call(4, "getCurrentAccount", {})["previousAccount"] is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)


def test_accounts_use_through_a_running_agent(verbs, mock):
    two_accounts(verbs, mock)
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(verbs.binary, path, verbs.env,
                         verbs.tmp / "agent.log")
    try:
        assert claims(verbs.ok("token").strip())["preferred_username"] == BOB
        assert verbs.ok("accounts", "use", ALICE) == f"Current account: {ALICE}\n"
        assert agent.connections == 2
        assert claims(verbs.ok("token").strip())["preferred_username"] == ALICE
        assert f"{ALICE}  Alice Example  tenants {CONTOSO_TID}, {GUEST_TID}  (current)" in verbs.ok("accounts")
    finally:
        agent.close()
    # the switch is in the cache file: a process without the agent sees it
    assert current_account(verbs)["account"]["username"] == ALICE
