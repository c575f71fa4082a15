"""`auth-sidecar ssh-cert` / `ssh-config` against the mock's SSH user CA and a real OpenSSH:
an sshd on 127.0.0.1 (its own configuration, a high port, the current local account: no user
can be made without root) trusts the mock's CA and lets `ssh -i KEY` in with the written
certificate; a second call within the certificate's validity makes no request."""
from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import stat
import subprocess
import time

import pytest

from auth_e2e import ALICE
from test_verbs import Verbs

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"

needs_openssh = pytest.mark.skipif(
    not (os.path.exists(SSHD) and shutil.which("ssh") and shutil.which("ssh-keygen")) and not os.environ.get("CI"),
    reason="OpenSSH (sshd, ssh, ssh-keygen) is not installed")


@pytest.fixture
def verbs(sidecar_bin, mock, tmp_path) -> Verbs:
    v = Verbs(sidecar_bin, mock, tmp_path)
    v.write_config(sshCertScope=PAS)
    return v


def rsa_key(tmp_path, name="id_rsa", kind="rsa") -> str:
    path = str(tmp_path / name)
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *(["-b", "2048"] if kind == "rsa" else []), "-N", "", "-f", path],
                   check=True, stdin=subprocess.DEVNULL)
    return path


def refreshes(mock) -> int:
    return mock.admin.count("token:refresh_token")


class Sshd:
    """sshd -D on 127.0.0.1:PORT trusting `ca_file` for the principal `principal`."""

    def __init__(self, tmp_path, ca_file: str, principal: str):
        d = tmp_path / "sshd"
        d.mkdir()
        host_key = str(d / "host_key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key], check=True)
        (d / "principals").write_text(principal + "\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = d / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}", f"PidFile {d / 'sshd.pid'}",
            "UsePAM no", "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes", f"TrustedUserCAKeys {ca_file}", f"AuthorizedPrincipalsFile {d / 'principals'}",
            "AuthorizedKeysFile none", "PermitRootLogin prohibit-password", "LogLevel VERBOSE", ""]))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # privilege separation directory
        self.log = open(d / "sshd.log", "w")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert self.process.poll() is None, (d / "sshd.log").read_text()
                time.sleep(0.05)
        raise AssertionError("sshd did not listen")

    def ssh(self, key: str | None, *options: str) -> subprocess.CompletedProcess:
        """`ssh -i key` (only that key), or with key None whatever `options` name (an agent)."""
        chosen = ["-i", key, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none"] if key else []
        return subprocess.run(
            ["ssh", "-F", "none", *chosen, "-o", "BatchMode=yes",
             "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
             *options, "-p", str(self.port), getpass.getuser() + "@127.0.0.1", "echo", "signed-in-by-certificate"],
            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)

    def close(self):
        self.process.terminate()
        self.process.wait(5)
        self.log.close()


@pytest.fixture
def sshd(mock, tmp_path):
    server = Sshd(tmp_path, os.path.join(mock.process.ready["stateDir"], "ssh_user_ca.pub"), ALICE)
    yield server
    server.close()


@needs_openssh
def test_ssh_cert_lets_ssh_in_and_a_second_call_makes_no_request(verbs, mock, sshd, tmp_path):
    verbs.ok("login")
    key = rsa_key(tmp_path)
    assert sshd.ssh(key).returncode != 0   # without a certificate: refused
    before = refreshes(mock)
    p = verbs.run("ssh-cert", "--key", key)
    assert p.returncode == 0, p.stderr
    cert = key + "-cert.pub"
    assert p.stdout == cert + "\n"
    assert f"principal {ALICE}" in p.stderr and "valid until" in p.stderr
    assert stat.S_IMODE(os.stat(cert).st_mode) == 0o644
    assert refreshes(mock) == before + 1
    line = open(cert).read()
    assert line.startswith("ssh-rsa-cert-v01@openssh.com ") and line.count("\n") == 1

    listing = subprocess.run(["ssh-keygen", "-L", "-f", cert], capture_output=True, text=True, check=True).stdout
    assert "Type: ssh-rsa-cert-v01@openssh.com user certificate" in listing
    assert ALICE in listing.split("Principals:")[1].split("Critical Options:")[0]
    assert "Valid: from " in listing

    ok = sshd.ssh(key)
    assert ok.returncode == 0, (ok.stderr, open(sshd.log.name).read()[-2000:])
    assert ok.stdout.strip() == "signed-in-by-certificate"

    mtime = os.stat(cert).st_mtime_ns
    again = json.loads(verbs.ok("ssh-cert", "--key", key, "--output-format", "json"))
    assert refreshes(mock) == before + 1   # the cached certificate: no request
    assert again["fromCache"] is True and again["path"] == cert and again["principals"] == [ALICE]
    assert again["validBefore"] - again["validAfter"] == 3600
    assert os.stat(cert).st_mtime_ns == mtime   # unchanged: not rewritten

    block = verbs.ok("ssh-config", "vm.example", "--key", key)
    assert block.splitlines() == ["Host vm.example", f"    User {ALICE}", f'    CertificateFile "{cert}"',
                                  f'    IdentityFile "{key}"']
    assert "    User azureuser" in verbs.ok("ssh-config", "vm.example", "--key", key, "--user", "azureuser").splitlines()
    assert refreshes(mock) == before + 1   # ssh-config too used the cached certificate


@needs_openssh
def test_the_runtime_key_is_made_once_and_other_key_types_are_refused(verbs, mock, tmp_path):
    verbs.ok("login")
    path = verbs.ok("ssh-cert").strip()
    key_dir = tmp_path / "run" / "auth-sidecar" / "ssh"
    assert path == str(key_dir / "id_rsa-cert.pub")
    assert stat.S_IMODE(os.stat(key_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(key_dir / "id_rsa").st_mode) == 0o600
    public = open(key_dir / "id_rsa.pub").read()
    assert public.startswith("ssh-rsa ")
    bits = subprocess.run(["ssh-keygen", "-l", "-f", str(key_dir / "id_rsa.pub")], capture_output=True, text=True,
                          check=True).stdout.split()[0]
    assert bits == "3072"
    # ssh reads the private key and matches it with the certificate.
    derived = subprocess.run(["ssh-keygen", "-y", "-f", str(key_dir / "id_rsa")], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    assert derived == public.split()[1]
    verbs.ok("ssh-cert")
    assert open(key_dir / "id_rsa.pub").read() == public   # made once

    # Fail closed: a directory others can read, or a pair with a half missing, is refused, not replaced.
    os.chmod(key_dir, 0o750)
    p = verbs.run("ssh-cert")
    assert p.returncode == 1 and "not a private directory" in p.stderr, p.stderr
    os.chmod(key_dir, 0o700)
    os.rename(key_dir / "id_rsa.pub", tmp_path / "kept.pub")
    p = verbs.run("ssh-cert")
    assert p.returncode == 1 and "is missing" in p.stderr, p.stderr
    assert not os.path.exists(key_dir / "id_rsa.pub") and os.path.exists(key_dir / "id_rsa")

    ed = rsa_key(tmp_path, "id_ed25519", kind="ed25519")
    p = verbs.run("ssh-cert", "--key", ed)
    assert p.returncode == 1 and "ssh-ed25519, not ssh-rsa" in p.stderr, p.stderr
    assert not os.path.exists(ed + "-cert.pub")


def test_ssh_cert_over_the_protocol_is_cached_per_key_and_never_a_bearer_token(launch, mock, tmp_path):
    p = launch(sshCertScope=PAS)
    p.sign_in()
    keys = [open(rsa_key(tmp_path, name) + ".pub").read() for name in ("a", "b")]
    first = p.ok("acquireTokenSilent", {"sshCertificate": {"publicKey": keys[0]}})
    assert first["tokenType"] == "ssh-cert" and first["fromCache"] is False
    assert first["sshCertificate"]["principals"] == [ALICE]
    assert first["sshCertificate"]["line"] == "ssh-rsa-cert-v01@openssh.com " + first["accessToken"]
    assert p.ok("acquireTokenSilent", {"sshCertificate": {"publicKey": keys[0]}})["fromCache"] is True
    second = p.ok("acquireTokenSilent", {"sshCertificate": {"publicKey": keys[1]}})
    assert second["fromCache"] is False and second["sshCertificate"]["keyId"] != first["sshCertificate"]["keyId"]
    bearer = p.ok("acquireTokenSilent", {"scopes": [PAS]})
    assert bearer["tokenType"] == "Bearer" and bearer["accessToken"].count(".") == 2
    err = p.error("acquireTokenSilent", {"sshCertificate": {"publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"}}, -32602)
    assert err["data"]["member"] == "sshCertificate.publicKey"


def _jwk(public_line: str) -> dict:
    """The JWK `az ssh cert` sends for an RSA public key (kid: SHA-256 of n then e, base64url)."""
    import base64
    import hashlib

    from cryptography.hazmat.primitives import serialization

    numbers = serialization.load_ssh_public_key(public_line.encode()).public_numbers()

    def b64(number: int) -> str:
        return base64.urlsafe_b64encode(number.to_bytes((number.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()

    n, e = b64(numbers.n), b64(numbers.e)
    return {"kty": "RSA", "n": n, "e": e, "kid": hashlib.sha256((n + e).encode()).hexdigest()}


def test_msal_python_reads_our_ssh_certificate_by_key_id(launch, mock, tmp_path, monkeypatch):
    interop = pytest.importorskip("test_msal_interop")
    msal = pytest.importorskip("msal")
    from connect_proxy import DefaultPort

    default_port = DefaultPort(mock.host)
    try:
        for name, value in default_port.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", mock.ca_file)
        path = str(tmp_path / "ours" / "cache.json")
        p = launch(cache=path, env=default_port.env, authority=default_port.url + "/organizations",
                   knownAuthorities=[default_port.host], sshCertScope=PAS)
        p.sign_in()
        public = open(rsa_key(tmp_path) + ".pub").read()
        ours = p.ok("acquireTokenSilent", {"sshCertificate": {"publicKey": public}})
        jwk = _jwk(public)
        assert ours["sshCertificate"]["keyId"] == jwk["kid"]   # the certificate's key id: the JWK's kid
        _, code = p.finish()
        assert code == 0

        cache = msal.SerializableTokenCache()
        with open(path, encoding="utf-8") as f:
            cache.deserialize(f.read())
        entries = [e for e in json.loads(cache.serialize())["AccessToken"].values() if e.get("key_id")]
        assert [(e["token_type"], e["key_id"]) for e in entries] == [("ssh-cert", jwk["kid"])]
        app = interop.msal_app(mock, cache, default_port)
        alice = next(a for a in app.get_accounts() if a["username"] == ALICE)
        before = mock.admin.count("token")
        data = {"token_type": "ssh-cert", "key_id": jwk["kid"], "req_cnf": json.dumps(jwk)}
        result = app.acquire_token_silent([PAS], account=alice, data=data)
        assert result and result["token_source"] == "cache", result
        assert result["access_token"] == ours["accessToken"] and result["token_type"] == "ssh-cert"
        assert mock.admin.count("token") == before
    finally:
        default_port.stop()


def _certificate(path: str):
    from cryptography.hazmat.primitives import serialization
    with open(path, "rb") as f:
        return serialization.load_ssh_public_identity(f.read())


@needs_openssh
@pytest.mark.time_limit(150)
def test_the_agent_renews_the_certificate_and_ssh_gets_in_after_the_first_ones_end(verbs, mock, sshd, tmp_path):
    """ssh_cert_lifetime 60: the agent renews at 40 s (a third of the life left); ssh still gets in
    after the first certificate's end, by the file and through a real ssh-agent (sshAgent)."""
    from test_verbs import RunningAgent

    mock.admin.config(ssh_cert_lifetime=60)
    verbs.ok("login")
    key = rsa_key(tmp_path)
    cert = key + "-cert.pub"
    verbs.write_config(sshCertScope=PAS, sshCertificates=[{"key": key}], sshAgent=True)
    agent_sock = str(tmp_path / "ssh-agent.sock")
    ssh_agent = subprocess.Popen(["ssh-agent", "-D", "-a", agent_sock], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**verbs.env, "SSH_AUTH_SOCK": agent_sock}
    agent = None
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(agent_sock):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        agent = RunningAgent(verbs.binary, str(tmp_path / "run" / "auth-sidecar" / "agent.sock"), env,
                             tmp_path / "agent.log")
        deadline = time.monotonic() + 15
        while not os.path.exists(cert):
            assert time.monotonic() < deadline, (tmp_path / "agent.log").read_text()
            time.sleep(0.1)
        first = _certificate(cert)
        assert first.valid_principals == [ALICE.encode()]
        assert first.valid_before - first.valid_after == 60
        assert sshd.ssh(key).returncode == 0

        def agent_identities():
            listed = subprocess.run(["ssh-add", "-L"], env=env, capture_output=True, text=True).stdout
            return [line for line in listed.splitlines() if line.startswith("ssh-rsa-cert-v01@openssh.com ")]

        deadline = time.monotonic() + 5
        while not agent_identities():
            assert time.monotonic() < deadline, "the certificate never reached ssh-agent"
            time.sleep(0.1)
        by_agent = sshd.ssh(None, "-o", f"IdentityAgent={agent_sock}", "-o", "IdentityFile=/nonexistent")
        assert by_agent.returncode == 0, by_agent.stderr

        status = json.loads(verbs.ok("status", "--output", "json")).get("sshCertificates")
        assert status == [{"key": key, "certificate": cert, "principals": [ALICE], "validBefore": first.valid_before}]

        # Past the first certificate's end: the agent has renewed it (the file and ssh-agent).
        while time.time() < first.valid_before + 2:
            time.sleep(0.5)
        renewed = _certificate(cert)
        assert renewed.valid_before > first.valid_before and renewed.valid_after < first.valid_before
        ok = sshd.ssh(key)
        assert ok.returncode == 0, (ok.stderr, (tmp_path / "agent.log").read_text()[-2000:])
        assert sshd.ssh(None, "-o", f"IdentityAgent={agent_sock}", "-o", "IdentityFile=/nonexistent").returncode == 0
        identities = agent_identities()
        assert len(identities) == 1 and identities[0].split()[1] == open(cert).read().split()[1]
        assert mock.admin.count("token:authorization_code") == 1   # no sign-in: the refresh token
        assert "cannot renew" not in (tmp_path / "agent.log").read_text()
    finally:
        if agent:
            agent.close()
        ssh_agent.terminate()
        ssh_agent.wait(5)


def test_a_browser_sign_in_can_ask_for_the_certificate_at_once(launch, mock, tmp_path):
    p = launch(sshCertScope=PAS)
    public = open(rsa_key(tmp_path) + ".pub").read()
    signed_in = p.sign_in(scopes=[PAS], sshCertificate={"publicKey": public})
    assert signed_in["tokenType"] == "ssh-cert" and signed_in["account"]["username"] == ALICE
    assert signed_in["sshCertificate"]["principals"] == [ALICE]
    form = mock.admin.log(endpoint="token:authorization_code")[-1]["form"]
    assert form["token_type"] == "ssh-cert" and form["key_id"] == signed_in["sshCertificate"]["keyId"]
    again = p.ok("acquireTokenSilent", {"sshCertificate": {"publicKey": public}})
    assert again["fromCache"] is True and again["accessToken"] == signed_in["accessToken"]
    p.error("acquireToken", {"flow": "deviceCode", "sshCertificate": {"publicKey": public}}, -32602)


@needs_openssh
@pytest.mark.time_limit(120)
def test_processes_alternating_two_keys_request_one_certificate_per_key_per_lifetime(verbs, mock, tmp_path):
    """#47 finding 10: the file cache keeps a certificate per key_id. 8 processes alternating two
    keys for 15 s, the certificates valid 3600 s (renewed 300 s before their end): one certificate
    request per key in all (before: every call whose key differed from the last writer's made one)."""
    import threading
    from collections import Counter

    verbs.ok("login")
    keys = [rsa_key(tmp_path, name) for name in ("k0", "k1")]
    failures: list[str] = []
    calls = Counter()

    def worker(index: int):
        n, end = index, time.monotonic() + 15
        while time.monotonic() < end:
            key = keys[n % 2]
            p = verbs.run("ssh-cert", "--key", key, "--no-agent")
            if p.returncode != 0 or p.stdout != key + "-cert.pub\n":
                failures.append(p.stderr)
            calls[key] += 1
            n += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    requests = Counter(e["form"].get("key_id") for e in mock.admin.log(endpoint="token:refresh_token")
                       if e["form"].get("token_type") == "ssh-cert")
    assert min(calls.values()) >= 16, calls   # each key was asked for, over and over, from several processes
    assert len(requests) == 2 and set(requests.values()) == {1}, (requests, calls)
    print(f"two keys alternating: {sum(calls.values())} ssh-cert calls from 8 processes, {sum(requests.values())} certificate requests")
    # MSAL for Python's key has no key_id; ours is msal-common's for a bound token with the key_id after it.
    with open(verbs.cache) as f:
        bound = {k: v for k, v in json.load(f)["AccessToken"].items() if v.get("token_type") == "ssh-cert"}
    assert sorted(v["key_id"] for v in bound.values()) == sorted(requests)
    assert all(k.endswith("--ssh-cert-" + v["key_id"].lower()) for k, v in bound.items()), list(bound)
