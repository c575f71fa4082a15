"""A loopback HTTPS stand-in for a Kubernetes API server, for kubectl's exec credential
plugin test: a self-signed certificate for 127.0.0.1 (made with `cryptography`), a bearer
token it accepts, `GET /version`, the legacy discovery documents (`/api`, `/apis`, `/api/v1`) and
`GET /api/v1/namespaces/default/pods`; anything else, or any other token, is refused with a `Status` object. Every Authorization header it saw is
kept in `seen`. `check` (a function of the Authorization header, true to accept) replaces the one
accepted token: an Azure Arc-like cluster that takes only a valid PoP signed HTTP request."""
from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def self_signed(tmp_path) -> tuple[str, str, bytes]:
    """(cert file, key file, cert PEM) for 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-api-stand-in")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file, key_file = str(tmp_path / "kube-api.crt"), str(tmp_path / "kube-api.key")
    with open(cert_file, "wb") as f:
        f.write(pem)
    with open(key_file, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_file, key_file, pem


class KubeAPI:
    ANSWERS = {
        "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0-stand-in", "platform": "linux/amd64"},
        "/api/v1/namespaces/default/pods": {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                            "items": [{"metadata": {"name": "hello", "namespace": "default"}}]},
        # the legacy discovery `kubectl get pods` reads first (one API call each)
        "/api": {"kind": "APIVersions", "versions": ["v1"],
                 "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
        "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
            {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "shortNames": ["po"],
             "verbs": ["get", "list"]}]},
    }

    def __init__(self, tmp_path):
        self.accepted_token: str | None = None
        self.check = None
        self.seen: list[str] = []
        cert_file, key_file, self.cert_pem = self_signed(tmp_path)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                auth = self.headers.get("Authorization", "")
                api.seen.append(auth)
                path = self.path.split("?", 1)[0]
                accepted = api.check(auth) if api.check else api.accepted_token is not None and auth == "Bearer " + api.accepted_token
                if not accepted:
                    return self.reply(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                            "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
                if path not in KubeAPI.ANSWERS:
                    return self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404})
                self.reply(200, KubeAPI.ANSWERS[path])

            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return "https://127.0.0.1:%d" % self.server.server_address[1]

    def kubeconfig(self, path, command: str, api_version: str = "client.authentication.k8s.io/v1",
                   provide_cluster_info: bool = False, args: tuple[str, ...] = ()) -> str:
        """A kubeconfig (JSON is YAML) whose user runs `command kubectl-credential [args]`."""
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "stand-in",
            "clusters": [{"name": "stand-in", "cluster": {
                "server": self.url, "certificate-authority-data": base64.b64encode(self.cert_pem).decode()}}],
            "users": [{"name": "entra", "user": {"exec": {
                "apiVersion": api_version, "command": command, "args": ["kubectl-credential", *args],
                "interactiveMode": "Never", "provideClusterInfo": provide_cluster_info}}}],
            "contexts": [{"name": "stand-in", "context": {"cluster": "stand-in", "user": "entra"}}],
        }
        with open(path, "w") as f:
            json.dump(config, f)
        return str(path)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
