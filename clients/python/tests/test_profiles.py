"""profile=: a profile of the configuration file chosen by name, through a process of the
client's own and through a running agent (which serves every profile at once)."""
from __future__ import annotations

import json

import pytest

import auth_sidecar as a
from conftest import ALICE, BOB, CLIENT_ID

QUICK = 10.0
SIGN_IN = 25.0
SCOPES = ["User.Read"]
LAB_CLIENT = "00002222-aaaa-4444-bbbb-5555dddd6666"


def profiles_env(auth_env, mock, tmp_path) -> dict:
    """The configuration file ($AUTH_SIDECAR_CONFIG) with two profiles, work and lab (a second
    client id), each with its cache in tmp_path."""
    mock.admin.clients(client_id=LAB_CLIENT)
    shared = {"authority": mock.url + "/common", "knownAuthorities": ["127.0.0.1"], "cacheProtection": "plaintext",
              "graphEndpoint": mock.url + "/"}
    config = dict(shared, defaultProfile="work", profiles={
        "work": {"clientId": CLIENT_ID, "cache": {"path": str(tmp_path / "work.json")}},
        "lab": {"clientId": LAB_CLIENT, "cache": {"path": str(tmp_path / "lab.json")}}})
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(config))
    return auth_env(AUTH_SIDECAR_CONFIG=str(path))


def test_profile_chooses_the_configuration(sidecar_bin, auth_env, mock, tmp_path):
    env = profiles_env(auth_env, mock, tmp_path)
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK, profile="lab") as lab:
        assert lab.server_info.profile == "lab" and lab.server_info.configuration["clientId"] == LAB_CLIENT
        assert lab.acquire_token(SCOPES, login_hint=BOB, timeout=SIGN_IN).account.username == BOB
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK, profile="work") as work:
        assert work.server_info.configuration["clientId"] == CLIENT_ID
        assert work.acquire_token(SCOPES, login_hint=ALICE, timeout=SIGN_IN).account.username == ALICE
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK, profile="lab") as lab:
        assert lab.acquire_token_silent(SCOPES).account.username == BOB
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK, initialize=False) as bare:
        with pytest.raises(a.SidecarError, match="unknown profile 'nope'.*work, lab"):
            bare.initialize(profile="nope")


def test_the_agent_serves_each_profile(start_agent, sidecar_bin, auth_env, mock, tmp_path):
    env = profiles_env(auth_env, mock, tmp_path)
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK, profile="lab") as lab:
        lab.acquire_token(SCOPES, login_hint=BOB, timeout=SIGN_IN)
    with a.SidecarClient(sidecar_bin, env=env, timeout=QUICK) as work:  # the default profile
        work.acquire_token(SCOPES, login_hint=ALICE, timeout=SIGN_IN)
    agent = start_agent(env)
    with a.SidecarClient(socket=agent.socket, timeout=QUICK, profile="lab") as lab, \
            a.SidecarClient(socket=agent.socket, timeout=QUICK, profile="work") as work:
        assert lab.acquire_token_silent(SCOPES).account.username == BOB
        assert work.acquire_token_silent(SCOPES).account.username == ALICE
        assert lab.server_info.profile == "lab" and work.server_info.profile == "work"
