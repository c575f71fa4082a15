"""Start-up: the ready line, the CA, loopback only, the wrapper script."""

import json
import os
import socket
import ssl
import subprocess
import time

from mock_idp.testing import http, start_mock, stop_mock

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ready_line_promptly(tmp_path):
    started = time.monotonic()
    url, ca_file, process = start_mock(tmp_path)
    try:
        # About 0.3 s on an idle machine (well within the 1 s asked for); the bound is wide so a
        # busy CI machine cannot make it flaky. A hang or a slow key generation still fails.
        assert time.monotonic() - started < 5.0
        assert url.startswith("https://127.0.0.1:") and int(url.rsplit(":", 1)[1]) > 0
        assert ca_file == str(tmp_path / "ca.pem") and os.path.exists(ca_file)
        assert json.loads((tmp_path / "ready.json").read_text())["url"] == url
        assert http("GET", url + "/common/v2.0/.well-known/openid-configuration",
                    ca_file).status == 200
    finally:
        stop_mock(process)
    assert process.returncode is not None


def test_certificate_valid_for_localhost_and_ip(mock):
    port = int(mock.url.rsplit(":", 1)[1])
    for host in ("localhost", "127.0.0.1"):
        ctx = ssl.create_default_context(cafile=mock.ca_file)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                assert tls.version() in ("TLSv1.2", "TLSv1.3")
    assert http("GET", "https://localhost:%d/common/discovery/v2.0/keys" % port,
                mock.ca_file).status == 200


def test_listens_on_loopback_only(mock):
    port = int(mock.url.rsplit(":", 1)[1])
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            for line in open(table).read().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                if state == "0A" and int(local.split(":")[1], 16) == port:
                    listening.append(local.split(":")[0])
    assert listening == ["0100007F"]


def test_wrapper_script_and_options(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"access_token_lifetime": 42}))
    proc = subprocess.Popen([os.path.join(HERE, "run-mock-idp"), "--port", "0", "--state-dir",
                             str(tmp_path / "s"), "--config", str(config), "--default-user",
                             "bob@contoso.com"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        ready = json.loads(proc.stdout.readline())
        state = http("GET", ready["url"] + "/_admin/state", ready["caFile"]).json()
        assert state["config"]["access_token_lifetime"] == 42
        assert state["config"]["default_user"] == "bob@contoso.com"
    finally:
        proc.terminate()
        assert proc.wait(5) == 0
        proc.stdout.close()


def test_exits_when_stdin_closes(tmp_path):
    url, ca_file, process = start_mock(tmp_path)
    process.stdin.close()
    assert process.wait(5) == 0
    process.stdout.close()
