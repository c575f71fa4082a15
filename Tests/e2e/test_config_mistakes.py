"""Configuration mistakes fail at once, with the fix in the message: a placeholder client id
(for every authority), a client id that is not a GUID (for Microsoft authorities only), an
authority that is not an absolute http(s) URL. At `initialize` (-32602 naming the key), from
the command line (exit 64, nothing on stdout), the config file (exit 1, one line naming the file
and the key), and in the verbs."""
from __future__ import annotations

import json
import subprocess

import pytest

import sidecar as sc

GUID = "11111111-2222-3333-4444-555555555555"
PLACEHOLDERS = ["YOUR-CLIENT-ID", "<app id>", "00000000-0000-0000-0000-000000000000", "your_client_id"]
MICROSOFT = ["https://login.microsoftonline.com/common", "https://login.microsoftonline.us/organizations",
             "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin", "https://contoso.ciamlogin.com/"]
ELSEWHERE = ["https://accounts.example.com/realms/demo", "http://localhost:8443/common"]


def refusal(p: sc.Sidecar, params: dict, member: str) -> str:
    e = sc.assert_error(p.request("initialize", params, 1), -32602, id=1, name="invalidParams")
    assert e["data"].get("member") == member, e
    return e["message"]


@pytest.mark.parametrize("client_id", PLACEHOLDERS)
@pytest.mark.parametrize("authority", MICROSOFT[:1] + ELSEWHERE)
def test_initialize_refuses_placeholder_client_ids(spawn, client_id, authority):
    p = spawn(client_id=None)
    message = refusal(p, {"clientId": client_id, "authority": authority}, "clientId")
    assert "placeholder" in message and "Register your application" in message, message
    # still not configured; a real id then works
    sc.assert_error(p.request("getAccounts", {}, 2), -32002, id=2)
    sc.assert_result(p.request("initialize", {"clientId": GUID, "authority": authority}, 3), id=3)


@pytest.mark.parametrize("authority", MICROSOFT)
def test_initialize_refuses_non_guid_client_ids_for_microsoft_authorities(spawn, authority):
    p = spawn(client_id=None)
    message = refusal(p, {"clientId": "family-app-2", "authority": authority}, "clientId")
    assert "not a GUID" in message and "Application (client) ID" in message, message


@pytest.mark.parametrize("authority", ELSEWHERE)
@pytest.mark.parametrize("client_id", ["abc", "client", "family-app-2"])
def test_initialize_accepts_free_form_ids_elsewhere(spawn, authority, client_id):
    p = spawn(client_id=None)
    r = sc.assert_result(p.request("initialize", {"clientId": client_id, "authority": authority}, 1), id=1)
    assert r["configuration"]["clientId"] == client_id, r


@pytest.mark.parametrize("authority", ["login.microsoftonline.com/common", "common",
                                       "https://login.microsoftonline.com/<tenant>"])
def test_initialize_refuses_authorities_that_are_not_urls(spawn, authority):
    p = spawn(client_id=None)
    message = refusal(p, {"clientId": GUID, "authority": authority}, "authority")
    assert "https://login.microsoftonline.com/" in message or "your tenant" in message, message


def start_up(sidecar_bin, sidecar_env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sidecar_bin, *args], input=b"", capture_output=True, env=sidecar_env, timeout=20)


def test_command_line_placeholder_stops_the_process(sidecar_bin, sidecar_env):
    done = start_up(sidecar_bin, sidecar_env, "--client-id", "YOUR-CLIENT-ID")
    assert done.returncode == 64 and done.stdout == b"", done
    assert b"clientId 'YOUR-CLIENT-ID' is a placeholder" in done.stderr, done.stderr


def test_config_file_mistake_stops_the_process(sidecar_bin, sidecar_env, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"clientId": "my-app", "authority": "https://login.microsoftonline.com/organizations"}))
    done = start_up(sidecar_bin, sidecar_env, "--config", str(config))
    assert done.returncode == 64 and done.stdout == b"", done
    assert b"clientId 'my-app' is not a GUID" in done.stderr, done.stderr


@pytest.mark.parametrize("text, expected", [
    ('{"clientid": "x"}', b"unknown key 'clientid' (did you mean 'clientId'?)"),
    ('{"profiles": {"work": {"authorty": "https://login.microsoftonline.com/common"}}}',
     b"profile 'work': unknown key 'authorty' (did you mean 'authority'?)"),
    ('{"clientId": ', b"is not valid JSON"),
])
def test_a_mistake_inside_the_config_file_names_the_file_and_the_key(sidecar_bin, sidecar_env, tmp_path, text, expected):
    """#52: one line naming the file, the key and the key it meant; status 1 (a configuration
    failure, README's exit table), no usage text; the same line from a verb."""
    config = tmp_path / "config.json"
    config.write_text(text)
    for args in (["--config", str(config)], ["token", "--no-agent", "--config", str(config)]):
        done = start_up(sidecar_bin, sidecar_env, *args)
        assert done.returncode == 1 and done.stdout == b"", done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(b"auth-sidecar: configuration error: "), done.stderr
        assert str(config).encode() in lines[0] and expected in lines[0], done.stderr


def test_a_mistyped_initialize_member_is_named_with_the_one_it_meant(spawn):
    p = spawn()
    r = p.request("initialize", {"clientid": GUID}, 1)
    e = sc.assert_error(r, -32602, name="invalidParams")
    assert "unknown member 'clientid' (did you mean 'clientId'?)" in e["message"], e
    assert e["data"]["member"] == "clientid", e


def test_command_line_authority_that_is_not_a_url_stops_the_process(sidecar_bin, sidecar_env):
    done = start_up(sidecar_bin, sidecar_env, "--client-id", GUID, "--authority", "contoso.onmicrosoft.com")
    assert done.returncode == 64 and done.stdout == b"", done
    assert b"authority must be an absolute https URL" in done.stderr, done.stderr


def test_verb_names_the_fix(sidecar_bin, sidecar_env):
    done = subprocess.run([sidecar_bin, "token", "--no-agent", "--client-id", "<app id>", "--cache", "memory"],
                          stdin=subprocess.DEVNULL, capture_output=True, env=sidecar_env, timeout=20)
    assert done.returncode == 1 and done.stdout == b"", done
    assert b"clientId '<app id>' is a placeholder" in done.stderr, done.stderr


def test_no_configuration_at_all_names_the_file_to_write(spawn, sidecar_bin, sidecar_env, tmp_path):
    """#52: with no client id anywhere, the server's own -32002 and the verb's one line both
    name the file this process reads and the other two ways."""
    env = {**sidecar_env, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}
    env.pop("AUTH_SIDECAR_CONFIG", None)
    file = str(tmp_path / "xdg-config" / "auth-sidecar" / "config.json")
    p = spawn(client_id=None, env=env)
    e = sc.assert_error(p.request("getAccounts", {}, 1), -32002, id=1, name="serverNotInitialized")
    assert file in e["message"] and "--client-id" in e["message"], e
    done = subprocess.run([sidecar_bin, "token", "--no-agent"], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, timeout=20)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and done.stdout == b"" and len(lines) == 1, done
    assert file.encode() in lines[0] and b"--client-id" in lines[0], done.stderr


@pytest.mark.parametrize("way", ["--browser", "--device-code"])
def test_an_unreachable_identity_service_names_what_to_check(sidecar_bin, sidecar_env, way):
    """#52: a sign-in against a service nobody answers for (the mock stopped, a wrong port)
    ends at once with one line naming the origin and what to check; no browser waits."""
    env = {**sidecar_env, "BROWSER": "/bin/true", "HTTPS_PROXY": "", "https_proxy": ""}
    done = subprocess.run([sidecar_bin, "login", way, "--no-agent", "--cache", "memory", "--client-id", GUID,
                           "--authority", "https://127.0.0.1:9/common"],
                          stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=10)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and done.stdout == b"", done
    assert b"network failure reaching the identity service (https://127.0.0.1:9)" in last, done.stderr
    assert b"check the network connection" in last, done.stderr
