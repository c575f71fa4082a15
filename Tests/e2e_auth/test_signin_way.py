"""`login` picks the sign-in way from the environment and says why (issue 25, items 3 and 6).

Each branch runs the real binary against the mock with the environment faked: WSL by
WSL_DISTRO_NAME or a /proc/version of the test's own (AUTH_SIDECAR_TEST_PROC_VERSION, read
only by this seam), SSH by SSH_CONNECTION, no DISPLAY or $BROWSER. The Windows launchers are
fake `wslview`/`explorer.exe`/`cmd.exe` scripts first on PATH: each records its argv and hands
the URL to the scripted browser, which completes the sign-in. The device code's progress is
read from a pty (a terminal: one line rewritten with CR, colours unless NO_COLOR) and from a
pipe (plain lines).
"""
from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import sys
import time

import pytest

from auth_e2e import ALICE, BROWSER
from test_verbs import SIGN_IN_NEEDED, USAGE, Verbs, read_stderr_until  # noqa: F401 (fixture below)

FAILURE = 1


@pytest.fixture
def verbs(sidecar_bin, mock, tmp_path) -> Verbs:
    v = Verbs(sidecar_bin, mock, tmp_path)
    for k in [k for k in v.env if k.startswith(("SSH_", "WSL_")) or k in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")]:
        del v.env[k]
    plain = tmp_path / "proc-version"
    plain.write_text("Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org)\n")
    v.env["AUTH_SIDECAR_TEST_PROC_VERSION"] = str(plain)
    mock.admin.config(device_code_interval=1)
    return v


def fake_launcher(verbs: Verbs, name: str, status: int = 0, uncaret: bool = False) -> str:
    """A `name` script first on PATH: records its argv (JSON) and opens the last argument (with
    cmd.exe's carets removed) in the scripted browser, as Windows would."""
    bindir = verbs.tmp / "fakebin"
    bindir.mkdir(exist_ok=True)
    record = verbs.tmp / f"{name}.argv"
    script = bindir / name
    script.write_text(f"""#!{sys.executable}
import json, os, re, subprocess, sys
json.dump(sys.argv[1:], open({str(record)!r}, "w"))
url = sys.argv[-1]
if {uncaret!r}:
    url = re.sub(r"\\^(.)", r"\\1", url)
subprocess.run([{sys.executable!r}, {BROWSER!r}, url], env={{**os.environ, "SCRIPTED_BROWSER_WAIT": "1"}}, check=True)
sys.exit({status})
""")
    script.chmod(0o755)
    verbs.env["PATH"] = f"{bindir}:{verbs.env.get('PATH', '/usr/bin:/bin')}"
    return str(record)


def way_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("auth-sidecar: signing in with")]
    assert len(lines) == 1, stderr
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wsl_opens_the_windows_browser_with_wslview(verbs):
    record = fake_launcher(verbs, "wslview")
    p = verbs.run("login", env={"WSL_DISTRO_NAME": "Ubuntu", "SSH_CONNECTION": "10.0.0.9 5000 10.0.0.5 22"})
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"Signed in as {ALICE}\n"
    assert way_line(p.stderr) == ("auth-sidecar: signing in with the Windows browser: "
                                  "WSL (WSL_DISTRO_NAME=Ubuntu): the Windows browser through wslview")
    assert "auth-sidecar: waiting for the browser (Ctrl-C to cancel)" in p.stderr
    argv = json.load(open(record))
    assert len(argv) == 1 and "/authorize?" in argv[0] and "&state=" in argv[0], argv


def test_wsl_from_proc_version_uses_explorer_when_there_is_no_wslview(verbs):
    record = fake_launcher(verbs, "explorer.exe", status=1)  # explorer.exe exits 1 when it worked
    fake = verbs.tmp / "proc-version-wsl"
    fake.write_text("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1)\n")
    p = verbs.run("login", env={"AUTH_SIDECAR_TEST_PROC_VERSION": str(fake)})
    assert p.returncode == 0, p.stderr
    assert "WSL (/proc/version mentions Microsoft): the Windows browser through explorer.exe" in way_line(p.stderr)
    argv = json.load(open(record))
    assert len(argv) == 1 and argv[0].startswith("https://"), argv


def test_wsl_cmd_start_gets_the_url_escaped_for_cmd(verbs):
    record = fake_launcher(verbs, "cmd.exe", uncaret=True)
    p = verbs.run("login", "--scope", "User.Read", env={"WSL_INTEROP": "/run/WSL/1_interop"})
    assert p.returncode == 0, p.stderr
    assert "through cmd.exe" in way_line(p.stderr)
    argv = json.load(open(record))
    assert argv[:2] == ["/c", "start"] and len(argv) == 3, argv
    url = argv[2]
    assert "^&" in url and re.search(r"(?<!\^)&", url) is None, url  # every & escaped: nothing runs after it
    assert "%^" in url and re.search(r"%(?!\^)", url) is None, url  # no %NAME% can expand


def test_over_ssh_without_a_display_the_device_code_is_used(verbs, mock):
    proc = verbs.start("login", env={**verbs.env, "SSH_CONNECTION": "10.0.0.9 5000 10.0.0.5 22"})
    lines = read_stderr_until(proc, lambda line: "expires in" in line)
    mock.admin.device("approve", "latest")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, (lines, err)
    assert out == f"Signed in as {ALICE}\n"
    assert lines[0] == ("auth-sidecar: signing in with a device code: over SSH (SSH_CONNECTION is set) with no "
                        "forwarded display; --browser --redirect-port N for a browser through ssh -L, "
                        "--paste to sign in in any browser and paste back the address")
    code = [line for line in lines if "enter the code" in line]
    assert len(code) == 1 and re.fullmatch(r"auth-sidecar: to sign in, open https://\S+/devicelogin and enter the code "
                                           r"[A-Z0-9-]+", code[0]), lines
    # Not a terminal: plain lines, no carriage return, no colour.
    everything = "\n".join(lines) + err
    assert "\r" not in everything and "\x1b" not in everything
    assert re.search(r"the code expires in \d+ min \(Ctrl-C to cancel\)", everything)


def test_headless_without_ssh_uses_the_device_code_and_says_why(verbs, mock):
    proc = verbs.start("login", env=verbs.env)
    lines = read_stderr_until(proc, lambda line: "enter the code" in line)
    mock.admin.device("approve", "latest")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert lines[0].startswith("auth-sidecar: signing in with a device code: no display (DISPLAY, WAYLAND_DISPLAY), "
                               "no $BROWSER and no SSH session to forward a port through"), lines
    assert lines[0].endswith("--paste to sign in in any browser and paste back the address"), lines


def test_a_display_or_browser_wins_and_the_flags_force_a_way(verbs, mock):
    browser = fake_launcher(verbs, "xdg-open")
    p = verbs.run("login", env={"DISPLAY": ":0"})
    assert p.returncode == 0, p.stderr
    assert way_line(p.stderr) == "auth-sidecar: signing in with the browser: a display (DISPLAY=:0)"
    assert os.path.exists(browser)
    os.remove(browser)
    proc = verbs.start("login", "--device-code", env={**verbs.env, "DISPLAY": ":0"})
    lines = read_stderr_until(proc, lambda line: "enter the code" in line)
    mock.admin.device("approve", "latest")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and lines[0] == "auth-sidecar: signing in with a device code: --device-code was given"
    assert not os.path.exists(browser)
    both = verbs.run("login", "--browser", "--device-code")
    assert both.returncode == USAGE and "exclude each other" in both.stderr


def test_a_fixed_redirect_port_prints_the_exact_ssh_forwarding_command(verbs):
    port = free_port()
    env = {**verbs.env, "SSH_CONNECTION": "10.1.2.3 50000 10.9.8.7 22", "USER": "me"}
    proc = verbs.start("login", "--redirect-port", str(port), env=env)
    lines = read_stderr_until(proc, lambda line: "waiting for the sign-in" in line)
    assert lines[0] == f"auth-sidecar: signing in with a browser you open: the redirect port is fixed ({port}) for a forwarded browser"
    assert f"auth-sidecar: from another machine, first forward the sign-in redirect: ssh -L {port}:127.0.0.1:{port} me@10.9.8.7" in lines
    url = next(line for line in lines if line.startswith("https://"))
    assert f"redirect_uri=http%3A%2F%2Flocalhost%3A{port}&" in url
    done = subprocess.run([sys.executable, BROWSER, url], env={**env, "SCRIPTED_BROWSER_WAIT": "1"},
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and out == f"Signed in as {ALICE}\n", err


def test_the_redirect_port_key_fixes_the_port_too(verbs):
    port = free_port()
    verbs.write_config(redirectPort=port)
    proc = verbs.start("login", env={**verbs.env, "SSH_CONNECTION": "10.1.2.3 50000 10.9.8.7 22"})
    lines = read_stderr_until(proc, lambda line: "waiting for the sign-in" in line)
    proc.kill()
    proc.wait()
    assert any(f"ssh -L {port}:127.0.0.1:{port} " in line for line in lines), lines
    status = json.loads(verbs.run("status", "--output", "json").stdout)
    assert status["configuration"]["redirectUri"] == f"http://localhost:{port}"
    bad = verbs.run("login", "--redirect-port", "70000")
    assert bad.returncode == USAGE


@pytest.mark.parametrize("code,text", [(53003, "Access has been blocked by Conditional Access policies."),
                                       (50005, "User tried to log in to a device from a platform that's currently "
                                               "not supported through Conditional Access policy.")])
def test_a_refused_device_code_names_the_alternatives(verbs, mock, code, text):
    mock.admin.fault(endpoint="token:device_code", type="status", status=400, times=-1,
                     body={"error": "invalid_grant", "error_description": f"AADSTS{code}: {text}",
                           "error_codes": [code]})
    p = verbs.run("login", env={"SSH_CONNECTION": "10.1.2.3 50000 10.9.8.7 22", "USER": "me"})
    assert p.returncode == FAILURE, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"auth-sidecar: the tenant blocks sign-in with a device code (AADSTS{code}: Conditional Access). "), last
    assert "'auth-sidecar login --paste'" in last
    assert "'auth-sidecar login --browser --redirect-port 8400' after 'ssh -L 8400:127.0.0.1:8400 me@10.9.8.7'" in last
    assert "agent forwarding" in last


def pty_login(verbs: Verbs, mock, env: dict) -> str:
    """`login --device-code` with stderr on a pty: what the terminal showed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([verbs.binary, "login", "--device-code"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 20
    while shown.count(b"\rauth-sidecar: waiting for the sign-in") < 2 and time.monotonic() < deadline:
        if select.select([master], [], [], 0.5)[0]:
            try:
                shown += os.read(master, 4096)
            except OSError:
                break
    mock.admin.device("approve", "latest")
    out, _ = proc.communicate(timeout=20)
    while select.select([master], [], [], 0.2)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.returncode == 0 and out == f"Signed in as {ALICE}\n".encode(), shown
    return shown.decode()


def test_on_a_terminal_the_countdown_rewrites_one_line_in_colour(verbs, mock):
    shown = pty_login(verbs, mock, {**verbs.env, "TERM": "xterm"})
    assert "enter the code \x1b[1m" in shown, shown
    ticks = re.findall(r"\rauth-sidecar: waiting for the sign-in; the code expires in (\d+):(\d\d) \(Ctrl-C to cancel\)", shown)
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), shown  # one line, rewritten as the seconds pass
    assert shown.count("the code expires in") == len(ticks)  # never as separate lines


def test_no_color_keeps_the_terminal_plain(verbs, mock):
    shown = pty_login(verbs, mock, {**verbs.env, "TERM": "xterm", "NO_COLOR": "1"})
    assert "\x1b" not in shown, shown
    assert re.search(r"\rauth-sidecar: waiting for the sign-in; the code expires in \d+:\d\d ", shown), shown  # still a terminal


def test_kubectl_credential_says_the_same_when_the_device_code_is_refused(verbs, mock):
    mock.admin.fault(endpoint="token:device_code", type="status", status=400, times=-1,
                     body={"error": "invalid_grant", "error_codes": [53003],
                           "error_description": "AADSTS53003: Access has been blocked by Conditional Access policies."})
    info = {"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "spec": {"interactive": True}}
    p = verbs.run("kubectl-credential", env={"KUBERNETES_EXEC_INFO": json.dumps(info)})
    assert p.returncode == FAILURE and p.stdout == "", p.stderr
    assert "blocks sign-in with a device code (AADSTS53003" in p.stderr and "agent forwarding" in p.stderr
