"""The broker stand-in checked against Microsoft's own broker client, and auth-sidecar's D-Bus
requests checked against it: MSAL for Python 1.39 with MSALRuntime (PyPI `pymsalruntime`,
`enable_broker_on_linux=True`; Debian's libwebkit2gtk-4.1-0) on a private session bus with
a gnome-keyring in it (MSALRuntime keeps its account records there), the stand-in
(broker_standin.py, not Microsoft's broker) on the same bus.

1. MSAL for Python + MSALRuntime sign in, renew with claims, force a refresh, list and remove
   the account through the stand-in.
2. For the same operations (interactive sign-in, silent renewal with claims, the account
   list) the calls auth-sidecar makes carry every key MSALRuntime's carry, per method, with
   the same JSON types and fixed values (protocol, authorizationType, redirectUri); the
   account object has MSALRuntime's 14 keys. What differs is listed below with its reason.

scripts/setup.sh installs pymsalruntime (requirements-test.txt) and libwebkit2gtk-4.1-0; the
suite fails under CI when they are missing, and skips elsewhere.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from auth_e2e import CLIENT_ID
from broker_session import StandInBroker, missing
from keyring_session import KeyringSession
from test_broker import GRAPH_SCOPES, NATIVE_CLIENT, claims

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "msalruntime_client.py")
CHALLENGE = '{"access_token":{"acrs":{"essential":true,"value":"c1"}}}'

# Keys of MSALRuntime's requests auth-sidecar does not send, each with its reason.
NOT_SENT = {
    ("acquireTokenInteractively", "authParameters", "onboardingBlob"):
        "MSALRuntime's own telemetry of its sign-in steps (session correlation id, time stamps)",
}
# Keys auth-sidecar sends that MSALRuntime does not, each with its reason.
EXTRA = {
    ("acquireTokenSilently", "", "account"):
        "the account also at the top of the request, as siemens/sso-mib and linux-entra-sso send it (broker 2.x reads either)",
    ("acquireTokenInteractively", "", "account"):
        "only when a request names an account: sso-mib's shape, beside authParameters.account",
    ("acquireTokenInteractively", "authParameters", "prompt"):
        "older brokers read prompt here; it is also in additionalQueryParametersForAuthorization as MSALRuntime puts it",
    ("acquireTokenSilently", "authParameters", "prompt"): "as above",
}
# Fixed values that differ, with the reason.
VALUE_DIFFERENCES = {
    ("getAccounts", "redirectUri"):
        "MSALRuntime 0.20.7 sends the client id as getAccounts' redirectUri; auth-sidecar sends the nativeclient "
        "redirect URI it uses in every other call (both are accepted; the broker lists accounts by clientId)",
}


def kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
            type(None): "null"}[type(value)]


def shape(request: dict) -> dict[str, dict[str, str]]:
    """{level: {key: JSON type}} for the request's top level and its authParameters."""
    levels = {"": {k: kind(v) for k, v in request.items()}}
    if isinstance(request.get("authParameters"), dict):
        levels["authParameters"] = {k: kind(v) for k, v in request["authParameters"].items()}
    return levels


@pytest.fixture
def keyring_bus(tmp_path):
    absent = missing()
    try:
        probe = subprocess.run([sys.executable, "-c", "import msal, importlib.util as u; assert u.find_spec('pymsalruntime')"],
                               capture_output=True, text=True, timeout=60)
        if probe.returncode != 0:
            absent = absent or "pymsalruntime (pip install -r requirements-test.txt)"
    except subprocess.TimeoutExpired:
        absent = absent or "a working python"
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0") and not absent:
        absent = "libwebkit2gtk-4.1-0 (apt-get install libwebkit2gtk-4.1-0)"
    if absent:
        if os.environ.get("CI"):
            pytest.fail(f"missing {absent}: scripts/setup.sh installs it")
        pytest.skip(f"missing {absent}")
    session = KeyringSession(str(tmp_path / "keyring-session"))
    yield session
    session.stop()


def run_msal(keyring: KeyringSession, steps: str) -> dict:
    env = {**keyring.env, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run([sys.executable, CLIENT, steps], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_msal_python_with_msalruntime_signs_in_renews_and_removes_through_the_standin(keyring_bus, tmp_path):
    broker = StandInBroker(tmp_path, bus_address=keyring_bus.address, env=keyring_bus.env)
    try:
        out = run_msal(keyring_bus, "interactive,accounts,silent,claims,force,remove")
    finally:
        broker.stop()
    signed_in = out["interactive"]
    assert "error" not in signed_in, signed_in
    assert signed_in["token_source"] == "broker" and claims(signed_in["access_token"])["deviceid"]
    assert signed_in["scope"] == GRAPH_SCOPES[0]  # the stand-in's grantedScopes, a string
    assert [a["username"] for a in out["accounts"]] == ["alice@contoso.com"]
    assert out["accounts"][0]["account_source"] == "broker"
    assert "error" not in out["silent"], out["silent"]
    renewed = out["claims"]
    assert "error" not in renewed and claims(renewed["access_token"])["xms_cc_satisfied"] == CHALLENGE, renewed
    assert "error" not in out["force"] and out["force"]["access_token"], out["force"]
    assert out["remove"] == []
    assert out["http"] == []  # nothing but tenant discovery went to the network
    silent = broker.calls("acquireTokenSilently")
    assert any(c["request"]["authParameters"]["decodedClaims"] == CHALLENGE for c in silent)
    assert len(broker.calls("acquireTokenInteractively")) == 1


def test_msalruntime_reads_the_standins_errors(keyring_bus, tmp_path):
    """The stand-in's error answer has what MSALRuntime requires (`tag`, `errorCode`, ...):
    it reports the status rather than failing on the answer's shape."""
    broker = StandInBroker(tmp_path, bus_address=keyring_bus.address, env=keyring_bus.env)
    try:
        broker.control(fail={"acquireTokenInteractively": {"status": 7, "context": "the user closed the window"}})
        out = run_msal(keyring_bus, "interactive")
    finally:
        broker.stop()
    assert out["interactive"]["error"], out
    assert "not found in the json object" not in json.dumps(out), out


def test_our_requests_carry_what_msalruntimes_carry(keyring_bus, tmp_path, launch):
    ms_dir, our_dir = tmp_path / "msalruntime", tmp_path / "ours"
    ms_dir.mkdir()
    our_dir.mkdir()
    ms_broker = StandInBroker(ms_dir, bus_address=keyring_bus.address, env=keyring_bus.env)
    try:
        run_msal(keyring_bus, "interactive,accounts,claims")
    finally:
        ms_broker.stop()
    ours = StandInBroker(our_dir)
    try:
        p = launch(env={"DBUS_SESSION_BUS_ADDRESS": ours.address}, cache=str(tmp_path / "cache.json"), broker="auto")
        p.sign_in(scopes=GRAPH_SCOPES, loginHint="alice@contoso.com")
        p.ok("getAccounts")
        p.silent(scopes=GRAPH_SCOPES, claims=CHALLENGE)
    finally:
        ours.stop()

    def by_method(broker, method):
        calls = broker.calls(method)
        if method == "acquireTokenSilently":  # the renewal with claims (MSALRuntime also probes with no account)
            calls = [c for c in calls if c["request"]["authParameters"].get("decodedClaims")]
        assert calls, (method, broker.calls())
        return calls[-1]

    report = []
    for method in ("acquireTokenInteractively", "acquireTokenSilently", "getAccounts"):
        theirs, mine = by_method(ms_broker, method), by_method(ours, method)
        assert theirs["protocol"] == mine["protocol"] == "0.0"
        their_shape, my_shape = shape(theirs["request"]), shape(mine["request"])
        for level, keys in their_shape.items():
            for key, their_type in keys.items():
                if (method, level, key) in NOT_SENT:
                    continue
                assert key in my_shape.get(level, {}), f"{method} {level or 'top'}: no {key!r} (MSALRuntime sends a {their_type})"
                my_type = my_shape[level][key]
                # null where MSALRuntime has an object: the same key with nothing to say (no account named)
                assert my_type == their_type or "null" in (my_type, their_type), (method, level, key, my_type, their_type)
        for level, keys in my_shape.items():
            for key in keys:
                if key not in their_shape.get(level, {}):
                    assert (method, level, key) in EXTRA, f"{method} {level or 'top'}: {key!r} is not MSALRuntime's and not listed"
        their_params = theirs["request"].get("authParameters", theirs["request"])
        my_params = mine["request"].get("authParameters", mine["request"])
        for fixed in ("authorizationType", "redirectUri"):
            if fixed in their_params and (method, fixed) not in VALUE_DIFFERENCES:
                assert my_params[fixed] == their_params[fixed], (method, fixed, my_params[fixed], their_params[fixed])
        assert my_params["redirectUri"] == NATIVE_CLIENT and my_params["clientId"] == CLIENT_ID
        report.append(f"{method}: {sum(len(k) for k in their_shape.values())} keys of MSALRuntime's, all sent")
    # The account object: MSALRuntime's 14 keys, the same types.
    their_account = by_method(ms_broker, "acquireTokenSilently")["request"]["authParameters"]["account"]
    my_account = by_method(ours, "acquireTokenSilently")["request"]["authParameters"]["account"]
    assert len(their_account) == 14
    assert {k: kind(v) for k, v in my_account.items()} == {k: kind(v) for k, v in their_account.items()}
    # `prompt` where the broker reads it for the authorization URL.
    p2_dir = tmp_path / "prompt"
    p2_dir.mkdir()
    third = StandInBroker(p2_dir)
    try:
        q = launch(env={"DBUS_SESSION_BUS_ADDRESS": third.address}, cache=str(tmp_path / "c2.json"), broker="auto")
        q.sign_in(scopes=GRAPH_SCOPES, promptType="selectAccount")
    finally:
        third.stop()
    sent = third.calls("acquireTokenInteractively")[-1]["request"]["authParameters"]
    assert sent["additionalQueryParametersForAuthorization"]["prompt"] == "select_account"
    print("\n".join(report))


def test_our_pop_request_is_msalruntimes(keyring_bus, tmp_path, launch):
    """Proof-of-possession through the broker: MSALRuntime's own PoP requests (`set_pop_params`,
    through msal.broker with a PopAuthScheme) and the sidecar's, against the stand-in, carry the
    same keys and the same `popParams` (every member, the same values for the same resource
    request); MSALRuntime reads the stand-in's answer as a PoP token whose header value is the
    signed HTTP request, as the sidecar does."""
    import shr_verifier
    ms_dir, our_dir = tmp_path / "msalruntime", tmp_path / "ours"
    ms_dir.mkdir()
    our_dir.mkdir()
    ms_broker = StandInBroker(ms_dir, bus_address=keyring_bus.address, env=keyring_bus.env)
    try:
        out = run_msal(keyring_bus, "interactive,accounts,popsilent,popinteractive")
    finally:
        ms_broker.stop()
    url, nonce = "https://pop.example.test/resource/items?x=1", "nonce-from-the-resource"
    for step in ("popsilent", "popinteractive"):
        assert out[step]["token_type"] == "pop", out[step]
        # msal.broker's access_token is MSALRuntime's header value after "pop ": the stand-in's SHR.
        assert shr_verifier.verify(out[step]["access_token"], "POST", url.split("?")[0], nonce=nonce)
    ours = StandInBroker(our_dir)
    try:
        p = launch(env={"DBUS_SESSION_BUS_ADDRESS": ours.address}, cache=str(tmp_path / "cache.json"), broker="required")
        pop = {"method": "POST", "url": url, "nonce": nonce}
        p.sign_in(scopes=GRAPH_SCOPES, loginHint="alice@contoso.com", proofOfPossession=pop)
        r = p.silent(scopes=GRAPH_SCOPES, proofOfPossession=pop)
    finally:
        ours.stop()
    assert r["tokenType"] == "pop"
    assert shr_verifier.verify(r["signedHttpRequest"], "POST", url.split("?")[0], nonce=nonce)
    for method in ("acquireTokenSilently", "acquireTokenInteractively"):
        theirs = [c for c in ms_broker.calls(method) if c["request"]["authParameters"].get("popParams")][-1]["request"]
        mine = [c for c in ours.calls(method) if c["request"]["authParameters"].get("popParams")][-1]["request"]
        their_shape, my_shape = shape(theirs), shape(mine)
        for level, keys in their_shape.items():
            for key, their_type in keys.items():
                if (method, level, key) in NOT_SENT:
                    continue
                assert key in my_shape.get(level, {}), f"{method} {level or 'top'}: no {key!r} (MSALRuntime sends a {their_type})"
                assert my_shape[level][key] == their_type or "null" in (my_shape[level][key], their_type), (method, key)
        their_pop, my_pop = theirs["authParameters"]["popParams"], mine["authParameters"]["popParams"]
        assert {k: kind(v) for k, v in my_pop.items()} == {k: kind(v) for k, v in their_pop.items()}, (my_pop, their_pop)
        assert my_pop == their_pop, (my_pop, their_pop)
