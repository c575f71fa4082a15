#!/usr/bin/env python3
"""Runs the bundled mock identity platform for trying auth-sidecar by hand: scripts/try.sh in a
clone, `auth-sidecar-try` from a package (which ships this file next to the mock: the wheel's
auth_sidecar/mock/, share/auth-sidecar/mock/ in the .deb, the tarball and the npm package).

    eval "$(auth-sidecar-try)"      start it in the background, print the export lines
    auth-sidecar-try env            print them again
    auth-sidecar-try stop           stop it
    python3 scripts/try.py DIR BINARY   (what the first one and try.sh run: in the foreground)

auth-sidecar-try keeps DIR in $TRY_DIR, else ~/.cache/auth-sidecar-try (your own configuration
and cache are not touched), and uses $AUTH_SIDECAR_BIN, else the package's own binary, else
auth-sidecar on PATH.

Starts mock on a free port of 127.0.0.1, then writes into DIR (all of it the
repository's own, nothing under the user's real configuration or cache):
  config.json   the sidecar's configuration: the mock's client id, authority, Graph endpoint,
                a token cache in DIR/cache
  browser       $BROWSER: the mock's scripted browser, which completes the sign-in (as
                alice@contoso.com) like a user clicking through
  bin/          auth-sidecar (a link to BINARY), so it is on PATH
  env           the `export` lines that point auth-sidecar, its clients and curl at the mock:
                AUTH_SIDECAR_CONFIG (config.json instead of ~/.config/auth-sidecar/config.json),
                AUTH_SIDECAR_BIN (for the clients), AUTH_SIDECAR_SOCK (an agent of your own is
                not used), BROWSER, SSL_CERT_FILE / CURL_CA_BUNDLE / REQUESTS_CA_BUNDLE /
                NODE_EXTRA_CA_CERTS (the mock's CA for libcurl, curl, requests, Node), GRAPH
                (the mock's Graph, for the README's curl line), PATH (bin/ first)
Then, until SIGINT/SIGTERM, it approves every device code as alice@contoso.com (standing in
for the user who signs in on another device), and finally stops the mock and removes env.
Standard library only (the mock itself needs `cryptography`: it runs under the first Python
that has it, this one, python3 on PATH, or Debian's /usr/bin/python3).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.realpath(__file__))
# A package ships the mock next to this file; a clone has it in mock/.
MOCK_DIR = HERE if os.path.isdir(os.path.join(HERE, "mock_idp")) else \
    os.path.join(os.path.dirname(HERE), "mock")
SCRIPTED_BROWSER = os.path.join(MOCK_DIR, "scripted_browser.py")
APPROVE_EVERY = 1.0  # seconds between device-code approvals


def start_mock(state_dir: str) -> tuple[subprocess.Popen, dict]:
    """The mock, with its stdin a pipe of ours (it exits when we do), and its ready line."""
    overrides = os.path.join(state_dir, "overrides.json")
    with open(overrides, "w") as f:
        json.dump({"device_code_interval": 1}, f)
    env = dict(os.environ, PYTHONPATH=MOCK_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(os.path.join(state_dir, "mock.log"), "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mock_idp", "--port", "0", "--state-dir", state_dir, "--config", overrides,
             "--exit-on-stdin-eof"], cwd=MOCK_DIR, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"try: the mock identity platform did not start (see {state_dir}/mock.log)")
    return process, json.loads(line)


def write_file(path: str, text: str, mode: int = 0o600) -> None:
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def write_setup(directory: str, binary: str, ready: dict) -> dict[str, str]:
    """config.json, browser, bin/auth-sidecar; returns the environment to export."""
    url, ca_file = ready["url"], ready["caFile"]
    os.makedirs(os.path.join(directory, "cache"), mode=0o700, exist_ok=True)
    config = {"clientId": ready["clientId"], "authority": url + "/common", "knownAuthorities": ["127.0.0.1"],
              "graphEndpoint": url + "/", "scopes": ["User.Read"],
              "cache": {"path": os.path.join(directory, "cache", "msal_token_cache.json")},
              # Plaintext, chosen: the mock's tokens only, and it works on any machine (no keyring).
              "cacheProtection": "plaintext"}
    write_file(os.path.join(directory, "config.json"), json.dumps(config, indent=2) + "\n")
    browser = os.path.join(directory, "browser")
    write_file(browser, "#!/bin/sh\n"
               f"SCRIPTED_BROWSER_CA={shlex.quote(ca_file)} "
               f"SCRIPTED_BROWSER_COOKIES={shlex.quote(os.path.join(directory, 'browser-cookies.txt'))} "
               f"exec {shlex.quote(sys.executable)} {shlex.quote(SCRIPTED_BROWSER)} \"$@\"\n", stat.S_IRWXU)
    bin_dir = os.path.join(directory, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    link = os.path.join(bin_dir, "auth-sidecar")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(binary, link)
    return {
        "AUTH_SIDECAR_CONFIG": os.path.join(directory, "config.json"),
        "AUTH_SIDECAR_BIN": binary,
        "AUTH_SIDECAR_SOCK": os.path.join(directory, "agent.sock"),
        "BROWSER": browser,
        "SSL_CERT_FILE": ca_file, "CURL_CA_BUNDLE": ca_file, "REQUESTS_CA_BUNDLE": ca_file,
        "NODE_EXTRA_CA_CERTS": ca_file,
        "GRAPH": url,
        "PATH": bin_dir + ":$PATH",
    }


def export_lines(variables: dict[str, str]) -> str:
    def value(v: str) -> str:
        return shlex.quote(v[:-len(":$PATH")]) + ':"$PATH"' if v.endswith(":$PATH") else shlex.quote(v)
    return "".join(f"export {name}={value(v)}\n" for name, v in variables.items())


class Approver:
    """Approves the newest device code at the mock, as its default user."""

    def __init__(self, url: str, ca_file: str):
        self.request = urllib.request.Request(
            url + "/_admin/devicecode", data=json.dumps({"user_code": "latest", "action": "approve"}).encode(),
            headers={"Content-Type": "application/json"}, method="POST")
        self.context = ssl.create_default_context(cafile=ca_file)
        self.approved: set[str] = set()

    def approve_latest(self) -> None:
        try:
            with urllib.request.urlopen(self.request, context=self.context, timeout=5) as reply:
                answer = json.load(reply)
        except (urllib.error.URLError, OSError, ValueError):
            return  # no device code yet (404), or the mock is going away
        code = answer.get("user_code")
        if code and code not in self.approved:
            self.approved.add(code)
            print(f"try: approved device code {code} as the mock's default user (alice@contoso.com)",
                  file=sys.stderr, flush=True)


def serve(directory: str, binary: str) -> int:
    """The mock in the foreground, DIR/env written, device codes approved until a signal."""
    directory, binary = os.path.abspath(directory), os.path.abspath(binary)
    state_dir = os.path.join(directory, "mock")
    os.makedirs(state_dir, exist_ok=True)
    env_file = os.path.join(directory, "env")
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    process, ready = start_mock(state_dir)
    try:
        variables = write_setup(directory, binary, ready)
        write_file(env_file + ".tmp", export_lines(variables))
        os.replace(env_file + ".tmp", env_file)  # try.sh waits for this file
        approver = Approver(ready["url"], ready["caFile"])
        while not stopping and process.poll() is None:
            approver.approve_latest()
            time.sleep(APPROVE_EVERY)
    finally:
        if os.path.exists(env_file):
            os.remove(env_file)
        if process.poll() is None:
            process.stdin.close()
            process.terminate()
            process.wait(10)
    return 0 if stopping else 1


# ---- auth-sidecar-try: from a package ----------------------------------------------------

def say(text: str) -> None:
    print("auth-sidecar-try: " + text, file=sys.stderr, flush=True)


def package_binary() -> str | None:
    """$AUTH_SIDECAR_BIN, else the binary of the package this file came with (PREFIX/bin for
    share/auth-sidecar/mock, the npm package's bin/, the venv's bin for the wheel), else PATH."""
    candidates = [os.environ.get("AUTH_SIDECAR_BIN") or "",
                  os.path.join(HERE, "..", "..", "..", "bin", "auth-sidecar"),
                  os.path.join(HERE, "..", "bin", "auth-sidecar"),
                  os.path.join(os.path.dirname(sys.executable), "auth-sidecar"),
                  shutil.which("auth-sidecar") or ""]
    return next((os.path.realpath(c) for c in candidates if c and os.access(c, os.X_OK)), None)


def mock_python() -> str | None:
    """A Python that has `cryptography` (the mock's one dependency)."""
    for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if python and subprocess.run([python, "-c", "import cryptography"], capture_output=True).returncode == 0:
            return python
    return None


def running(pid_file: str) -> bool:
    """Whether the pid file names a live `serve` of this file (not a process that took its pid)."""
    try:
        with open(pid_file) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.realpath(__file__).encode() in f.read().split(b"\0")
    except (OSError, ValueError):
        return False


def print_env(directory: str) -> int:
    with open(os.path.join(directory, "env")) as f:
        sys.stdout.write(f.read())
    return 0


def start(directory: str) -> int:
    """Starts `serve` in a session of its own, waits for DIR/env, prints it on stdout."""
    pid_file = os.path.join(directory, "try.pid")
    if running(pid_file) and os.path.exists(os.path.join(directory, "env")):
        say("already running (auth-sidecar-try stop stops it)")
        return print_env(directory)
    binary, python = package_binary(), mock_python()
    if binary is None:
        say("no auth-sidecar found (set AUTH_SIDECAR_BIN=/path/to/auth-sidecar)")
        return 1
    if python is None:
        say("the mock needs Python's 'cryptography': apt-get install python3-cryptography "
            "(or pip install cryptography)")
        return 1
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with open(os.path.join(directory, "try.log"), "ab") as log:
        process = subprocess.Popen([python, os.path.realpath(__file__), directory, binary], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    write_file(pid_file, f"{process.pid}\n")
    deadline = time.monotonic() + 20
    while not os.path.exists(os.path.join(directory, "env")):
        if process.poll() is not None or time.monotonic() > deadline:
            say(f"the mock did not start (see {directory}/try.log)")
            return 1
        time.sleep(0.05)
    say(f"the mock identity platform is running, with {binary}; sign-ins are alice@contoso.com, the browser\n"
        "is a script that clicks through and device codes are approved within a second. The\n"
        f"configuration is {directory}/config.json (AUTH_SIDECAR_CONFIG; yours is not touched).\n"
        "Run the README's snippets and the clients' quick starts as written; "
        "auth-sidecar-try stop stops it.")
    return print_env(directory)


def stop(directory: str) -> int:
    pid_file = os.path.join(directory, "try.pid")
    if not running(pid_file):
        say("not running")
        return 0
    with open(pid_file) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not running(pid_file):
            break
        time.sleep(0.1)
    os.remove(pid_file)
    say("stopped the mock identity platform")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] not in ("start", "env", "stop"):
        return serve(*args)
    directory = os.path.abspath(os.environ.get("TRY_DIR") or os.path.expanduser("~/.cache/auth-sidecar-try"))
    command = args[0] if args else "start"
    if command in ("-h", "--help"):
        print("\n\n".join(__doc__.split("\n\n")[:3]))
        return 0
    if command == "env" and running(os.path.join(directory, "try.pid")):
        return print_env(directory)
    if command == "env":
        say("not running: eval \"$(auth-sidecar-try)\" first")
        return 1
    if command in ("start", "stop") and len(args) <= 1:
        return start(directory) if command == "start" else stop(directory)
    say(f"unknown command {' '.join(args)!r} (start, env, stop)")
    return 64


if __name__ == "__main__":
    sys.exit(main())
