"""Sign-in through the Linux identity broker (`broker`: off, auto, required), end to end: the
real binary against a stand-in broker (broker_standin.py, not Microsoft's) on a private
session bus started by `dbus-run-session`. Checked: every door (the verbs, a stdio client, the
az shim, the agent) hands out the broker's token; each call the broker sees carries protocol
"0.0", a fresh correlation id, the client id and the nativeclient redirect URI; stdout holds
protocol messages only; the mock identity platform receives no request and the file cache no
broker token; without a broker `auto` falls back saying why once and `required` fails naming it.

Needs Debian's `dbus` (dbus-run-session) and python3-dbus + python3-gi for /usr/bin/python3
(scripts/setup.sh installs them); skipped when dbus-run-session is absent, failed under CI.
"""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time

import pytest

import sidecar as sc
from auth_e2e import ALICE, CLIENT_ID
from broker_session import StandInBroker, missing
from test_az_shim import az, run_az  # noqa: F401  (az: the fixture)
from test_verbs import RunningAgent, verbs  # noqa: F401  (verbs: the fixture)

BUS_NAME = "com.microsoft.identity.broker1"
NATIVE_CLIENT = "https://login.microsoftonline.com/common/oauth2/nativeclient"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
GRAPH_SCOPES = ["https://graph.microsoft.com/User.Read"]


@pytest.fixture
def start_broker(tmp_path):
    absent = missing()
    if absent:
        if os.environ.get("CI"):
            pytest.fail(f"missing {absent}: scripts/setup.sh installs it")
        pytest.skip(f"missing {absent}")
    started = []

    def _start(*args):
        b = StandInBroker(tmp_path, *args)
        started.append(b)
        return b

    yield _start
    for b in started:
        b.stop()


@pytest.fixture
def broker(start_broker):
    return start_broker()


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def assert_calls_well_formed(broker: StandInBroker) -> None:
    """Every call: protocol "0.0", a correlation id seen once (a UUID unless the client gave
    one), this client's id and the nativeclient redirect URI wherever the request names one."""
    calls = broker.calls()
    assert calls
    ids = [c["correlationId"] for c in calls if c["method"] != "cancelInteractiveFlow"]
    assert len(ids) == len(set(ids)), ids
    for c in calls:
        assert c["protocol"] == "0.0", c
        assert UUID.match(c["correlationId"]), c  # the clients here give none: the sidecar's own
        request = c["request"]
        params = request.get("authParameters", request)
        if c["method"] in ("acquireTokenInteractively", "acquireTokenSilently", "getAccounts", "removeAccount"):
            assert params["clientId"] == CLIENT_ID and params["redirectUri"] == NATIVE_CLIENT, c
        if c["method"] == "acquireTokenSilently":
            assert params["authorizationType"] == 1 and params["account"]["username"] == ALICE, c
        if c["method"] == "acquireTokenInteractively":
            assert params["authorizationType"] == 6, c


def assert_no_identity_service_request(mock) -> None:
    counts = {k: v for k, v in mock.admin.counts().items() if v}
    assert counts == {}, counts


def broker_env(broker: StandInBroker) -> dict:
    return {"DBUS_SESSION_BUS_ADDRESS": broker.address}


# ---- the verbs -----------------------------------------------------------------------------

def test_verbs_sign_in_and_get_tokens_through_the_broker(verbs, mock, broker):
    verbs.write_config(broker="auto")
    env = broker_env(broker)
    login = verbs.run("login", env=env)
    assert login.returncode == 0, login.stderr
    assert len(broker.calls("acquireTokenInteractively")) == 1
    token = verbs.ok("token", env=env).strip()
    assert claims(token)["deviceid"] and claims(token)["upn"] == ALICE  # the broker's, device-bound
    assert verbs.ok("token", env=env).strip() == token  # its cached token, asked for again
    listed = verbs.ok("accounts", env=env)
    assert ALICE in listed
    logout = verbs.run("logout", env=env)
    assert logout.returncode == 0, logout.stderr
    assert len(broker.calls("removeAccount")) == 1
    after = verbs.run("token", env=env)
    assert after.returncode != 0 and "login" in after.stderr
    assert_calls_well_formed(broker)
    assert_no_identity_service_request(mock)
    # The broker keeps its tokens: none in the file cache (the file need not exist at all).
    if os.path.exists(verbs.cache):
        assert token not in open(verbs.cache).read()
    assert token not in login.stderr + after.stderr


# ---- a stdio client --------------------------------------------------------------------------

def test_stdio_client_gets_broker_tokens_and_device_information(launch, mock, broker, tmp_path):
    p = launch(env=broker_env(broker), cache=str(tmp_path / "cache.json"), broker="auto")
    info = p.ok("getDeviceInformation")
    assert info["brokerAvailable"] is True and info["brokerVersion"] == "2.0.4-standin"
    signed_in = p.sign_in(scopes=GRAPH_SCOPES)
    assert signed_in["account"]["username"] == ALICE and claims(signed_in["accessToken"])["deviceid"]
    silent = p.silent(scopes=GRAPH_SCOPES)
    assert silent["accessToken"] == signed_in["accessToken"]
    renewed = p.silent(scopes=GRAPH_SCOPES, forceRefresh=True)
    assert renewed["accessToken"] != silent["accessToken"]
    assert broker.calls("acquireTokenSilently")[-1]["request"]["authParameters"]["accessTokenToRenew"] == silent["accessToken"]
    challenged = p.silent(scopes=GRAPH_SCOPES, claims='{"access_token":{"acrs":{"essential":true,"value":"c1"}}}')
    assert broker.calls("acquireTokenSilently")[-1]["request"]["authParameters"]["decodedClaims"].startswith('{"access_token"')
    assert claims(challenged["accessToken"])["xms_cc_satisfied"]
    current = p.ok("getCurrentAccount")["account"]
    assert current["username"] == ALICE
    assert [a["username"] for a in p.ok("getAccounts")["accounts"]] == [ALICE]
    _, code = p.finish(10)
    assert code == 0
    # stdout: JSON-RPC responses and nothing else
    for line in p.stdout_bytes().decode().splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert signed_in["accessToken"] not in p.stderr_text()
    assert_calls_well_formed(broker)
    assert_no_identity_service_request(mock)
    assert not os.path.exists(tmp_path / "cache.json") or signed_in["accessToken"] not in (tmp_path / "cache.json").read_text()


def test_broker_errors_become_protocol_errors(launch, broker, tmp_path):
    p = launch(env=broker_env(broker), cache=str(tmp_path / "cache.json"), broker="auto")
    p.sign_in(scopes=GRAPH_SCOPES)
    broker.control(fail={"acquireTokenSilently": {"status": 2, "context": "AADSTS53000: device not compliant"}})
    err = p.error("acquireTokenSilent", {"scopes": GRAPH_SCOPES, "forceRefresh": True}, -50002)
    assert "InteractionRequired" in err["message"]
    broker.control(fail={"acquireTokenSilently": {"status": 3, "context": "offline"}})
    p.error("acquireTokenSilent", {"scopes": GRAPH_SCOPES, "forceRefresh": True}, -51001)
    # An interactive sign-in cancelled by the client: the broker is asked to end its flow.
    broker.control(interactiveWaits=True)
    rid = p.submit("acquireToken", {"scopes": GRAPH_SCOPES})
    deadline = time.monotonic() + 10
    while len(broker.calls("acquireTokenInteractively")) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    p.send(sc.note("$/cancelRequest", {"id": rid}))
    sc.assert_error(p.wait_for(rid, 10), -32800)
    deadline = time.monotonic() + 10
    while not broker.calls("cancelInteractiveFlow"):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_broker_off_never_loads_libdbus(launch, broker, tmp_path):
    off = launch(env=broker_env(broker), cache=str(tmp_path / "off.json"))
    off.ok("getDeviceInformation")
    assert "libdbus-1" not in open(f"/proc/{off.proc.pid}/maps").read()
    assert broker.calls() == []
    on = launch(env=broker_env(broker), cache=str(tmp_path / "on.json"), broker="auto")
    assert on.ok("getDeviceInformation")["brokerAvailable"] is True
    assert "libdbus-1" in open(f"/proc/{on.proc.pid}/maps").read()
    # the engine's own getAccounts, made while it waits for its first request, and the version
    methods = {c["method"] for c in broker.calls()}
    assert "getLinuxBrokerVersion" in methods and methods <= {"getAccounts", "getLinuxBrokerVersion"}, methods


# ---- the az shim and the agent ------------------------------------------------------------------

def test_az_get_access_token_through_the_broker(verbs, mock, broker, az):  # noqa: F811
    verbs.write_config(broker="auto")
    env = broker_env(broker)
    assert verbs.run("login", env=env).returncode == 0
    p = run_az(verbs, az, "account", "get-access-token", "--resource", "https://graph.microsoft.com", env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert claims(out["accessToken"])["deviceid"]
    silent = broker.calls("acquireTokenSilently")[-1]["request"]["authParameters"]
    assert silent["requestedScopes"] == ["https://graph.microsoft.com/.default"]
    assert_calls_well_formed(broker)
    assert_no_identity_service_request(mock)


def test_the_agent_hands_out_broker_tokens(verbs, mock, broker):
    verbs.write_config(broker="auto")
    env = {**verbs.env, **broker_env(broker)}
    path = os.path.join(verbs.env["XDG_RUNTIME_DIR"], "auth-sidecar", "agent.sock")
    agent = RunningAgent(verbs.binary, path, {**env, "XDG_CONFIG_HOME": str(verbs.tmp / "agent-has-no-config")},
                         verbs.tmp / "agent.log")
    try:
        assert verbs.run("login", env=env).returncode == 0
        token = verbs.ok("token", env=env).strip()
        assert claims(token)["deviceid"]
        assert json.loads(verbs.ok("status", "--output", "json", env=env))["engine"] == "agent"
        assert agent.connections >= 2
    finally:
        agent.close()
    assert_calls_well_formed(broker)
    assert_no_identity_service_request(mock)


# ---- no broker -------------------------------------------------------------------------------

def test_auto_without_a_broker_signs_in_as_usual_saying_why_once(verbs, mock, start_broker):
    bus_only = start_broker("--no-name")  # a session bus, the broker's name not on it
    verbs.write_config(broker="auto")
    env = broker_env(bus_only)
    login = verbs.run("login", "--browser", env=env)
    assert login.returncode == 0, login.stderr
    token = verbs.ok("token", env=env).strip()
    assert mock.admin.counts().get("token", 0) >= 1  # the usual flow: the identity service was asked
    said = [line for line in login.stderr.splitlines() if "broker" in line]
    assert len(said) == 1 and BUS_NAME in said[0] and "auto" in said[0], login.stderr
    assert token


def test_required_without_a_broker_fails_naming_it(verbs, launch, tmp_path):
    verbs.write_config(broker="required")
    no_bus = {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-such-bus"}
    login = verbs.run("login", env=no_bus)
    assert login.returncode != 0 and BUS_NAME in login.stderr, login.stderr
    p = launch(env=no_bus, cache=str(tmp_path / "cache.json"), broker="required")
    err = p.error("acquireTokenSilent", {"scopes": GRAPH_SCOPES}, -51015, name="brokerUnavailable")
    assert BUS_NAME in err["message"]
    assert p.ok("getDeviceInformation")["brokerAvailable"] is False


def test_broker_per_profile_and_by_flag(verbs, mock, broker):
    verbs.write_config(profiles={"plain": {}, "managed": {"broker": "required"}}, defaultProfile="plain")
    env = broker_env(broker)
    assert verbs.run("login", "--profile", "managed", env=env).returncode == 0
    assert claims(verbs.ok("token", "--profile", "managed", env=env).strip())["deviceid"]
    assert len(broker.calls("acquireTokenSilently")) == 1
    # The flag, over a configuration whose broker is off; and off: the broker is not asked.
    assert claims(verbs.ok("token", "--broker", "auto", env=env).strip())["deviceid"]
    assert len(broker.calls("acquireTokenSilently")) == 2
    plain = verbs.run("token", env=env)
    assert plain.returncode != 0 and len(broker.calls("acquireTokenSilently")) == 2
    assert_no_identity_service_request(mock)


def test_auto_without_a_session_bus_never_loads_libdbus(launch, tmp_path):
    no_bus = {"DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime-dir")}
    p = launch(env=no_bus, cache=str(tmp_path / "cache.json"), broker="auto")
    p.error("acquireTokenSilent", {"scopes": GRAPH_SCOPES}, -50002)  # the usual flow: nobody signed in
    assert p.ok("getDeviceInformation")["brokerAvailable"] is False
    assert "libdbus-1" not in open(f"/proc/{p.proc.pid}/maps").read()
    _, code = p.finish(10)
    said = [line for line in p.stderr_text().splitlines() if "broker" in line]
    assert code == 0 and len(said) == 1 and "no session D-Bus" in said[0], said


def test_the_forward_socket_hands_out_broker_tokens_within_its_policy(verbs, mock, broker):
    from test_agent import RawClient
    graph_read, mail_read = "https://graph.microsoft.com/User.Read", "https://graph.microsoft.com/Mail.Read"
    verbs.write_config(broker="auto", forwardScopes=[graph_read])
    env = {**verbs.env, **broker_env(broker)}
    assert verbs.run("login", "--no-agent", env=env).returncode == 0
    forward = str(verbs.tmp / "forward.sock")
    log_path = verbs.tmp / "forward-agent.log"
    log = open(log_path, "wb")
    process = subprocess.Popen([verbs.binary, "agent", "--forward-socket", forward, "--log-level", "debug"],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 10
        while "agent listening" not in log_path.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.02)
        client = RawClient(forward)
        assert "result" in client.call(1, "initialize", {})
        allowed = client.call(2, "acquireTokenSilent", {"scopes": [graph_read]})
        assert claims(allowed["result"]["accessToken"])["deviceid"], allowed
        refused = client.call(3, "acquireTokenSilent", {"scopes": [mail_read]})
        assert refused["error"]["code"] == -51014 and refused["error"]["data"]["name"] == "forwardScopeRefused", refused
        client.close()
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()
    assert all(c["request"]["authParameters"]["requestedScopes"] == [graph_read] for c in broker.calls("acquireTokenSilently"))
    assert_no_identity_service_request(mock)


# ---- the silent rescue (issue 51) ------------------------------------------------------------

def test_silent_rescue_asks_the_broker_interactively_once_with_the_same_parameters(launch, broker, tmp_path):
    """The stand-in answers the silent call InteractionRequired (status 2) and the interactive
    one at once, with no window: with brokerSilentRescue and a display, the token comes from
    that one interactive call; without the option, or without a display, -50002 as before."""
    p = launch(env={**broker_env(broker), "DISPLAY": ":77"}, cache=str(tmp_path / "cache.json"), broker="auto",
               brokerSilentRescue=True)
    assert p.ok("getDeviceInformation")["brokerAvailable"] is True
    p.sign_in(scopes=GRAPH_SCOPES)
    broker.control(fail={"acquireTokenSilently": {"status": 2, "context": "AADSTS50076: MFA required"}})
    mail = ["https://graph.microsoft.com/Mail.Read"]  # no token kept for it: the broker is asked
    interactive_before = len(broker.calls("acquireTokenInteractively"))
    rescued = p.silent(scopes=mail)
    assert claims(rescued["accessToken"])["upn"] == ALICE and rescued["fromCache"] is False
    rescue = broker.calls("acquireTokenInteractively")
    assert len(rescue) == interactive_before + 1
    silent = broker.calls("acquireTokenSilently")[-1]["request"]
    asked, failed = rescue[-1]["request"]["authParameters"], silent["authParameters"]
    assert {k: v for k, v in asked.items() if k != "authorizationType"} == \
        {k: v for k, v in failed.items() if k != "authorizationType"}, (asked, failed)
    assert rescue[-1]["request"]["account"] == silent["account"]
    assert "broker silent rescue: the broker answered InteractionRequired" in p.stderr_text()
    assert_calls_well_formed(broker)
    # Once per request: the rescue failing too answers the silent call's -50002.
    broker.control(fail={"acquireTokenSilently": {"status": 2, "context": "MFA"},
                         "acquireTokenInteractively": {"status": 2, "context": "a window is needed"}})
    p.error("acquireTokenSilent", {"scopes": ["https://graph.microsoft.com/Files.Read"]}, -50002)
    assert len(broker.calls("acquireTokenInteractively")) == interactive_before + 2
    assert "broker silent rescue: failed" in p.stderr_text()

    broker.control(fail={"acquireTokenSilently": {"status": 2, "context": "MFA"}})
    for env, config in (({"DISPLAY": "", "WAYLAND_DISPLAY": ""}, {"brokerSilentRescue": True}), ({"DISPLAY": ":77"}, {})):
        q = launch(env={**broker_env(broker), **env}, cache=str(tmp_path / "other.json"), broker="auto", **config)
        before = len(broker.calls("acquireTokenInteractively"))
        q.error("acquireTokenSilent", {"scopes": GRAPH_SCOPES, "account": {"username": ALICE}}, -50002)
        assert len(broker.calls("acquireTokenInteractively")) == before, config
