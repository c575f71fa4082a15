"""A loopback stand-in for Azure Blob Storage, enough for a reader that asks for a blob's
properties and then its bytes (HEAD, GET with a range): HTTPS on 127.0.0.1 with the mock's
certificate; each request's bearer token must be for storage and unexpired (the tokens are
kept for the test to compare with the user's)."""
from __future__ import annotations

import base64
import json
import os
import ssl
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STORAGE_AUDIENCES = {"https://storage.azure.com", "https://storage.azure.com/"}


def token_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class BlobStandIn:
    """Serves `blobs` ({"/container/name": bytes}) at https://127.0.0.1:PORT."""

    def __init__(self, cert_file: str, key_file: str, blobs: dict[str, bytes]):
        self.blobs, self.tokens, self.refused = blobs, [], []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _authorized(self) -> bool:
                auth = self.headers.get("Authorization", "")
                try:
                    claims = token_claims(auth[len("Bearer "):]) if auth.startswith("Bearer ") else {}
                except ValueError:
                    claims = {}
                if claims.get("aud") in STORAGE_AUDIENCES and claims.get("exp", 0) > time.time():
                    outer.tokens.append(auth[len("Bearer "):])
                    return True
                outer.refused.append(self.path)
                self._reply(401, b"", {"WWW-Authenticate": 'Bearer authorization_uri="https://login.microsoftonline.com/", '
                                                          'resource_id="https://storage.azure.com"',
                                       "x-ms-error-code": "InvalidAuthenticationInfo"})
                return False

            def _reply(self, status, body, headers):
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                if not self._authorized():
                    return
                data = outer.blobs.get(self.path.split("?")[0])
                if data is None:
                    return self._reply(404, b"", {"x-ms-error-code": "BlobNotFound"})
                headers = {"Last-Modified": formatdate(usegmt=True), "ETag": '"0x8D0000000000001"',
                           "x-ms-blob-type": "BlockBlob", "Accept-Ranges": "bytes", "x-ms-version": "2024-08-04",
                           "Content-Type": "text/csv", "x-ms-request-id": "0", "x-ms-creation-time": formatdate(usegmt=True),
                           "x-ms-server-encrypted": "true", "x-ms-lease-state": "available", "x-ms-lease-status": "unlocked",
                           "Date": formatdate(usegmt=True)}
                wanted = self.headers.get("x-ms-range") or self.headers.get("Range")
                if wanted and wanted.startswith("bytes="):
                    start, _, end = wanted[len("bytes="):].partition("-")
                    first, last = int(start), min(int(end) if end else len(data) - 1, len(data) - 1)
                    headers["Content-Range"] = "bytes %d-%d/%d" % (first, last, len(data))
                    return self._reply(206, data[first:last + 1], headers)
                return self._reply(200, data, headers)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
