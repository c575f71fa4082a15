"""A container registry stand-in with Azure Container Registry's token endpoints, at the root
of the mock (the registry's name is the Host the client used, e.g. 127.0.0.1:PORT):

  POST /oauth2/exchange   grant_type=access_token, service, tenant, access_token (an Entra
                          token of ours for Resource Manager or containerregistry.azure.net,
                          of that tenant) -> {"refresh_token"}: ACR's refresh token (a JWT of
                          ours: aud = the registry, grant_type = refresh_token, 3 hours)
  GET  /oauth2/token      ?service&scope with Basic 00000000-0000-0000-0000-000000000000:<refresh
                          token> (docker login's way, az acr login's user name), or
  POST /oauth2/token      grant_type=refresh_token, service, scope, refresh_token (an identity
                          token's way) -> {"access_token"} for the scope (repository:NAME:pull)
  GET  /v2/               200 with a registry access token, else 401 with ACR's Bearer challenge
  GET  /v2/NAME/manifests/REF, /v2/NAME/blobs/DIGEST, /v2/NAME/tags/list   one image,
                          demo/hello:1.0 (a Docker v2 schema 2 manifest, its config and one
                          layer), an access token for repository:NAME:pull required

Exchanges and token grants are counted as acr:exchange and acr:token, the registry API as
registry (admin counts).
"""

import base64
import gzip
import hashlib
import io
import json
import tarfile
import uuid
from urllib.parse import parse_qsl

from .http_util import Response, json_response

ACR_USERNAME = "00000000-0000-0000-0000-000000000000"
AUDIENCES = {"https://management.core.windows.net/", "https://management.core.windows.net",
             "https://management.azure.com/", "https://management.azure.com",
             "https://containerregistry.azure.net"}
REFRESH_LIFE, ACCESS_LIFE = 3 * 3600, 3600
REPOSITORY, TAG = "demo/hello", "1.0"
MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"


def _digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _build_image():
    """(manifest bytes, {digest: blob}) of a one-layer image holding /hello.txt."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w") as tar:
        data = b"hello from the mock registry\n"
        info = tarfile.TarInfo("hello.txt")
        info.size, info.mtime, info.mode = len(data), 1704067200, 0o644
        tar.addfile(info, io.BytesIO(data))
    layer = gzip.compress(tar_bytes.getvalue(), mtime=0)
    config = json.dumps({"architecture": "amd64", "os": "linux", "created": "2024-01-01T00:00:00Z",
                         "config": {"Cmd": ["/bin/true"]},
                         "rootfs": {"type": "layers", "diff_ids": [_digest(tar_bytes.getvalue())]}},
                        sort_keys=True).encode()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(config),
                   "digest": _digest(config)},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": len(layer),
                    "digest": _digest(layer)}]}, indent=3).encode()
    return manifest, {_digest(config): config, _digest(layer): layer}


MANIFEST, BLOBS = _build_image()


def _service(req):
    return req.headers.get("Host") or req.base_url.split("://", 1)[1]


def _error(status, code, message, challenge=None):
    headers = {"WWW-Authenticate": challenge} if challenge else None
    return json_response({"errors": [{"code": code, "message": message, "detail": None}]}, status, headers=headers)


def _challenge(req, scope=None):
    service = _service(req)
    value = 'Bearer realm="https://%s/oauth2/token",service="%s"' % (service, service)
    return value + (',scope="%s"' % scope if scope else "")


def exchange(app, req):
    """POST /oauth2/exchange: an Entra access token for the registry's refresh token."""
    if req.method != "POST":
        return _error(405, "UNSUPPORTED", "POST only")
    if req.param("grant_type") != "access_token":
        return _error(400, "UNSUPPORTED", "grant_type must be access_token")
    service = req.param("service")
    if service != _service(req):
        return _error(400, "UNAUTHORIZED", "service %r is not this registry" % service)
    try:
        claims = app.signer.verify(req.param("access_token") or "")
    except ValueError as exc:
        return _error(401, "UNAUTHORIZED", "the access token is invalid: %s" % exc)
    if claims.get("aud") not in AUDIENCES:
        return _error(401, "UNAUTHORIZED", "the access token's audience %r is not Resource Manager's" % claims.get("aud"))
    if claims.get("exp", 0) <= app.state.now():
        return _error(401, "UNAUTHORIZED", "the access token has expired")
    if req.param("tenant") != claims.get("tid"):
        return _error(401, "UNAUTHORIZED", "tenant %r is not the token's" % req.param("tenant"))
    now = int(app.state.now())
    refresh = app.signer.sign({"aud": service, "iss": "Azure Container Registry", "iat": now, "nbf": now,
                               "exp": now + REFRESH_LIFE, "grant_type": "refresh_token", "tenant": claims["tid"],
                               "oid": claims.get("oid"), "jti": str(uuid.uuid4())})
    return json_response({"refresh_token": refresh})


def _refresh_claims(app, req, token):
    try:
        claims = app.signer.verify(token or "")
    except ValueError:
        return None
    if claims.get("grant_type") != "refresh_token" or claims.get("aud") != _service(req):
        return None
    return claims if claims.get("exp", 0) > app.state.now() else None


def token(app, req):
    """/oauth2/token: a registry access token for `scope`, for a refresh token (Basic or form)."""
    if req.method == "POST":
        if req.param("grant_type") != "refresh_token":
            return _error(400, "UNSUPPORTED", "grant_type must be refresh_token")
        refresh = req.param("refresh_token")
    else:
        auth = req.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return _error(401, "UNAUTHORIZED", "authentication required", 'Basic realm="Azure Container Registry"')
        try:
            user, _, refresh = base64.b64decode(auth[6:].strip()).decode("utf-8").partition(":")
        except ValueError:
            return _error(401, "UNAUTHORIZED", "malformed Basic authorization")
        if user != ACR_USERNAME:
            return _error(401, "UNAUTHORIZED", "user name %r is not the refresh token's" % user)
    claims = _refresh_claims(app, req, refresh)
    if claims is None or req.param("service") != _service(req):
        return _error(401, "UNAUTHORIZED", "the refresh token is not good for this registry")
    access = []
    scopes = [v for k, v in parse_qsl(req.query_string, keep_blank_values=True) if k == "scope"]
    for scope in scopes + ([req.form["scope"]] if "scope" in req.form else []):
        kind, _, rest = scope.partition(":")
        name, _, actions = rest.rpartition(":")
        access.append({"type": kind, "name": name, "actions": [a for a in actions.split(",") if a == "pull"]})
    now = int(app.state.now())
    issued = app.signer.sign({"aud": _service(req), "iss": "Azure Container Registry", "iat": now, "nbf": now,
                              "exp": now + ACCESS_LIFE, "access": access, "tenant": claims["tenant"]})
    return json_response({"access_token": issued})


def _allowed(app, req, repository):
    auth = req.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        return False
    try:
        claims = app.signer.verify(auth[7:].strip())
    except ValueError:
        return False
    if claims.get("aud") != _service(req) or claims.get("exp", 0) <= app.state.now() or "access" not in claims:
        return False
    if repository is None:
        return True
    return any(a.get("type") == "repository" and a.get("name") == repository and "pull" in a.get("actions", [])
               for a in claims["access"])


def api(app, req):
    """/v2/...: the registry API, one image."""
    segs = req.segments[1:]
    if not segs:
        if not _allowed(app, req, None):
            return _error(401, "UNAUTHORIZED", "authentication required", _challenge(req))
        resp = json_response({})
        resp.add_header("Docker-Distribution-API-Version", "registry/2.0")
        return resp
    if len(segs) < 3 or segs[-2] not in ("manifests", "blobs", "tags"):
        return _error(404, "NAME_UNKNOWN", "no such path")
    repository, kind, ref = "/".join(segs[:-2]), segs[-2], segs[-1]
    if not _allowed(app, req, repository):
        return _error(401, "UNAUTHORIZED", "authentication required", _challenge(req, "repository:%s:pull" % repository))
    if repository != REPOSITORY:
        return _error(404, "NAME_UNKNOWN", "repository %s not found" % repository)
    if kind == "tags" and ref == "list":
        return json_response({"name": REPOSITORY, "tags": [TAG]})
    if kind == "manifests" and ref in (TAG, _digest(MANIFEST)):
        resp = Response(200, MANIFEST, MANIFEST_TYPE)
        resp.add_header("Docker-Content-Digest", _digest(MANIFEST))
        return resp
    if kind == "blobs" and ref in BLOBS:
        resp = Response(200, BLOBS[ref], "application/octet-stream")
        resp.add_header("Docker-Content-Digest", ref)
        return resp
    return _error(404, "MANIFEST_UNKNOWN" if kind == "manifests" else "BLOB_UNKNOWN", "%s not found" % ref)
