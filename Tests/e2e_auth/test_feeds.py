"""Package feeds and container registries with the real programs (issue 50): pip and uv
(`--keyring-provider subprocess`) install from the mock's package index through the `keyring`
name, twine uploads to it through the Python package's keyring backend, skopeo inspects and
copies from the mock's registry through `docker-credential-auth-sidecar`, and `exec` runs
azure-identity's credentials against endpoints that live as long as the child.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse

import pytest

from auth_e2e import ALICE
from test_adapters import claims, graph_me
from test_verbs import Verbs, verbs  # noqa: F401 (fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "mock"))
from mock_idp import pkgindex, registry  # noqa: E402

DEVOPS_DEFAULT = "499b84ac-1321-427f-aa17-267ca6975798/.default"
VENV_BIN = os.path.dirname(sys.executable)
ACR_USER = "00000000-0000-0000-0000-000000000000"


def tool(name: str) -> str:
    path = os.path.join(VENV_BIN, name)
    if os.path.exists(path):
        return path
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed (scripts/setup.sh installs it)")
        pytest.skip(f"{name} is not installed")
    return found


class Feeds:
    """One test's sidecar configuration (packageFeeds, containerRegistries), a signed-in user,
    and a bin directory with the multi-call names linked to the binary, first on PATH."""

    def __init__(self, verbs: Verbs):
        self.verbs, self.mock = verbs, verbs.mock
        self.netloc = urllib.parse.urlsplit(self.mock.url).netloc
        self.index = f"https://feeduser@{self.netloc}/pypi/simple/"
        verbs.write_config(packageFeeds={self.mock.url + "/pypi/": DEVOPS_DEFAULT}, containerRegistries=[self.netloc])
        self.bin = verbs.tmp / "bin"
        self.bin.mkdir()
        for name in ("keyring", "docker-credential-auth-sidecar"):
            os.symlink(verbs.binary, self.bin / name)
        # only our keyring: the venv's real one (keyring is a test dependency) stays off PATH
        # requests (pip, twine) prefers REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE to --cert: all name the mock's CA
        ca = {name: self.mock.ca_file for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "SSL_CERT_FILE")}
        self.env = {**verbs.env, **ca, "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin"}
        verbs.ok("login")

    def run(self, args, env=None, timeout=120, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(args, env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kw)

    def count(self, name: str) -> int:
        return self.mock.admin.count(name)


@pytest.fixture
def feeds(verbs) -> Feeds:
    return Feeds(verbs)


# ---- keyring: the command line -------------------------------------------------------------

def test_keyring_answers_feeds_and_nothing_else(feeds):
    keyring = str(feeds.bin / "keyring")
    p = feeds.run([keyring, "get", feeds.mock.url + "/pypi/simple/", "someone"])
    assert p.returncode == 0, p.stderr
    token = p.stdout.strip()
    assert p.stdout == token + "\n" and claims(token)["aud"] == DEVOPS_DEFAULT.split("/")[0]
    # the host alone (pip and uv ask it second), uv's --mode creds, keyring 25's JSON
    assert feeds.run([keyring, "get", feeds.netloc, "someone"]).stdout.strip() == token
    creds = feeds.run([keyring, "get", feeds.mock.url + "/pypi/simple/", "--mode", "creds"])
    assert creds.returncode == 0 and creds.stdout.splitlines() == [ALICE, token]
    as_json = feeds.run([keyring, "--mode", "creds", "--output", "json", "get", feeds.mock.url + "/pypi/"])
    assert json.loads(as_json.stdout) == {"username": ALICE, "password": token}
    # Azure Artifacts' hosts always; never http, never another host or path: not found, exit 1
    assert claims(feeds.run([keyring, "get", "https://pkgs.dev.azure.com/org/_packaging/f/pypi/simple/", "u"])
                  .stdout.strip())["aud"] == DEVOPS_DEFAULT.split("/")[0]
    for service in ["https://example.com/simple/", "http://" + feeds.netloc + "/pypi/simple/",
                    feeds.mock.url + "/pypi2/simple/", feeds.mock.url + "/", "https://pkgs.dev.azure.com.evil/x/",
                    f"https://{feeds.netloc}.evil/pypi/"]:
        p = feeds.run([keyring, "get", service, "someone"])
        assert (p.returncode, p.stdout) == (1, ""), (service, p)
    assert feeds.run([keyring, "set", "https://example.com/", "u"]).returncode == 2
    assert feeds.run([keyring, "get", "only-service"]).returncode == 2  # no username and no --mode creds


def test_keyring_signed_out_is_not_found_with_a_hint(feeds):
    feeds.verbs.ok("logout")
    p = feeds.run([str(feeds.bin / "keyring"), "get", feeds.mock.url + "/pypi/simple/", "u"])
    assert (p.returncode, p.stdout) == (1, "") and "auth-sidecar login" in p.stderr


# ---- pip, uv, twine --------------------------------------------------------------------------

def test_pip_installs_through_keyring_subprocess(feeds, tmp_path):
    target = tmp_path / "pip-target"
    p = feeds.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-deps",
                   "--target", str(target), "--index-url", feeds.index, "--keyring-provider", "subprocess",
                   "--cert", feeds.mock.ca_file, "demo-feed-pkg"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert (target / "demo_feed_pkg" / "__init__.py").read_text() == "VALUE = 42\n"
    # without the keyring name on PATH the feed refuses pip
    bare = feeds.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-deps",
                      "--no-input", "--target", str(tmp_path / "bare"), "--index-url", feeds.index,
                      "--keyring-provider", "subprocess", "--cert", feeds.mock.ca_file, "demo-feed-pkg"],
                     env={"PATH": "/usr/bin:/bin"})
    assert bare.returncode != 0 and not (tmp_path / "bare" / "demo_feed_pkg").exists()


def test_uv_installs_through_keyring_subprocess(feeds, tmp_path):
    uv = tool("uv")
    target = tmp_path / "uv-target"
    p = feeds.run([uv, "pip", "install", "--no-cache", "--python", sys.executable, "--target", str(target),
                   "--index-url", feeds.index, "--keyring-provider", "subprocess", "demo-feed-pkg"],
                  env={"SSL_CERT_FILE": feeds.mock.ca_file, "UV_NATIVE_TLS": "0", "UV_CACHE_DIR": str(tmp_path / "uv-cache")})
    assert p.returncode == 0, p.stdout + p.stderr
    assert (target / "demo_feed_pkg" / "__init__.py").read_text() == "VALUE = 42\n"


def keyring_entry_point(tmp_path) -> str:
    """A site directory declaring the clients/python package's `keyring.backends` entry point
    (as its installed wheel does), for PYTHONPATH."""
    site = tmp_path / "site"
    info = site / "auth_sidecar_keyring-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: auth-sidecar-keyring\nVersion: 0.0\n")
    with open(os.path.join(ROOT, "clients", "python", "pyproject.toml")) as f:
        assert 'auth_sidecar = "auth_sidecar.keyring_backend"' in f.read()  # the entry point the wheel declares
    (info / "entry_points.txt").write_text("[keyring.backends]\nauth_sidecar = auth_sidecar.keyring_backend\n")
    return f"{site}:{os.path.join(ROOT, 'clients', 'python', 'src')}"


def test_twine_uploads_through_the_keyring_backend(feeds, tmp_path):
    twine = tool("twine")
    dist = tmp_path / "dist"
    dist.mkdir()
    wheel = dist / "uploaded_pkg-2.0.0-py3-none-any.whl"
    wheel.write_bytes(pkgindex.build_wheel("uploaded_pkg", "2.0.0", 7))
    env = {**feeds.env, "PYTHONPATH": keyring_entry_point(tmp_path), "AUTH_SIDECAR_BIN": feeds.verbs.binary,
           "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    env.pop("PYTHON_KEYRING_BACKEND", None)
    which = subprocess.run([sys.executable, "-c", "import keyring; print(type(keyring.get_keyring()).__name__)"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert "SidecarKeyring" in which.stdout, which
    p = subprocess.run([twine, "upload", "--non-interactive", "--disable-progress-bar", "--repository-url",
                        feeds.mock.url + "/pypi/upload/", "--cert", feeds.mock.ca_file, str(wheel)],
                       env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    # the uploaded wheel is served by the index now: pip installs it through the keyring name
    target = tmp_path / "target"
    p = feeds.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-deps",
                   "--target", str(target), "--index-url", feeds.index, "--keyring-provider", "subprocess",
                   "--cert", feeds.mock.ca_file, "uploaded-pkg"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert (target / "uploaded_pkg" / "__init__.py").read_text() == "VALUE = 7\n"


def test_pip_keyring_provider_import_uses_the_backend(feeds, tmp_path):
    env = {**feeds.env, "PYTHONPATH": keyring_entry_point(tmp_path), "AUTH_SIDECAR_BIN": feeds.verbs.binary,
           "PATH": "/usr/bin:/bin"}  # no keyring name on PATH: the backend asks the binary itself
    env.pop("PYTHON_KEYRING_BACKEND", None)
    target = tmp_path / "target"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--no-deps",
                        "--target", str(target), "--index-url", feeds.index, "--keyring-provider", "import",
                        "--cert", feeds.mock.ca_file, "demo-feed-pkg"], env=env, capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (target / "demo_feed_pkg" / "__init__.py").read_text() == "VALUE = 42\n"


def test_nothing_is_written_in_plaintext(feeds, tmp_path):
    token = feeds.run([str(feeds.bin / "keyring"), "get", feeds.mock.url + "/pypi/", "u"]).stdout.strip()
    assert token
    for root, _, files in os.walk(feeds.verbs.tmp):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or os.path.getsize(path) > 1 << 22:
                continue
            with open(path, "rb") as f:
                data = f.read()
            # the test's cache is plaintext by configuration (cacheProtection); nothing else holds the token
            if path != feeds.verbs.cache:
                assert token.encode() not in data, path


# ---- docker-credential-auth-sidecar, skopeo -------------------------------------------------

def helper(feeds, action: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(feeds.bin / "docker-credential-auth-sidecar"), action], input=text, env=feeds.env,
                          capture_output=True, text=True, timeout=60)


def test_credential_helper_exchanges_and_keeps_the_refresh_token(feeds):
    before = feeds.count("acr:exchange")
    p = helper(feeds, "get", feeds.netloc + "\n")
    assert p.returncode == 0, p.stderr
    answer = json.loads(p.stdout)
    assert answer["ServerURL"] == feeds.netloc and answer["Username"] == ACR_USER
    rt = claims(answer["Secret"])
    assert rt["grant_type"] == "refresh_token" and rt["aud"] == feeds.netloc
    assert feeds.count("acr:exchange") == before + 1
    again = helper(feeds, "get", "https://" + feeds.netloc)
    assert json.loads(again.stdout)["Secret"] == answer["Secret"]
    kept = feeds.count("acr:exchange") == before + 1  # kept in the kernel keyring, when the kernel allows it
    assert helper(feeds, "erase", feeds.netloc).returncode == 0
    helper(feeds, "get", feeds.netloc)
    assert feeds.count("acr:exchange") == before + (3 if not kept else 2)
    helper(feeds, "erase", feeds.netloc)
    assert helper(feeds, "list", "").stdout.strip() == "{}"
    assert helper(feeds, "store", json.dumps({"ServerURL": feeds.netloc, "Username": "x", "Secret": "y"})).returncode == 0


def test_credential_helper_never_answers_other_registries(feeds):
    before = feeds.count("acr:exchange")
    for server in ["https://index.docker.io/v1/", "ghcr.io", "http://" + feeds.netloc, "127.0.0.1", "evil.azurecr.io.example.com",
                   "a.b.azurecr.io", "user@" + feeds.netloc]:
        p = helper(feeds, "get", server)
        assert (p.returncode, p.stdout.strip()) == (1, "credentials not found in native keychain"), (server, p)
    assert feeds.count("acr:exchange") == before
    assert helper(feeds, "store", json.dumps({"ServerURL": "ghcr.io", "Username": "x", "Secret": "y"})).returncode == 1


def test_docker_config_prints_and_writes_cred_helpers(feeds, tmp_path):
    printed = json.loads(feeds.verbs.ok("docker-config", "myreg.azurecr.io"))
    assert printed == {"credHelpers": {feeds.netloc: "auth-sidecar", "myreg.azurecr.io": "auth-sidecar"}}
    assert feeds.verbs.run("docker-config", "ghcr.io").returncode == 1
    auth = tmp_path / "containers" / "auth.json"
    assert feeds.verbs.run("docker-config", "--write", str(auth)).returncode == 0
    assert json.loads(auth.read_text()) == {"credHelpers": {feeds.netloc: "auth-sidecar"}}
    assert oct(auth.stat().st_mode & 0o777) == "0o600"
    auth.write_text(json.dumps({"auths": {"other.io": {"auth": "eA=="}}, "credHelpers": {"x.io": "pass"}}))
    assert feeds.verbs.run("docker-config", "--write", str(auth)).returncode == 0
    assert json.loads(auth.read_text()) == {"auths": {"other.io": {"auth": "eA=="}},
                                            "credHelpers": {"x.io": "pass", feeds.netloc: "auth-sidecar"}}


def skopeo_setup(feeds, tmp_path):
    skopeo = tool("skopeo")
    certs = tmp_path / "certs"
    certs.mkdir()
    shutil.copy(feeds.mock.ca_file, certs / "ca.crt")
    auth = tmp_path / "auth.json"
    feeds.verbs.ok("docker-config", "--write", str(auth))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"default": [{"type": "insecureAcceptAnything"}]}))
    env = {"REGISTRY_AUTH_FILE": str(auth), "XDG_RUNTIME_DIR": str(feeds.verbs.tmp / "run"),
           "CONTAINERS_REGISTRIES_CONF": str(tmp_path / "registries.conf")}
    (tmp_path / "registries.conf").write_text("")
    return skopeo, str(certs), str(auth), str(policy), env


def test_skopeo_inspects_and_copies_through_the_helper(feeds, tmp_path):
    skopeo, certs, auth, policy, env = skopeo_setup(feeds, tmp_path)
    image = f"docker://{feeds.netloc}/{registry.REPOSITORY}:{registry.TAG}"
    p = feeds.run([skopeo, "inspect", "--authfile", auth, "--cert-dir", certs, image], env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["Digest"] == registry._digest(registry.MANIFEST)
    dest = tmp_path / "copied"
    p = feeds.run([skopeo, "--policy", policy, "copy", "--authfile", auth, "--src-cert-dir", certs, image, f"dir:{dest}"],
                  env=env)
    assert p.returncode == 0, p.stderr
    for digest, blob in registry.BLOBS.items():
        assert (dest / digest.split(":", 1)[1]).read_bytes() == blob
    # without the helper on PATH the registry refuses skopeo
    bare = feeds.run([skopeo, "inspect", "--authfile", auth, "--cert-dir", certs, image], env={**env, "PATH": "/usr/bin:/bin"})
    assert bare.returncode != 0
    helper(feeds, "erase", feeds.netloc)


# ---- exec ---------------------------------------------------------------------------------

CHILD = r"""
import json, os, sys
from azure.identity import DefaultAzureCredential, ManagedIdentityCredential
out = {"endpoint": os.environ["IDENTITY_ENDPOINT"], "azd": os.environ["AZD_AUTH_ENDPOINT"],
       "path0": os.environ["PATH"].split(":")[0]}
out["mi"] = ManagedIdentityCredential().get_token("https://graph.microsoft.com/.default").token
out["dac"] = DefaultAzureCredential(exclude_cli_credential=True, exclude_developer_cli_credential=True,
                                    exclude_powershell_credential=True).get_token("https://graph.microsoft.com/.default").token
print(json.dumps(out))
sys.exit(int(sys.argv[1]))
"""


def port_open(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex((parts.hostname, parts.port)) == 0


def test_exec_serves_azure_identity_in_the_child_only(feeds):
    env = {k: v for k, v in feeds.env.items() if not k.startswith(("IDENTITY_", "MSI_", "AZD_", "AZURE_"))}
    p = subprocess.run([feeds.verbs.binary, "exec", "--", sys.executable, "-c", CHILD, "3"], env=env,
                       capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert p.returncode == 3, p.stderr
    out = json.loads(p.stdout)
    assert graph_me(feeds.mock, out["mi"]).json()["userPrincipalName"] == ALICE
    assert graph_me(feeds.mock, out["dac"]).status == 200
    assert os.path.islink(out["path0"] + "/az") is False  # the az shim's directory is gone
    assert not os.path.exists(out["path0"])
    assert not port_open(out["endpoint"]) and not port_open(out["azd"])


LEGACY_AZURE_IDENTITY = os.path.join(os.path.dirname(VENV_BIN), "legacy", "azure-identity-1.6.1")

LEGACY_CHILD = r"""
import json, os, sys
import azure.identity
from azure.identity import ManagedIdentityCredential
from azure.identity._credentials.app_service import AppServiceCredential
credential = ManagedIdentityCredential()
token = credential.get_token("https://graph.microsoft.com/.default")
print(json.dumps({"version": azure.identity.__version__, "kind": type(credential._credential).__name__,
                  "endpoint": os.environ["MSI_ENDPOINT"], "identity": "IDENTITY_ENDPOINT" in os.environ,
                  "token": token.token, "expires_on": token.expires_on}))
"""


def legacy_azure_identity() -> str:
    if not os.path.isfile(os.path.join(LEGACY_AZURE_IDENTITY, "azure", "identity", "_version.py")):
        if os.environ.get("CI"):
            pytest.fail(f"{LEGACY_AZURE_IDENTITY} is missing (scripts/setup.sh installs it)")
        pytest.skip("azure-identity 1.6.1 is not installed (scripts/setup.sh)")
    return LEGACY_AZURE_IDENTITY


@pytest.mark.parametrize("only_msi", [True, False], ids=["only-MSI_", "all-variables"])
def test_exec_serves_an_older_azure_identity_over_msi_endpoint(feeds, only_msi):
    """azure-identity 1.6.1 takes MSI_ENDPOINT/MSI_SECRET (before IDENTITY_*, which it also
    knows) and speaks App Service's api-version 2017-09-01, parsing `expires_on` as the date
    App Service answered; with only MSI_* left in the child, or with everything exec sets."""
    env = {k: v for k, v in feeds.env.items() if not k.startswith(("IDENTITY_", "MSI_", "AZD_", "AZURE_"))}
    env["PYTHONPATH"] = legacy_azure_identity()
    script = ("import os\n" + "for n in ('IDENTITY_ENDPOINT', 'IDENTITY_HEADER'): os.environ.pop(n)\n"
              if only_msi else "") + LEGACY_CHILD
    before = feeds.count("token")
    p = subprocess.run([feeds.verbs.binary, "exec", "--", sys.executable, "-c", script], env=env,
                       capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert (out["version"], out["kind"], out["identity"]) == ("1.6.1", "AppServiceCredential", not only_msi)
    assert graph_me(feeds.mock, out["token"]).json()["userPrincipalName"] == ALICE
    assert abs(out["expires_on"] - claims(out["token"])["exp"]) <= 1  # the date string read back to the second
    assert not port_open(out["endpoint"])
    assert feeds.count("token") - before <= 1


def test_exec_msi_endpoint_speaks_the_2017_protocol_only_with_its_header(feeds):
    probe = (
        "import json, os, urllib.request as u, urllib.error as e\n"
        "def get(version, header, secret, extra=''):\n"
        "    q = u.Request(os.environ['MSI_ENDPOINT'] + '?api-version=' + version + '&resource=https://graph.microsoft.com' + extra,"
        " headers={header: secret})\n"
        "    try:\n"
        "        with u.urlopen(q) as r: return [r.status, json.loads(r.read())]\n"
        "    except e.HTTPError as x: return [x.code, json.loads(x.read())]\n"
        "s = os.environ['MSI_SECRET']\n"
        "print(json.dumps({'same': [os.environ['MSI_ENDPOINT'] == os.environ['IDENTITY_ENDPOINT'], s == os.environ['IDENTITY_HEADER']],\n"
        "  'ok': get('2017-09-01', 'secret', s), 'new': get('2019-08-01', 'X-IDENTITY-HEADER', s),\n"
        "  'wrong': get('2017-09-01', 'secret', s[:-1] + ('0' if s[-1] != '0' else '1')),\n"
        "  'other_door': get('2017-09-01', 'X-IDENTITY-HEADER', s), 'other_door2': get('2019-08-01', 'secret', s),\n"
        "  'user_assigned': get('2017-09-01', 'secret', s, '&clientid=abc'), 'bad_version': get('2018-02-01', 'X-IDENTITY-HEADER', s)}))\n")
    p = feeds.verbs.run("exec", "--", sys.executable, "-c", probe)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["same"] == [True, True]
    status, body = out["ok"]
    assert status == 200 and sorted(body) == ["access_token", "expires_on", "resource", "token_type"]
    assert body["resource"] == "https://graph.microsoft.com" and body["token_type"] == "Bearer"
    import calendar, time
    assert body["expires_on"].endswith(" +00:00") and len(body["expires_on"]) == len("06/20/2019 02:57:58 +00:00")
    parsed = calendar.timegm(time.strptime(body["expires_on"][:-7], "%m/%d/%Y %H:%M:%S"))
    assert parsed == claims(body["access_token"])["exp"]
    status, new = out["new"]
    assert status == 200 and int(new["expires_on"]) == parsed and "client_id" in new
    assert [out[k][0] for k in ("wrong", "other_door", "other_door2", "user_assigned", "bad_version")] == [401, 401, 401, 400, 400]
    assert "clientid" in out["user_assigned"][1]["message"]


def test_exec_token_env_scope_limit_and_status(feeds):
    p = feeds.verbs.run("exec", "--token-env", "GRAPH_TOKEN=https://graph.microsoft.com/.default", "--", "sh", "-c",
                        'echo "$GRAPH_TOKEN"; exit 5')
    assert p.returncode == 5 and graph_me(feeds.mock, p.stdout.strip()).status == 200
    limited = feeds.verbs.run("exec", "--scope", "https://graph.microsoft.com/.default", "--", sys.executable, "-c",
                              "import os, urllib.request as u, urllib.error as e\n"
                              "def get(r):\n"
                              "    q = u.Request(os.environ['IDENTITY_ENDPOINT'] + '?api-version=2019-08-01&resource=' + r,"
                              " headers={'X-IDENTITY-HEADER': os.environ['IDENTITY_HEADER']})\n"
                              "    try: return u.urlopen(q).status\n"
                              "    except e.HTTPError as x: return x.code\n"
                              "print(get('https://graph.microsoft.com'), get('https://management.azure.com'))\n"
                              "import shutil; print(shutil.which('az') is None or 'auth-sidecar-exec' not in shutil.which('az'))")
    assert limited.returncode == 0, limited.stderr
    assert limited.stdout.split() == ["200", "403", "True"]
    assert feeds.verbs.run("exec", "--", "/no/such/program").returncode == 127


def test_exec_forwards_signals(feeds):
    proc = subprocess.Popen([feeds.verbs.binary, "exec", "--", "sh", "-c", 'trap "exit 42" TERM; echo ready; while :; do sleep 0.1; done'],
                            env=feeds.verbs.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 42


SIGNAL_CHILD = r"""
import signal, sys, time
# every signal taken by sigtimedwait, one at a time as the kernel delivers it (a Python handler
# would run once for two deliveries close together), with who sent it
watched = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)
signal.pthread_sigmask(signal.SIG_BLOCK, watched)
counts = {"INT": 0, "QUIT": 0, "TERM": 0}
print("ready", flush=True)
deadline = None
while deadline is None or time.monotonic() < deadline:
    info = signal.sigtimedwait(watched, 0.02)
    if info is None:
        continue
    name = signal.Signals(info.si_signo).name[3:]
    counts[name] += 1
    print("got", name, "code", info.si_code, "pid", info.si_pid, flush=True)
    if name == "TERM" and deadline is None:
        deadline = time.monotonic() + 1.0  # a second TERM, if one comes, arrives in this second
print("INT=%(INT)d QUIT=%(QUIT)d TERM=%(TERM)d" % counts, flush=True)
sys.exit(7)
"""


class Terminal:
    """A program on a pseudo-terminal of its own (its session, its foreground process group),
    as a shell's foreground job: what the user types, and what it printed."""

    def __init__(self, argv: list[str], env: dict):
        import pty
        self.pid, self.master = pty.fork()
        if self.pid == 0:  # the child: a new session whose controlling terminal is the pty
            try:
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        import termios
        attributes = termios.tcgetattr(self.master)
        attributes[3] &= ~termios.ECHO  # what is typed (^C) is not mixed into what the program prints
        termios.tcsetattr(self.master, termios.TCSANOW, attributes)
        self.output = ""

    def read_until(self, needle: str, count: int = 1, timeout: float = 30) -> str:
        """The output once `needle` is in it `count` times."""
        import select
        import time
        deadline = time.monotonic() + timeout
        while self.output.count(needle) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"not {count} {needle!r} in {self.output!r}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # EIO: every process holding the terminal is gone
                    chunk = b""
                assert chunk, f"the terminal closed before {needle!r}: {self.output!r}"
                self.output += chunk.decode(errors="replace")
        return self.output

    def wait(self, timeout: float = 30) -> int:
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.master)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"exec did not exit: {self.output!r}")


def test_exec_terminal_signals_reach_the_child_once(feeds):
    """Ctrl-C and Ctrl-\\ on the terminal go to the whole foreground group, exec and its child:
    exec does not send them again (the child would see two). A SIGTERM sent to exec's pid
    alone is forwarded, once. The kernel merges a second delivery of a signal the child has
    not yet taken: exec is held stopped while a key is pressed, until the child has taken
    the terminal's signal, so a second one from exec would show every time."""
    import time
    term = Terminal([feeds.verbs.binary, "exec", "--", sys.executable, "-c", SIGNAL_CHILD], feeds.verbs.env)
    term.read_until("ready\r\n")
    presses = 2
    for number in range(1, presses + 1):
        for key, name in ((b"\x03", "INT"), (b"\x1c", "QUIT")):  # Ctrl-C, Ctrl-\\
            os.kill(term.pid, signal.SIGSTOP)
            os.write(term.master, key)
            term.read_until(f"got {name} code 128 ", count=number)  # the terminal's, taken
            os.kill(term.pid, signal.SIGCONT)  # exec takes the terminal's signal now
            time.sleep(0.5)  # and a forwarded one would arrive in this time
    os.kill(term.pid, signal.SIGTERM)  # kill -TERM <exec pid>
    out = term.read_until("TERM=")
    assert term.wait() == 7, out
    assert f"INT={presses} QUIT={presses} TERM=1" in out, out
    # the terminal's from the kernel (SI_KERNEL), the TERM from exec (SI_USER, its pid)
    assert out.count("got INT code 128 pid 0") == presses and out.count("got QUIT code 128 pid 0") == presses, out
    assert f"got TERM code 0 pid {term.pid}" in out, out


# ---- packaging ------------------------------------------------------------------------------

def test_install_feed_links_makes_both_names_and_replaces_nothing(sidecar_bin, tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "auth-sidecar").symlink_to(sidecar_bin)
    script = os.path.join(ROOT, "scripts", "install-feed-links.sh")
    for _ in range(2):  # a second run leaves the links as they are
        run = subprocess.run(["bash", script, str(prefix)], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0 and run.stderr == "", run.stderr
    helper_link = prefix / "bin" / "docker-credential-auth-sidecar"
    keyring_dir = prefix / "share" / "auth-sidecar" / "keyring-shim" / "bin"
    assert os.readlink(helper_link) == "auth-sidecar" and os.listdir(keyring_dir) == ["keyring"]
    assert os.path.realpath(keyring_dir / "keyring") == os.path.realpath(sidecar_bin)
    # started by those names, the binary answers as them
    version = subprocess.run([str(helper_link), "version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("docker-credential-auth-sidecar")
    usage = subprocess.run([str(keyring_dir / "keyring"), "--help"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == 0 and "--keyring-provider subprocess" in usage.stdout
    # a real keyring there is never replaced
    (keyring_dir / "keyring").unlink()
    (keyring_dir / "keyring").write_text("#!/bin/sh\n")
    run = subprocess.run(["bash", script, str(prefix)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "left as it is" in run.stderr
    assert (keyring_dir / "keyring").read_text() == "#!/bin/sh\n"
