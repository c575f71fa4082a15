"""Proof-of-possession on the agent's forward socket (#49 item 4): refused (-51014) unless the
agent's own configuration lists the resource host in `forwardProofOfPossession`; then the
signed HTTP request is made on the laptop, by the agent, with the laptop's key — the remote
gets the SHR, never the key — and only for the hosts listed and the scopes of `forwardScopes`.
Checked by the mock's PoP resource and the independent verifier (Tests/e2e/shr_verifier.py)."""
from __future__ import annotations

import subprocess

import shr_verifier
from mock_idp.testing import http
from test_combination_matrix import over_socket
from test_verbs import verbs  # noqa: F401  (the fixture)


def _agent(verbs, tmp_path, name):  # noqa: F811
    run = tmp_path / name
    run.mkdir(mode=0o700)
    agent = subprocess.Popen([verbs.binary, "agent", "--socket", str(run / "agent.sock"), "--forward"], env=verbs.env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{name}.log", "wb"))
    return agent, run


def _stop(agent):
    agent.terminate()
    agent.wait(timeout=10)


def test_the_forward_socket_signs_pop_requests_only_for_the_hosts_the_agent_lists(verbs, mock, tmp_path):  # noqa: F811
    host = mock.url.split("//", 1)[1]
    url = mock.url + "/pop/resource/items"
    pop = {"method": "POST", "url": url}
    # Without forwardProofOfPossession: refused by name, both ways.
    verbs.write_config(forwardScopes=["User.Read"])
    assert verbs.run("login").returncode == 0
    agent, run = _agent(verbs, tmp_path, "plain")
    try:
        lines, s = over_socket(str(run / "forward.sock"))
        with s:
            init = lines.call("initialize", {})["result"]
            assert "proofOfPossession" not in init["forward"] and "signHttpRequest" not in init["capabilities"]["methods"]
            refused = lines.call("acquireTokenSilent", {"scopes": ["User.Read"], "proofOfPossession": pop})["error"]
            assert refused["code"] == -51014 and refused["data"]["name"] == "forwardParameterRefused", refused
            assert refused["data"]["member"] == "proofOfPossession"
            refused = lines.call("signHttpRequest", {"scopes": ["User.Read"], **pop})["error"]
            assert refused["code"] == -51014 and refused["data"]["name"] == "forwardMethodRefused", refused
    finally:
        _stop(agent)
    # With the mock's host listed: the agent signs, with its key.
    verbs.write_config(forwardScopes=["User.Read"], forwardProofOfPossession=[host.upper()])
    agent, run = _agent(verbs, tmp_path, "opted-in")
    try:
        lines, s = over_socket(str(run / "forward.sock"))
        with s:
            init = lines.call("initialize", {})["result"]
            assert init["forward"]["proofOfPossession"] == [host.lower()]
            assert "signHttpRequest" in init["capabilities"]["methods"]
            r = lines.call("acquireTokenSilent", {"scopes": ["User.Read"], "proofOfPossession": pop})
            assert "result" in r, r
            result = r["result"]
            assert result["tokenType"] == "pop" and result["authorizationHeader"] == "PoP " + result["signedHttpRequest"]
            payload = shr_verifier.verify(result["signedHttpRequest"], "POST", url)  # no private members in cnf.jwk
            assert http("POST", url, mock.ca_file, headers={"Authorization": result["authorizationHeader"]}).status == 200
            other = mock.url + "/pop/resource/other"
            signed = lines.call("signHttpRequest", {"scopes": ["User.Read"], "method": "GET", "url": other})
            assert "result" in signed, signed
            assert set(signed["result"]) <= {"signedHttpRequest", "authorizationHeader", "tokenType", "expiresOn", "fromCache",
                                             "correlationId"}
            again = shr_verifier.verify(signed["result"]["signedHttpRequest"], "GET", other)
            assert again["cnf"]["jwk"] == payload["cnf"]["jwk"]  # the laptop's one key
            assert http("GET", other, mock.ca_file, headers={"Authorization": signed["result"]["authorizationHeader"]}).status == 200
            # Another host, and scopes beyond forwardScopes, are still refused.
            refused = lines.call("signHttpRequest", {"scopes": ["User.Read"], "method": "GET",
                                                     "url": "https://graph.microsoft.com/v1.0/me"})["error"]
            assert refused["code"] == -51014 and refused["data"]["key"] == "forwardProofOfPossession", refused
            assert "graph.microsoft.com" in refused["message"]
            refused = lines.call("acquireTokenSilent", {"scopes": ["Mail.Read"], "proofOfPossession": pop})["error"]
            assert refused["code"] == -51014 and refused["data"]["name"] == "forwardScopeRefused", refused
        # The agent's own socket signs with the same key: it never left the laptop.
        lines, s = over_socket(str(run / "agent.sock"))
        with s:
            own = lines.call("signHttpRequest", {"scopes": ["User.Read"], **pop})["result"]
            assert shr_verifier.verify(own["signedHttpRequest"], "POST", url)["cnf"]["jwk"] == payload["cnf"]["jwk"]
    finally:
        _stop(agent)
