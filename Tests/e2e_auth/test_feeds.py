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
