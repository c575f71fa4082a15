"""The paste-back sign-in (issue 51): the test plays the user. It takes the sign-in URL (the
`pasteSignIn` request over JSON-RPC, or the verb's stderr), opens it in the scripted browser,
which stops where a real browser would (the http://localhost address nothing listens on) and
prints that address, and pastes it back (the reply's `redirectedTo`, or the verb's stdin).
A wrong state, an error= address and a code from another sign-in each fail with their own
error, and nothing reaches the cache. A tenant that refuses the device code (the mock's
`device_code_blocked`) gets one line naming the ways that work, and the paste-back works there.
"""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import time
import urllib.parse

import pytest

import sidecar as sc
from auth_e2e import ALICE, BROWSER, CONTOSO_TID, SCOPES, SIGN_IN
from test_verbs import Verbs, read_stderr_until

FAILURE = 1


def browse(mock, url: str, action: str = "complete") -> str:
    """The address the scripted browser ends on for `url` (nothing is delivered to the app)."""
    env = {**os.environ, "SCRIPTED_BROWSER_CA": mock.ca_file, "SCRIPTED_BROWSER_ADDRESS": "1",
           "SCRIPTED_BROWSER_ACTION": action}
    env.pop("SCRIPTED_BROWSER_COOKIES", None)
    done = subprocess.run([sys.executable, BROWSER, url], env=env, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    address = done.stdout.strip()
    assert address.startswith("http://localhost"), address
    return address


def query(address: str) -> dict:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(address).query))


def wait_request(p, method: str, timeout: float = 10.0) -> dict:
    """The next server -> client request `method` (other messages stay queued)."""
    for i, m in enumerate(p.inbox):
        if isinstance(m, dict) and m.get("method") == method and "id" in m:
            del p.inbox[i]
            return m
    deadline = time.monotonic() + timeout
    while True:
        m = p._take(deadline)
        assert m is not None, f"no {method} request; stderr: {p.stderr_tail()!r}"
        if isinstance(m, dict) and m.get("method") == method and "id" in m:
            return m
        p.inbox.append(m)


def start_paste(p, **params) -> tuple[int, dict]:
    """acquireToken flow paste: its id and the pasteSignIn request it led to."""
    rid = p.submit("acquireToken", {"scopes": SCOPES, "flow": "paste", **params})
    m = wait_request(p, "pasteSignIn")
    assert m["params"]["requestId"] == rid, m
    return rid, m


def answer(p, m: dict, address: str) -> None:
    p.send({"jsonrpc": "2.0", "id": m["id"], "result": {"redirectedTo": address}})


def nothing_cached(p, mock) -> None:
    path = p.cache_path
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        assert '"secret"' not in text, text[:300]


def test_a_paste_back_sign_in_over_json_rpc(launch, mock):
    p = launch()
    rid, m = start_paste(p)
    url = m["params"]["url"]
    sent = query(url)
    assert url.startswith(mock.url + "/organizations/oauth2/v2.0/authorize?"), url
    assert sent["redirect_uri"] == "http://localhost" and sent["code_challenge_method"] == "S256", sent
    assert sent["state"] and sent["nonce"] and sent["response_mode"] == "query", sent
    address = browse(mock, url)
    assert query(address)["state"] == sent["state"]
    answer(p, m, address)
    r = sc.assert_result(p.wait_for(rid, SIGN_IN))
    assert r["account"]["username"] == ALICE and r["fromCache"] is False
    # The verifier stayed on this host until the code was redeemed with it.
    form = mock.admin.log("token:authorization_code")[-1]["form"]
    verifier = form["code_verifier"]
    assert verifier not in url
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert digest == sent["code_challenge"] and form["redirect_uri"] == "http://localhost"
    assert p.silent()["fromCache"] is True
    assert p.ok("getCurrentAccount")["account"]["username"] == ALICE


def test_the_bare_code_or_the_query_alone_will_do(launch, mock):
    p = launch()
    rid, m = start_paste(p)
    answer(p, m, "  " + urllib.parse.urlsplit(browse(mock, m["params"]["url"])).query + "\n")
    assert sc.assert_result(p.wait_for(rid, SIGN_IN))["account"]["username"] == ALICE
    rid, m = start_paste(p, promptType="login")
    answer(p, m, query(browse(mock, m["params"]["url"]))["code"])
    assert sc.assert_result(p.wait_for(rid, SIGN_IN))["account"]["username"] == ALICE


def test_a_wrong_state_is_refused_and_nothing_is_written(launch, mock):
    p = launch()
    rid, m = start_paste(p)
    address = browse(mock, m["params"]["url"])
    state = query(address)["state"]
    answer(p, m, address.replace("state=" + state, "state=" + state[::-1]))
    e = sc.assert_error(p.wait_for(rid, SIGN_IN), -51017, name="pastedStateMismatch")
    assert "another sign-in" in e["message"]
    assert mock.admin.count("token:authorization_code") == 0
    nothing_cached(p, mock)


def test_an_error_address_becomes_the_services_error(launch, mock):
    p = launch()
    mock.admin.authorize__next(outcome="decline")
    rid, m = start_paste(p)
    address = browse(mock, m["params"]["url"])
    assert "error=access_denied" in address
    answer(p, m, address)
    e = sc.assert_error(p.wait_for(rid, SIGN_IN), -50005, name="userCanceled")
    assert e["data"]["oauthError"] == "access_denied" and "AADSTS65004" in e["data"]["oauthErrorDescription"]
    assert mock.admin.count("token:authorization_code") == 0
    nothing_cached(p, mock)


def test_a_code_from_another_sign_in_is_refused(launch, mock):
    p = launch()
    rid, first = start_paste(p)
    other_codes = [query(browse(mock, first["params"]["url"]))["code"] for _ in range(2)]
    answer(p, first, "https://example.com/not-the-address")
    e = sc.assert_error(p.wait_for(rid, SIGN_IN), -51017, name="pastedAddressRefused")
    assert "not where the sign-in ended" in e["message"]
    # The next sign-in's own state with the first one's code: the state checks out, the
    # service refuses this sign-in's verifier for that code.
    rid, m = start_paste(p)
    state = query(browse(mock, m["params"]["url"]))["state"]
    answer(p, m, f"http://localhost/?code={urllib.parse.quote(other_codes[0])}&state={state}")
    e = sc.assert_error(p.wait_for(rid, SIGN_IN), -51017, name="pastedCodeFromAnotherSignIn")
    assert "another sign-in" in e["message"] and e["data"]["oauthError"] == "invalid_grant"
    # A bare code of the first sign-in, pasted into a third.
    rid, m = start_paste(p)
    answer(p, m, other_codes[1])
    sc.assert_error(p.wait_for(rid, SIGN_IN), -51017, name="pastedCodeFromAnotherSignIn")
    nothing_cached(p, mock)


def test_a_client_without_pastesignin_is_told(launch, mock):
    p = launch()
    rid, m = start_paste(p)
    p.send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "Method not found"}})
    sc.assert_error(p.wait_for(rid, SIGN_IN), -51006, name="browserUnavailable")


# ---- the verb --------------------------------------------------------------------------

@pytest.fixture
def verbs(sidecar_bin, mock, tmp_path) -> Verbs:
    v = Verbs(sidecar_bin, mock, tmp_path)
    for k in [k for k in v.env if k.startswith(("SSH_", "WSL_")) or k in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")]:
        del v.env[k]
    mock.admin.config(device_code_interval=1)
    return v


def paste_login(verbs: Verbs, mock, change=lambda address: address, env=None) -> subprocess.Popen:
    """`login --paste` with the test as the user; returns the finished process."""
    proc = subprocess.Popen([verbs.binary, "login", "--paste"], env={**verbs.env, **(env or {})}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = read_stderr_until(proc, lambda line: "paste that whole address here" in line)
    assert lines[0] == ("auth-sidecar: signing in with a pasted address: --paste was given: open the URL in any "
                        "browser, then paste back the address it ends on"), lines
    url = next(line for line in lines if line.startswith("https://"))
    assert "redirect_uri=http%3A%2F%2Flocalhost&" in url
    proc.stdin.write(change(browse(mock, url)) + "\n")
    proc.stdin.flush()
    proc.out, proc.err = proc.communicate(timeout=20)
    return proc


def test_login_paste_signs_in_with_the_address_on_stdin(verbs, mock):
    proc = paste_login(verbs, mock)
    assert proc.returncode == 0 and proc.out == f"Signed in as {ALICE}\n", proc.err
    assert verbs.ok("token").strip()
    assert mock.admin.count("token:refresh_token") == 0


def test_login_paste_with_a_wrong_state_fails_and_writes_nothing(verbs, mock):
    proc = paste_login(verbs, mock, change=lambda a: a.replace("state=", "state=x"))
    assert proc.returncode == FAILURE and proc.out == "", proc.err
    assert "the pasted address belongs to another sign-in" in proc.err.strip().splitlines()[-1]
    assert not os.path.exists(verbs.cache) or '"secret"' not in open(verbs.cache).read()


def test_login_paste_with_nothing_pasted(verbs, mock):
    proc = subprocess.run([verbs.binary, "login", "--paste"], env=verbs.env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=20)
    assert proc.returncode == FAILURE and "standard input ended before an address was pasted" in proc.stderr, proc.stderr
    bad = verbs.run("login", "--paste", "--device-code")
    assert bad.returncode != 0 and "--paste excludes" in bad.stderr


# ---- a tenant that refuses the device code ----------------------------------------------

def test_json_rpc_a_blocked_device_code_names_paste_and_paste_works(launch, mock):
    mock.admin.tenants(id=CONTOSO_TID, device_code_blocked=True)
    mock.admin.config(device_code_interval=1)
    p = launch()
    rid = p.submit("acquireToken", {"scopes": SCOPES, "flow": "deviceCode"})
    n = p.wait_notification("deviceCode")
    mock.admin.device("approve", n["params"]["userCode"], username=ALICE)
    e = sc.assert_error(p.wait_for(rid, SIGN_IN), -51018, name="deviceCodeBlocked")
    assert e["message"].startswith("the tenant blocks sign-in with a device code (AADSTS53003"), e
    assert 'flow "paste"' in e["message"] and e["data"]["errorCodes"] == [53003]
    rid, m = start_paste(p)
    answer(p, m, browse(mock, m["params"]["url"]))
    assert sc.assert_result(p.wait_for(rid, SIGN_IN))["account"]["username"] == ALICE


def test_the_login_verb_leads_a_blocked_tenant_to_paste_back(verbs, mock):
    mock.admin.tenants(id=CONTOSO_TID, device_code_blocked=True)
    env = {**verbs.env, "SSH_CONNECTION": "10.1.2.3 50000 10.9.8.7 22", "USER": "me"}
    proc = subprocess.Popen([verbs.binary, "login"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = read_stderr_until(proc, lambda line: "enter the code" in line)
    assert "--paste" in lines[0], lines
    mock.admin.device("approve", "latest", username=ALICE)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == FAILURE and out == "", err
    last = err.strip().splitlines()[-1]
    assert last.startswith("auth-sidecar: the tenant blocks sign-in with a device code (AADSTS53003: Conditional Access). "), last
    assert "'auth-sidecar login --paste'" in last and "ssh -L 8400:127.0.0.1:8400 me@10.9.8.7" in last, last
    assert "agent forwarding" in last
    # The way it names works.
    done = paste_login(verbs, mock, env={"SSH_CONNECTION": "10.1.2.3 50000 10.9.8.7 22"})
    assert done.returncode == 0 and done.out == f"Signed in as {ALICE}\n", done.err


def test_a_sign_in_that_cannot_succeed_fails_before_the_url_is_shown(launch, mock):
    p = launch(clientId="99999999-9999-4999-8999-999999999999")  # unknown to the service
    e = p.error("acquireToken", {"scopes": SCOPES, "flow": "paste"}, -51010, timeout=SIGN_IN)
    assert "AADSTS700016" in e["message"], e
    assert not any(isinstance(m, dict) and m.get("method") == "pasteSignIn" for m in p.inbox), p.inbox
