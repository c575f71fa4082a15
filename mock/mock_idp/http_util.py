"""Small request/response types shared by the endpoint modules."""

import html
import json
import uuid
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlsplit


class Request:
    """A parsed HTTP request. `query` and `form` map each name to its first value."""

    def __init__(self, method, target, headers, body, base_url):
        parts = urlsplit(target)
        self.method, self.path, self.headers, self.body = method, parts.path, headers, body
        self.base_url = base_url
        self.segments = [s for s in self.path.split("/") if s]
        self.query_string = parts.query
        self.query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.form = {}
        ctype = headers.get("Content-Type", "")
        if body and ctype.startswith("application/x-www-form-urlencoded"):
            self.form = {k: v[0] for k, v in
                         parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        self.json = None
        if body and ctype.startswith("application/json"):
            try:
                self.json = json.loads(body)
            except ValueError:
                self.json = None
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("Cookie", ""))
        except Exception:  # a malformed cookie header is simply ignored
            pass
        self.cookies = {k: m.value for k, m in cookie.items()}
        self.correlation_id = headers.get("client-request-id") or str(uuid.uuid4())

    def param(self, name, default=None):
        """A parameter from the form body, else the query string."""
        if name in self.form:
            return self.form[name]
        return self.query.get(name, default)

    def body_json(self):
        """The JSON body (admin endpoints), or the form as a dict, or {}."""
        if isinstance(self.json, dict):
            return self.json
        return dict(self.form) or {}


class Response:
    def __init__(self, status=200, body=b"", content_type="application/json; charset=utf-8",
                 headers=None):
        self.status = status
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.headers = [("Content-Type", content_type)] if content_type else []
        self.headers += list((headers or {}).items()) if isinstance(headers, dict) else (headers or [])

    def add_header(self, name, value):
        self.headers.append((name, value))
        return self


def json_response(obj, status=200, headers=None):
    resp = Response(status, json.dumps(obj), headers=headers)
    resp.add_header("Cache-Control", "no-store, no-cache")
    return resp


def html_response(markup, status=200):
    return Response(status, markup, "text/html; charset=utf-8")


def redirect(location, headers=None):
    resp = Response(302, b"", None, headers)
    resp.add_header("Location", location)
    return resp


def with_params(url, params):
    sep = "&" if urlsplit(url).query else "?"
    return url + sep + urlencode(params)


def form_post_page(action, params):
    """The auto-submitting page Microsoft answers with for response_mode=form_post."""
    inputs = "".join('<input type="hidden" name="%s" value="%s" />' % (
        html.escape(k, quote=True), html.escape(v, quote=True)) for k, v in params.items())
    return ('<html><head><title>Working...</title></head><body onload="document.forms[0].submit()">'
            '<form method="POST" name="hiddenform" action="%s">%s'
            '<noscript><p>Script is disabled. Click Submit to continue.</p>'
            '<input type="submit" value="Submit" /></noscript></form></body></html>'
            % (html.escape(action, quote=True), inputs))
