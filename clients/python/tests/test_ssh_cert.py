"""SSH certificates through the client: ``ssh_public_key`` asks for an ssh-cert token, which is
never an Authorization header."""
from __future__ import annotations

import subprocess

import pytest

import auth_sidecar as a
from conftest import ALICE

PAS = "https://pas.windows.net/CheckMyAccess/Linux/.default"


def test_an_ssh_certificate_for_a_public_key(sidecar_bin, auth_env, auth_config, tmp_path):
    key = str(tmp_path / "id_rsa")
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", key], check=True)
    with open(key + ".pub") as f:
        public = f.read()
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=10, ssh_cert_scope=PAS, **auth_config) as sidecar:
        sidecar.acquire_token(["User.Read"], login_hint=ALICE, timeout=25)
        cert = sidecar.acquire_token_silent(ssh_public_key=public)
        assert cert.token_type == "ssh-cert" and not cert.from_cache
        assert cert.ssh_certificate_line == cert.raw["sshCertificate"]["line"]
        assert cert.raw["sshCertificate"]["principals"] == [ALICE]
        with pytest.raises(ValueError):
            cert.authorization_header
        assert sidecar.acquire_token_silent(ssh_public_key=public).from_cache
        bearer = sidecar.acquire_token_silent(["User.Read"])
        assert bearer.authorization_header.startswith("Bearer ")
        with pytest.raises(a.InvalidParamsError) as refused:
            sidecar.acquire_token_silent(ssh_public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA")
        assert refused.value.member == "sshCertificate.publicKey"
