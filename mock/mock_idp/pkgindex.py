"""A Python package index stand-in under {url}/pypi/ (an Azure Artifacts feed's shape):

  GET  /pypi/simple/                 PEP 503 project list
  GET  /pypi/simple/{project}/       PEP 503 links to the project's files (#sha256=...)
  GET  /pypi/files/{filename}        a file
  POST /pypi/upload/                 twine's legacy upload (multipart/form-data, ":action"=file_upload)

Every request needs HTTP Basic authentication whose password is an access token of ours for the
feed's resource (config "feed_resource", default Azure DevOps' app ID), not expired by the
mock's clock; the user name is not checked (Azure Artifacts accepts any). Without it: 401 with
`WWW-Authenticate: Basic realm=...` (what makes pip and uv ask their keyring). It serves one
small wheel, demo_feed_pkg 1.0.0 (built here, `import demo_feed_pkg; demo_feed_pkg.VALUE == 42`),
and whatever was uploaded since the last reset.
"""

import base64
import hashlib
import html
import io
import re
import zipfile
from email.parser import BytesParser
from email.policy import HTTP

from .http_util import Response, json_response

DEVOPS = "499b84ac-1321-427f-aa17-267ca6975798"
WHEEL_NAME = "demo_feed_pkg-1.0.0-py3-none-any.whl"


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(module="demo_feed_pkg", version="1.0.0", value=42):
    """A pure wheel of one module (`VALUE = value`): METADATA, WHEEL and a RECORD with hashes.
    Its file name: f"{module}-{version}-py3-none-any.whl"."""
    dist = "%s-%s.dist-info" % (module, version)
    metadata = "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: mock feed package\n" % (module.replace("_", "-"), version)
    files = [
        (module + "/__init__.py", b"VALUE = %d\n" % value),
        (dist + "/METADATA", metadata.encode()),
        (dist + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: mock_idp\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = "".join("%s,%s,%d\n" % (name, _record_hash(data), len(data)) for name, data in files) + dist + "/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files + [(dist + "/RECORD", record.encode())]:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


WHEEL = build_wheel()


def normalize(name):
    """PEP 503's normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _project(filename):
    return normalize(filename.split("-", 1)[0])


def _files(app):
    files = {WHEEL_NAME: WHEEL}
    files.update(app.state.feed_uploads)
    return files


def _unauthorized(reason):
    return json_response({"error": "unauthorized", "reason": reason}, 401,
                         headers={"WWW-Authenticate": 'Basic realm="mock package feed"'})


def _check(app, req):
    """None when the request carries a good token for the feed's resource, else a 401."""
    auth = req.headers.get("Authorization", "")
    if not auth.startswith("Basic "):
        return _unauthorized("no Basic authorization")
    try:
        user, _, password = base64.b64decode(auth[6:].strip()).decode("utf-8").partition(":")
        claims = app.signer.verify(password)
    except ValueError as exc:
        return _unauthorized("the password is not a token of ours: %s" % exc)
    if claims.get("aud") != app.state.config.get("feed_resource", DEVOPS):
        return _unauthorized("the token's audience is %r" % claims.get("aud"))
    if claims.get("exp", 0) <= app.state.now():
        return _unauthorized("the token has expired")
    return None


def _page(title, links):
    body = "".join('<a href="%s">%s</a><br/>\n' % (html.escape(href), html.escape(text)) for href, text in links)
    return Response(200, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n%s</body></html>\n"
                    % (html.escape(title), body), "text/html; charset=utf-8")


def handle(app, req):
    """Everything under /pypi/."""
    with app.state.lock:
        denied = _check(app, req)
        if denied:
            return denied
        files = _files(app)
    rest = req.segments[1:]
    if req.method in ("GET", "HEAD") and rest == ["simple"]:
        projects = sorted({_project(f) for f in files})
        return _page("Simple index", [(p + "/", p) for p in projects])
    if req.method in ("GET", "HEAD") and len(rest) == 2 and rest[0] == "simple":
        mine = sorted(f for f in files if _project(f) == normalize(rest[1]))
        if not mine:
            return json_response({"error": "no such project"}, 404)
        links = [("../../files/%s#sha256=%s" % (f, hashlib.sha256(files[f]).hexdigest()), f) for f in mine]
        return _page("Links for " + rest[1], links)
    if req.method in ("GET", "HEAD") and len(rest) == 2 and rest[0] == "files" and rest[1] in files:
        return Response(200, files[rest[1]], "application/octet-stream")
    if req.method == "POST" and rest == ["upload"]:
        return _upload(app, req)
    return json_response({"error": "not_found", "path": req.path}, 404)


def _upload(app, req):
    """twine's upload: a multipart form with ":action" file_upload and the file as "content"."""
    ctype = req.headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data"):
        return json_response({"error": "expected multipart/form-data"}, 400)
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + req.body)
    fields, content, filename = {}, None, None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name == "content":
            content, filename = part.get_payload(decode=True), part.get_filename()
        elif name:
            fields[name] = part.get_payload(decode=True).decode("utf-8", "replace")
    if fields.get(":action") != "file_upload" or not content or not filename or "/" in filename:
        return json_response({"error": "not a file upload"}, 400)
    with app.state.lock:
        if filename in _files(app):
            return json_response({"error": "file exists"}, 409)
        app.state.feed_uploads[filename] = content
    return Response(200, b"OK", "text/plain")
