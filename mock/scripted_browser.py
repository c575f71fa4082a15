#!/usr/bin/env python3
"""A scripted "browser" for sign-in tests: use it as $BROWSER. It takes the URL as its argument.

It GETs the authorize URL from the mock (trusting the mock's CA), follows redirects and
submits pages within the mock over HTTPS (the login form, if enabled), and finally delivers
the response to the app's loopback redirect URI (http://localhost:PORT) itself: by GET for
response_mode=query, by POST for form_post pages. Standard library only.

Environment:
  SCRIPTED_BROWSER_CA        CA file to trust (default: $SSL_CERT_FILE, then $REQUESTS_CA_BUNDLE)
  SCRIPTED_BROWSER_ACTION    complete (default) | cancel (open nothing: the user closed the
                             window) | deny (send error=access_denied&error_subcode=cancel
                             to the redirect URI, as if the user cancelled at the IdP)
  SCRIPTED_BROWSER_WAIT      1: stay in the foreground and exit non-zero on failure.
                             Default: detach (like xdg-open), so a caller that waits for the
                             browser command before serving its loopback does not deadlock.
  SCRIPTED_BROWSER_COOKIES   cookie-jar file kept between runs (browser session, SSO)
  SCRIPTED_BROWSER_USERNAME / SCRIPTED_BROWSER_PASSWORD  for the mock's HTML login form
  SCRIPTED_BROWSER_LOG       append one JSON line per run: {"url", "action", "ok", "detail"}
  SCRIPTED_BROWSER_ADDRESS   1: deliver nothing to the app; print the address the browser ends
                             on (the loopback redirect, code or error and state in its query)
                             as one line on stdout, as a user copies it from the address bar
                             for a paste-back sign-in (nothing listens there). Foreground only.
Failures go to stderr (and the log); the exit status is non-zero when running in the foreground.
"""

import html.parser
import http.cookiejar
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

MAX_STEPS = 15


class _Forms(html.parser.HTMLParser):
    """Collects <form action method> and their <input>/<button> name=value pairs."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action", ""),
                               "method": (attrs.get("method") or "GET").upper(), "fields": {}})
        elif tag in ("input", "button") and self.forms and attrs.get("name"):
            if tag == "button" and attrs.get("value") != "signin":
                return
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Failure(Exception):
    pass


def _opener(jar):
    ca = (os.environ.get("SCRIPTED_BROWSER_CA") or os.environ.get("SSL_CERT_FILE")
          or os.environ.get("REQUESTS_CA_BUNDLE"))
    context = ssl.create_default_context(cafile=ca)
    return urllib.request.build_opener(
        _NoRedirect(), urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=context), urllib.request.HTTPCookieProcessor(jar))


def _fetch(opener, url, form=None):
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if form is not None else "GET")
    if data is not None:
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with opener.open(req, timeout=20) as resp:
            return resp.status, resp.headers, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as err:
        raise Failure("cannot reach %s: %s" % (url.split("?")[0], err))


def _is_loopback_app(url, idp_netloc):
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "http" and parts.netloc != idp_netloc


def _deliver(opener, url, form=None):
    if os.environ.get("SCRIPTED_BROWSER_ADDRESS") == "1":
        if form is not None:
            raise Failure("a form_post answer has no address to copy")
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
        return "ended on %s" % url.split("?")[0]
    status, _, body = _fetch(opener, url, form)
    if not 200 <= status < 400:
        raise Failure("the app's redirect URI answered %d: %s" % (status, body[:200]))
    return "delivered to %s (%d)" % (url.split("?")[0], status)


def complete(opener, url):
    idp = urllib.parse.urlsplit(url).netloc
    form = None
    for _ in range(MAX_STEPS):
        if _is_loopback_app(url, idp):
            return _deliver(opener, url, form)
        status, headers, body = _fetch(opener, url, form)
        form = None
        if status in (301, 302, 303, 307, 308):
            url = urllib.parse.urljoin(url, headers["Location"])
            continue
        if status != 200:
            raise Failure("the identity provider answered %d: %s" % (status, _text(body)))
        forms = _Forms()
        forms.feed(body)
        if not forms.forms:
            raise Failure("page has no form to continue with: %s" % _text(body))
        page = forms.forms[0]
        fields = page["fields"]
        if "login_username" in fields:
            fields["login_username"] = os.environ.get("SCRIPTED_BROWSER_USERNAME",
                                                      fields["login_username"])
            fields["login_password"] = os.environ.get("SCRIPTED_BROWSER_PASSWORD", "password")
            fields["mock_action"] = "signin"
        url = urllib.parse.urljoin(url, page["action"])
        form = fields if page["method"] == "POST" else None
        if form is None:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(fields)
    raise Failure("too many steps")


def deny(opener, url):
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    params = {"error": "access_denied", "error_subcode": "cancel",
              "error_description": "AADSTS50126: The user cancelled the sign-in."}
    if query.get("state"):
        params["state"] = query["state"]
    target = query.get("redirect_uri")
    if not target:
        raise Failure("the URL has no redirect_uri")
    if query.get("response_mode") == "form_post":
        return _deliver(opener, target, params)
    return _deliver(opener, target + ("&" if "?" in target else "?") + urllib.parse.urlencode(params))


def _text(body):
    return " ".join(body.replace("<", " <").split())[:300]


def run(url):
    action = os.environ.get("SCRIPTED_BROWSER_ACTION", "complete")
    cookie_file = os.environ.get("SCRIPTED_BROWSER_COOKIES")
    jar = http.cookiejar.LWPCookieJar(cookie_file) if cookie_file else http.cookiejar.CookieJar()
    if cookie_file and os.path.exists(cookie_file):
        jar.load(ignore_discard=True)
    opener = _opener(jar)
    ok, detail = True, "cancelled: nothing opened"
    try:
        if action == "complete":
            detail = complete(opener, url)
        elif action == "deny":
            detail = deny(opener, url)
        elif action != "cancel":
            raise Failure("unknown SCRIPTED_BROWSER_ACTION %r" % action)
    except Failure as exc:
        ok, detail = False, str(exc)
        sys.stderr.write("scripted_browser: %s\n" % exc)
    if cookie_file:
        jar.save(ignore_discard=True)
    if os.environ.get("SCRIPTED_BROWSER_LOG"):
        with open(os.environ["SCRIPTED_BROWSER_LOG"], "a") as f:
            f.write(json.dumps({"url": url, "action": action, "ok": ok, "detail": detail}) + "\n")
    return 0 if ok else 1


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: scripted_browser.py URL\n")
        return 2
    if os.environ.get("SCRIPTED_BROWSER_WAIT") != "1" and os.environ.get("SCRIPTED_BROWSER_ADDRESS") != "1" \
            and hasattr(os, "fork"):
        if os.fork() > 0:
            return 0          # like xdg-open: the "browser" carries on by itself
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)   # never a stray byte on the caller's stdout
        code = run(argv[1])
        os._exit(code)
    return run(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
