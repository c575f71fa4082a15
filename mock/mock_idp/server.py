"""The HTTPS server: TLS per connection, request parsing, counting, faults and routing."""

import json
import socket
import ssl
import struct
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import admin, arm, pkgindex, registry, authorize, devicecode, discovery, faults, graph, issuers, pop, tenancy, token_endpoint
from .errors import OAuthError
from .http_util import Request, Response, json_response

GRANT_KEYS = {"urn:ietf:params:oauth:grant-type:device_code": "device_code",
              "device_code": "device_code"}


def _token_key(req):
    grant = req.param("grant_type", "") or "none"
    return "token:" + GRANT_KEYS.get(grant, grant)


def endpoint_keys(req):
    """The names under which a request is counted, logged and matched by faults: the
    endpoint's key (token:refresh_token) and, at a generic issuer, issuer:{name}:{key} too."""
    key = endpoint_key(req)
    if req.segments[:1] == ["issuers"] and len(req.segments) > 1:
        return [key, "issuer:%s:%s" % (req.segments[1], key)]
    return [key]


def counted_names(key):
    """`key` and the totals it adds to: token:refresh_token -> token;
    issuer:a:token:refresh_token -> issuer:a:token, issuer:a."""
    prefix, names = "", set()
    if key.startswith("issuer:") and key.count(":") >= 2:
        _, name, key = key.split(":", 2)
        prefix = "issuer:%s:" % name
        names.add("issuer:" + name)
    names.add(prefix + key)
    if ":" in key:
        names.add(prefix + key.split(":", 1)[0])
    return names


def endpoint_key(req):
    """The name under which a request is counted and matched by faults."""
    segs, path = req.segments, req.path
    if not segs:
        return "root"
    if segs[0] == "_admin":
        return "admin"
    if segs[0] == "issuers" and len(segs) > 1:
        key = issuers.ENDPOINT_KEYS.get("/".join(segs[2:]), "other")
        return _token_key(req) if key == "token" else key
    if segs[0] in ("v1.0", "beta"):
        return "graph:/" + "/".join(segs[:3])
    if segs[0] == "devicelogin":
        return "devicelogin"
    if segs[0] == "arm":
        return "arm"
    if segs[0] == "pypi":
        return "pypi"
    if segs[0] == "v2":
        return "registry"
    if segs[0] == "oauth2" and len(segs) == 2 and segs[1] in ("exchange", "token"):
        return "acr:" + segs[1]
    if segs[0] == "pop":
        return "pop"
    if path.rstrip("/") == "/common/discovery/instance":
        return "instance-discovery"
    if path.endswith("/.well-known/openid-configuration"):
        return "openid-configuration"
    if path.endswith("/discovery/v2.0/keys") or path.endswith("/discovery/keys"):
        return "jwks"
    if "/oauth2/v2.0/" in path or "/oauth2/" in path:
        name = segs[-1]
        return _token_key(req) if name == "token" else name
    return "other"


def route(app, req, key):
    if key == "admin":
        return admin.handle(app, req)
    if key.startswith("graph"):
        return graph.handle(app, req)
    if key == "devicelogin":
        return devicecode.login_page(app, req)
    if key == "arm":
        return arm.handle(app, req)
    if key == "pypi":
        return pkgindex.handle(app, req)
    if key == "registry":
        return registry.api(app, req)
    if key in ("acr:exchange", "acr:token"):
        return (registry.exchange if key == "acr:exchange" else registry.token)(app, req)
    if key == "pop":
        return pop.resource(app, req)
    if key == "instance-discovery":
        return discovery.instance(app, req)
    if key in ("root", "other") and req.segments[-1:] != ["userrealm"]:
        return json_response({"error": "not_found", "path": req.path}, 404)
    if req.segments[0] == "issuers":
        return route_issuer(app, req)
    ctx, rest = tenancy.parse(app.state, req.segments)
    rest = "/".join(rest)
    if rest == "v2.0/.well-known/openid-configuration":
        return discovery.openid_configuration(app, req, ctx)
    if rest in ("discovery/v2.0/keys", "discovery/keys"):
        return discovery.jwks(app, req, ctx)
    if rest == "oauth2/v2.0/authorize":
        return authorize.handle(app, req, ctx)
    if rest == "oauth2/v2.0/token":
        return token_endpoint.handle(app, req, ctx)
    if rest == "oauth2/v2.0/devicecode":
        return devicecode.start(app, req, ctx)
    if rest == "oauth2/v2.0/logout":
        return authorize.logout(app, req, ctx)
    return json_response({"error": "not_found", "path": req.path}, 404)


def route_issuer(app, req):
    """/issuers/{name}/...: a generic OpenID Connect issuer (see issuers.py)."""
    ctx = issuers.context(app.state, req.segments[1])
    if ctx is None:
        return json_response({"error": "not_found", "path": req.path}, 404)
    handlers = {"openid-configuration": issuers.openid_configuration, "jwks": issuers.jwks,
                "authorize": authorize.handle, "token": token_endpoint.handle,
                "devicecode": devicecode.start, "logout": authorize.logout}
    return handlers[issuers.ENDPOINT_KEYS["/".join(req.segments[2:])]](app, req, ctx)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-idp/1.0"

    def log_message(self, fmt, *args):  # quiet unless --verbose
        if self.server.app.verbose:
            sys.stderr.write("mock-idp: " + (fmt % args) + "\n")

    def do_GET(self):
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def _handle(self):
        app = self.server.app
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        req = Request(self.command, self.path, self.headers, body, app.base_url)
        keys = endpoint_keys(req)
        key, plain = keys[0], len(keys) > 1   # generic issuers answer plain OAuth errors
        names = set().union(*map(counted_names, keys))
        if key != "admin":
            with app.state.lock:
                for name in names:
                    app.state.counts[name] += 1
        fault = faults.take(app.state, names) if key != "admin" else None
        if fault and fault["type"] in ("reset", "truncated", "malformed"):
            self._record(req, key, names, "fault:" + fault["type"])
            return getattr(self, "_fault_" + fault["type"])()
        try:
            resp = faults.status_response(fault, key, req.correlation_id, plain) \
                if fault and fault["type"] == "status" else route(app, req, key)
        except OAuthError as err:
            resp = json_response(err.body(req.correlation_id, app.state.now(), plain), err.status)
        except Exception:  # a bug in the mock: say so loudly, answer 500
            traceback.print_exc(file=sys.stderr)
            resp = json_response({"error": "mock_internal_error"}, 500)
        if fault and fault["type"] not in faults.REPLACING:
            resp = faults.shape(fault, resp)
        self._record(req, key, names, resp.status)
        self._send(resp, req, slow=fault if fault and fault["type"] == "slow_body" else None)

    def _record(self, req, key, names, status):
        if key == "admin":
            return
        with self.server.app.state.lock:
            self.server.app.state.log.append({
                "time": time.time(), "method": req.method, "path": req.path, "endpoint": key,
                "endpoints": sorted(names),
                "query": req.query, "form": req.form, "status": status,
                "headers": {k.lower(): v for k, v in req.headers.items()
                            if k.lower() not in ("cookie", "authorization")},
                "authorization": bool(req.headers.get("Authorization"))})

    def _send(self, resp, req, slow=None):
        self.send_response(resp.status)
        for name, value in resp.headers:
            self.send_header(name, value)
        self.send_header("client-request-id", req.correlation_id)
        self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if slow is None:
            self.wfile.write(resp.body)
            return
        self.wfile.flush()
        for pause, piece in faults.body_chunks(slow, resp.body):
            time.sleep(pause)
            self.wfile.write(piece)
            self.wfile.flush()

    def _fault_reset(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _fault_truncated(self):
        body = faults.full_body_for_truncation()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self._fault_reset()

    def _fault_malformed(self):
        self._send(Response(200, faults.MALFORMED_BODY), Request("GET", "/", {}, b"", ""))


class MockServer(ThreadingHTTPServer):
    """Binds 127.0.0.1 only; the TLS handshake runs in the connection's own thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port, ssl_context, app):
        self.ssl_context, self.app = ssl_context, app
        super().__init__(("127.0.0.1", port), Handler)

    def finish_request(self, request, client_address):
        request.settimeout(30)
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            try:
                tls.close()
            except OSError:
                pass


def make_ssl_context(cert_file, key_file):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert_file, key_file)
    return ctx


def dumps(obj):
    return json.dumps(obj, separators=(", ", ": "))
