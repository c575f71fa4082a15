"""A stand-in for a CI system's OIDC issuer, for tests of workload identity federation.

An issuer on http://127.0.0.1:PORT with its own RSA key: its OpenID configuration and JWKS
(what Entra reads to check an assertion), a GitHub Actions-style token endpoint
(`GET /actions/token?audience=...` with `Authorization: bearer <request token>`, answering
`{"value": JWT}`), and `mint()`/`write_token_file()` for a Kubernetes-style projected token.

    issuer = WorkloadIssuer(lifetime=5)      # assertions live 5 seconds
    issuer.start()
    admin.federation(client_id=..., issuer=issuer.url, subject=issuer.subject)
    env["ACTIONS_ID_TOKEN_REQUEST_URL"] = issuer.actions_url
    env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = issuer.request_token
    ...
    issuer.stop()
"""

import json
import os
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from .jwtsign import Signer


class WorkloadIssuer:
    def __init__(self, subject="repo:contoso/app:ref:refs/heads/main", lifetime=300):
        self.subject, self.lifetime = subject, lifetime
        self.signer = Signer()
        self.request_token = "req-" + secrets.token_urlsafe(16)
        self.minted = []   # (time, audience) of every token the Actions endpoint gave
        self.hits = 0      # requests to the Actions endpoint, answered or not
        # what the next requests to the Actions endpoint get instead of a token, in order:
        # an HTTP status (500), or "hang" (no answer for 60 s); "hang*": every request hangs
        self.faults = []
        self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    @property
    def actions_url(self):
        """ACTIONS_ID_TOKEN_REQUEST_URL: it already has a query; callers add &audience=..."""
        return self.url + "/actions/token?api-version=2.0"

    def mint(self, audience="api://AzureADTokenExchange", lifetime=None, subject=None, not_before=None):
        now = int(time.time())
        life = self.lifetime if lifetime is None else lifetime
        claims = {"iss": self.url, "sub": subject or self.subject, "aud": audience,
                  "iat": now, "nbf": now if not_before is None else not_before, "exp": now + life,
                  "jti": secrets.token_hex(8)}
        return self.signer.sign(claims)

    def write_token_file(self, path, **kwargs):
        """Write a token as the kubelet does: a new file renamed over the old one."""
        token = self.mint(**kwargs)
        tmp = "%s.%s.tmp" % (path, secrets.token_hex(4))
        with open(tmp, "w") as f:
            f.write(token)
        os.replace(tmp, path)
        return token

    def start(self):
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                if parts.path == "/.well-known/openid-configuration":
                    return self._json(200, {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks",
                                            "id_token_signing_alg_values_supported": ["RS256"]})
                if parts.path == "/jwks":
                    return self._json(200, issuer.signer.jwks())
                if parts.path == "/actions/token":
                    issuer.hits += 1
                    fault = issuer.faults[0] if issuer.faults else None
                    if fault is not None and fault != "hang*":
                        issuer.faults.pop(0)
                    if fault in ("hang", "hang*"):
                        time.sleep(60)
                        return
                    if isinstance(fault, int):
                        return self._json(fault, {"message": "injected failure"})
                    if self.headers.get("Authorization", "") != "bearer " + issuer.request_token:
                        return self._json(401, {"message": "bad request token"})
                    audience = parse_qs(parts.query).get("audience", ["api://AzureADTokenExchange"])[0]
                    issuer.minted.append((time.time(), audience))
                    return self._json(200, {"count": 1, "value": issuer.mint(audience=audience)})
                return self._json(404, {"error": "not found"})

            def _json(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
