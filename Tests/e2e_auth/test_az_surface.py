"""The `az` shim as Terraform, the Azure SDKs for C++ and Go and a bare environment call it
(issue #39): no HOME and no XDG_RUNTIME_DIR (the C++ SDK runs `az` with PATH alone),
`az version`, subscriptions as Azure CLI keeps them, and `az login --claims-challenge`.
Shapes are compared with a real Azure CLI 2.91.0's, recorded in Tests/e2e_auth/fixtures/az/.
"""
from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auth_e2e import ALICE, CONTOSO_TID
from test_adapters import claims
from test_az_shim import az, run_az  # noqa: F401 (fixture)
from test_verbs import RunningAgent, Verbs, verbs  # noqa: F401 (fixture)

STORAGE_DEFAULT = "https://storage.azure.com/.default"
BARE_PATH = "/usr/bin:/bin"
SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"
MANYLINUX_CA = "/etc/pki/tls/certs/ca-bundle.crt"


def namespace_prefix() -> list[str]:
    """`unshare` for a mount namespace of the test's own (root: as is; else a user namespace
    mapping this user to root), skipping when the machine allows neither."""
    prefix = ["unshare", "--mount", "--propagation", "private"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here (unshare): the bare-environment runs need one to stand in a home")
    return prefix


class BareUser:
    """The password database's home's .config of the user a command runs as, and /run/user/UID,
    stood in by directories of the test's own inside a mount namespace (nothing outside it
    changes, but for an empty ~/.config made when there is none), and
    the system CA bundle with the mock's CA added (a bare environment names no SSL_CERT_FILE)."""

    def __init__(self, verbs: Verbs, tmp_path: Path):
        self.verbs = verbs
        self.home = tmp_path / "passwd-home"
        self.runtime = tmp_path / "run-user-uid"
        for d in (self.home, self.runtime):
            d.mkdir(mode=0o700)
        (self.home / ".config" / "auth-sidecar").mkdir(parents=True)
        shutil.copy(verbs.config_file, self.home / ".config" / "auth-sidecar" / "config.json")
        # /etc seen through an overlay: the system CA bundle with the mock's CA added, at Debian's
        # path and at the one libcurl builds of manylinux wheels read (DuckDB's azure extension)
        self.etc_upper, self.etc_work = tmp_path / "etc-upper", tmp_path / "etc-work"
        bundle = Path(SYSTEM_CA).read_bytes() + b"\n" + Path(verbs.mock.ca_file).read_bytes()
        for path in (SYSTEM_CA, MANYLINUX_CA):
            target = self.etc_upper / Path(path).relative_to("/etc")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bundle)
        self.etc_work.mkdir()
        self.prefix = namespace_prefix()

    def run(self, argv: list[str], runtime_dir: bool = False, env_path: str = BARE_PATH, timeout=60):
        """`env -i PATH=env_path ARGV` in the namespace; with `runtime_dir`, /run/user/UID is
        self.runtime (else there is none)."""
        # Only the home's .config is stood in (the rest of the home, where a Python may live, stays)
        steps = ['home=$(getent passwd "$(id -u)" | cut -d: -f6)', 'mkdir -p "$home/.config"',
                 'mount --bind "$HOME_SRC/.config" "$home/.config"',
                 'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$ETC_UPPER,workdir=$ETC_WORK" /etc',
                 "mkdir -p /run/user", "mount -t tmpfs -o mode=755 tmpfs /run/user"]
        if runtime_dir:
            steps += ['mkdir -m 700 "/run/user/$(id -u)"', 'mount --bind "$RUNTIME_SRC" "/run/user/$(id -u)"']
        steps.append("exec env -i PATH=" + shlex.quote(env_path) + " " + " ".join(shlex.quote(a) for a in argv))
        env = {"PATH": os.environ["PATH"], "HOME_SRC": str(self.home), "RUNTIME_SRC": str(self.runtime),
               "ETC_UPPER": str(self.etc_upper), "ETC_WORK": str(self.etc_work)}
        return subprocess.run([*self.prefix, "sh", "-ec", " && ".join(steps)], env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def bare(verbs, tmp_path) -> BareUser:
    return BareUser(verbs, tmp_path)


# ---- no HOME, no XDG_RUNTIME_DIR ------------------------------------------------------------

def test_a_bare_environment_finds_the_configuration_in_the_password_databases_home(verbs, mock, az, bare):
    verbs.ok("login")
    p = bare.run([str(az / "az"), "account", "get-access-token", "--output", "json", "--scope", STORAGE_DEFAULT])
    assert p.returncode == 0, p.stderr
    token = json.loads(p.stdout)
    assert claims(token["accessToken"])["aud"] == "https://storage.azure.com" and token["tenant"] == CONTOSO_TID
    shown = bare.run([str(az / "az"), "account", "show", "-o", "json"])
    assert shown.returncode == 0 and json.loads(shown.stdout)["user"]["name"] == ALICE, shown.stderr


def test_a_bare_environment_without_a_configuration_names_the_file_looked_at(verbs, az, bare):
    (bare.home / ".config" / "auth-sidecar" / "config.json").unlink()
    p = bare.run([str(az / "az"), "account", "show"])
    assert p.returncode == 1 and "$XDG_CONFIG_HOME" not in p.stderr, p.stderr
    looked_at = bare.run(["sh", "-c", 'echo "$(getent passwd "$(id -u)" | cut -d: -f6)/.config/auth-sidecar/config.json"'])
    assert looked_at.stdout.strip() in p.stderr, (looked_at.stdout, p.stderr)


def test_a_bare_environment_reaches_the_agent_under_run_user_uid(verbs, mock, az, bare):
    verbs.ok("login")
    socket = bare.runtime / "auth-sidecar" / "agent.sock"
    agent = RunningAgent(verbs.binary, str(socket), verbs.env, verbs.tmp / "agent.log")
    try:
        p = bare.run([str(az / "az"), "account", "get-access-token", "--scope", STORAGE_DEFAULT], runtime_dir=True)
        assert p.returncode == 0, p.stderr
        assert claims(json.loads(p.stdout)["accessToken"])["aud"] == "https://storage.azure.com"
        assert agent.connections == 1  # the shim found the agent at /run/user/UID/auth-sidecar/agent.sock
        without = bare.run([str(az / "az"), "account", "show"], runtime_dir=False)
        assert without.returncode == 0 and agent.connections == 1, without.stderr  # no /run/user/UID: in process
    finally:
        agent.close()


# ---- az version, subscriptions: the recorded real Azure CLI 2.91.0 ----------------------------

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "az" / "subscriptions-2.91.0.json").read_text())


def recorded(name: str) -> dict:
    """A recorded run, its placeholders as the mock's: the user and Contoso's tenant."""
    run = RECORDED["runs"][name]
    return {k: v.replace("USER_NAME", ALICE).replace(RECORDED["tenantId"], CONTOSO_TID) if isinstance(v, str) else v
            for k, v in run.items()}


def test_az_version_is_azure_clis_shape_plus_served_by(verbs, az):
    version = subprocess.run([verbs.binary, "--version"], capture_output=True, text=True).stdout.split()[1]
    out = json.loads(run_az(verbs, az, "version", "-o=json").stdout)
    real = json.loads(recorded("version-json")["stdout"])
    assert out == {**real, "servedBy": "auth-sidecar " + version}  # Azure CLI's members, values as 2.91.0's
    table = run_az(verbs, az, "version", "-o", "table").stdout.splitlines()
    real_table = recorded("version-table")["stdout"].splitlines()
    assert len(table) == len(real_table) and all(ours.startswith(real) for ours, real in zip(table, real_table))
    assert table[0].split()[-1] == "ServedBy" and table[2].endswith("auth-sidecar " + version)
    tsv = run_az(verbs, az, "version", "-o", "tsv").stdout
    # az's columns (the extensions object an empty cell), then servedBy
    assert tsv == recorded("version-tsv")["stdout"].rstrip("\n") + "\tauth-sidecar " + version + "\n"


@pytest.fixture
def subscribed(verbs, mock, az):
    """Alice signed in, the mock's Resource Manager at {url}/arm/ holding the recorded subscriptions."""
    mock.admin.subscriptions(username=ALICE, subscriptions=[
        {"id": s["id"], "name": s["name"], "state": s["state"], "tenant_id": CONTOSO_TID} for s in RECORDED["subscriptions"]])
    verbs.write_config(armEndpoint=mock.url + "/arm/")
    verbs.ok("login")
    return verbs


@pytest.mark.parametrize("name,args", [
    ("show", ["account", "show", "-o=json"]),
    ("show-sub-name", ["account", "show", "--subscription", "contoso dev", "-o", "json"]),
    ("show-unknown", ["account", "show", "--subscription", "nope"]),
    ("list", ["account", "list", "-o=json"]),
    ("list-all", ["account", "list", "--all", "-o", "json"]),
    ("list-table", ["account", "list", "-o", "table"]),
    ("list-tsv", ["account", "list", "-o", "tsv"]),
    ("list-all-table", ["account", "list", "--all", "--output", "table"]),
    ("set-unknown", ["account", "set", "--subscription", "No-Such"]),
])
def test_subscription_commands_print_the_recorded_azure_cli_bytes(subscribed, az, name, args):
    expected = recorded(name)
    p = run_az(subscribed, az, *args)
    assert (p.returncode, p.stdout, p.stderr) == (expected["status"], expected["stdout"], expected["stderr"]), name


def test_account_set_changes_the_default_and_get_access_token_follows_it(subscribed, mock, az, tmp_path):
    first = json.loads(run_az(subscribed, az, "account", "get-access-token", "-o", "json").stdout)
    assert first["subscription"] == RECORDED["subscriptions"][0]["id"] and first["tenant"] == CONTOSO_TID
    shape = json.loads((Path(__file__).parent / "fixtures" / "az" / "get-access-token.json").read_text())
    assert list(first) == shape["keys"] and {k: type(v).__name__ for k, v in first.items()} == shape["types"]
    assert claims(first["accessToken"])["aud"].startswith("https://management.core.windows.net")
    p = run_az(subscribed, az, "account", "set", "--subscription", "Contoso Dev")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    expected = recorded("show-after-set")
    assert run_az(subscribed, az, "account", "show", "--query", "id", "-o", "tsv").stdout == expected["stdout"]
    after = json.loads(run_az(subscribed, az, "account", "get-access-token", "-o", "json").stdout)
    assert after["subscription"] == RECORDED["subscriptions"][1]["id"]
    picked = json.loads(run_az(subscribed, az, "account", "get-access-token", "--subscription",
                               RECORDED["subscriptions"][0]["id"], "-o", "json").stdout)
    assert picked["subscription"] == RECORDED["subscriptions"][0]["id"] and sorted(picked) == sorted(first)
    unknown = run_az(subscribed, az, "account", "get-access-token", "--subscription", "nope")
    assert unknown.returncode == 1 and unknown.stderr == recorded("show-unknown")["stderr"]
    # kept beside the cache, 0600, in azureProfile.json's shape, one file per account
    kept = list(Path(subscribed.cache).parent.glob("azureProfile.*.json"))
    assert len(kept) == 1 and kept[0].stat().st_mode & 0o777 == 0o600
    entries = json.loads(kept[0].read_text())["subscriptions"]
    profile = json.loads(json.dumps(RECORDED["profile"]).replace("USER_NAME", ALICE).replace(RECORDED["tenantId"], CONTOSO_TID))
    assert [{**e, "isDefault": False} for e in entries] == [{**e, "isDefault": False} for e in profile]


def test_list_refresh_reads_resource_manager_again_and_keeps_the_default(subscribed, mock, az):
    run_az(subscribed, az, "account", "set", "--subscription", "Contoso Dev")
    mock.admin.subscriptions(username=ALICE, subscriptions=[
        {"id": s["id"], "name": s["name"], "tenant_id": CONTOSO_TID} for s in RECORDED["subscriptions"][1:]])
    assert len(json.loads(run_az(subscribed, az, "account", "list", "--all").stdout)) == 3  # kept, not listed again
    p = run_az(subscribed, az, "account", "list", "--refresh", "--all")
    assert p.returncode == 0, p.stderr
    assert [(e["name"], e["isDefault"]) for e in json.loads(p.stdout)] == [("Contoso Dev", True), ("Contoso Old", False)]


def test_an_account_without_subscriptions_stays_tenant_level(verbs, mock, az):
    verbs.write_config(armEndpoint=mock.url + "/arm/")
    verbs.ok("login")
    shown = json.loads(run_az(verbs, az, "account", "show").stdout)
    assert shown["id"] == CONTOSO_TID and shown["name"] == "N/A(tenant level account)"
    listed = json.loads(run_az(verbs, az, "account", "list").stdout)
    assert [e["id"] for e in listed] == [CONTOSO_TID] and listed[0]["cloudName"] == "AzureCloud"
    token = json.loads(run_az(verbs, az, "account", "get-access-token").stdout)
    assert token["subscription"] == CONTOSO_TID


def test_nobody_signed_in_lists_nothing_as_az_does(verbs, az):
    p = run_az(verbs, az, "account", "list")
    assert (p.returncode, p.stdout) == (0, "[]\n") and p.stderr == 'WARNING: Please run "az login" to access your accounts.\n'


def test_list_locations_is_refused_with_the_usual_line(verbs, az):
    p = run_az(verbs, az, "account", "list-locations")
    assert p.returncode == 2 and p.stderr.startswith("ERROR: 'az account list-locations' is not answered by this az")


# ---- az login --claims-challenge: azure-identity's advice followed literally ---------------------

def test_azure_identitys_claims_line_can_be_followed_literally(verbs, mock, az):
    from azure.identity import AzureCliCredential, CredentialUnavailableError

    verbs.ok("login")
    wanted = {"access_token": {"acrs": {"essential": True, "value": "c1"}}}
    with pytest.raises(CredentialUnavailableError) as raised:
        AzureCliCredential().get_token_info("https://graph.microsoft.com/.default",
                                            options={"claims": json.dumps(wanted), "tenant_id": CONTOSO_TID})
    message = str(raised.value)
    line = message[message.index("az login --claims-challenge"):]  # "... run the following command (...): az login ..."
    assert f"--tenant {CONTOSO_TID} --scope https://graph.microsoft.com/.default" in line
    mock.admin.log__clear()
    p = subprocess.run(["sh", "-c", line], env={**verbs.env, "PATH": f"{az}:{os.environ['PATH']}"}, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 0 and p.stdout == f"Signed in as {ALICE}\n", p.stderr
    # the sign-ins themselves (the look before the browser opens asks no scope: AuthorizePreflight)
    authorize = [e for e in mock.admin.log(endpoint="authorize") if "scope" in e["query"]]
    assert len(authorize) == 1 and json.loads(authorize[0]["query"]["claims"])["access_token"]["acrs"] == wanted["access_token"]["acrs"]
    assert f"/{CONTOSO_TID}/" in authorize[0]["path"] and "https://graph.microsoft.com/.default" in authorize[0]["query"]["scope"]


@pytest.mark.parametrize("args", [["login"], ["login", "--use-device-code"], ["login", "--tenant", CONTOSO_TID],
                                  ["login", "--claims-challenge", "e30=", "--service-principal"]])
def test_other_az_login_lines_keep_the_refusal(verbs, az, args):
    p = run_az(verbs, az, *args)
    assert p.returncode == 2 and p.stderr.startswith("ERROR: 'az login' is not answered by this az"), p.stderr


def test_auth_sidecar_login_takes_a_claims_challenge(verbs, mock):
    challenge = base64.b64encode(b'{"id_token":{"auth_time":{"essential":true}}}').decode()
    mock.admin.log__clear()
    assert verbs.ok("login", "--claims-challenge", challenge) == f"Signed in as {ALICE}\n"
    sign_ins = [e for e in mock.admin.log(endpoint="authorize") if "scope" in e["query"]]
    assert json.loads(sign_ins[0]["query"]["claims"])["id_token"] == {"auth_time": {"essential": True}}
    bad = verbs.run("login", "--claims-challenge", "%%%")
    assert bad.returncode != 0 and "--claims-challenge" in bad.stderr


# ---- DuckDB's azure extension (the Azure SDK for C++) through the shim, bare environment -------

DUCKDB_SCRIPT = r'''
import glob, os, sys
sys.path[:0] = sys.argv[1].split(os.pathsep)  # where duckdb is installed: nothing in the environment says
import duckdb, duckdb_extension_azure
extension = glob.glob(os.path.join(os.path.dirname(duckdb_extension_azure.__file__), "extensions", "*", "azure.duckdb_extension"))[0]
connection = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
connection.execute("LOAD '%s'" % extension)  # from the PyPI package: no download
account, endpoint = sys.argv[2], sys.argv[3]
connection.execute("CREATE SECRET blob (TYPE azure, PROVIDER credential_chain, CHAIN 'cli', ACCOUNT_NAME '%s', ENDPOINT '%s')"
                   % (account, endpoint))
print(connection.execute("SELECT name, n FROM 'az://data/numbers.csv' ORDER BY n").fetchall())
'''


def test_duckdbs_azure_extension_reads_a_blob_with_the_users_token_from_a_bare_environment(verbs, mock, az, bare, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("duckdb_extension_azure")
    from blob_standin import BlobStandIn, token_claims

    verbs.ok("login")
    tls = os.path.dirname(mock.ca_file)
    blob = BlobStandIn(os.path.join(tls, "server.pem"), os.path.join(tls, "server-key.pem"),
                       {"/data/numbers.csv": b"name,n\ntwo,2\none,1\n"})
    script = tmp_path / "read_blob.py"
    script.write_text(DUCKDB_SCRIPT)
    site = os.pathsep.join(p for p in sys.path if p)
    try:
        # The account URL is https://ACCOUNT.ENDPOINT: "127" + "0.0.1:PORT" names the stand-in.
        p = bare.run([sys.executable, str(script), site, "127", "0.0.1:%d" % blob.port],
                     env_path=f"{az}:{BARE_PATH}", timeout=120)
    finally:
        blob.close()
    assert p.returncode == 0, (p.stdout, p.stderr, blob.refused)
    assert p.stdout.strip() == "[('one', 1), ('two', 2)]"
    assert blob.tokens and not blob.refused
    token = token_claims(blob.tokens[0])
    assert token["aud"].rstrip("/") == "https://storage.azure.com" and token["tid"] == CONTOSO_TID
    assert duckdb.__version__


def test_a_new_sign_in_lists_the_subscriptions_again(subscribed, mock, az):
    assert run_az(subscribed, az, "account", "show", "--query", "name", "-o", "tsv").stdout == "Contoso Production\n"
    kept = list(Path(subscribed.cache).parent.glob("azureProfile.*.json"))
    assert len(kept) == 1
    mock.admin.subscriptions(username=ALICE, subscriptions=[{"id": "44444444-dddd-4000-8000-000000000004", "name": "New"}])
    assert run_az(subscribed, az, "account", "show", "--query", "name", "-o", "tsv").stdout == "Contoso Production\n"
    subscribed.ok("login")  # as az login lists them at each sign-in
    assert not kept[0].exists()
    assert run_az(subscribed, az, "account", "show", "--query", "name", "-o", "tsv").stdout == "New\n"


def test_a_failing_resource_manager_leaves_a_tenant_level_account_and_one_warning(verbs, mock, az):
    mock.admin.subscriptions(username=ALICE, subscriptions=[{"id": RECORDED["subscriptions"][0]["id"], "name": "One"}])
    verbs.write_config(armEndpoint=mock.url + "/no-arm-here/")
    verbs.ok("login")
    first = run_az(verbs, az, "account", "show")
    assert first.returncode == 0 and json.loads(first.stdout)["id"] == CONTOSO_TID
    assert first.stderr.startswith("WARNING: auth-sidecar: cannot list subscriptions (") and "--refresh" in first.stderr
    mock.admin.counts__reset()
    again = run_az(verbs, az, "account", "get-access-token")
    assert again.returncode == 0 and again.stderr == "" and json.loads(again.stdout)["subscription"] == CONTOSO_TID
    assert mock.admin.count("other") == 0  # not asked again
    refresh = run_az(verbs, az, "account", "list", "--refresh")
    assert refresh.returncode == 1 and refresh.stderr.startswith("ERROR: auth-sidecar: cannot list subscriptions: ")
    verbs.write_config(armEndpoint=mock.url + "/arm/")
    fixed = run_az(verbs, az, "account", "list", "--refresh")
    assert fixed.returncode == 0 and [e["name"] for e in json.loads(fixed.stdout)] == ["One"]


# ---- #47 finding 12: a failed listing retried, httpTimeoutSeconds, temporaries, large listings --

def _shown_name(verbs, az) -> str:
    p = run_az(verbs, az, "account", "show", "--query", "name", "-o", "tsv")
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def _wait_for(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_transient_resource_manager_failure_is_retried_in_the_background_at_a_later_call(verbs, mock, az):
    """One 500 at the first az call after a sign-in: tenant-level, as before; within the back-off
    (5 s) no call asks again; the first call after it answers at once and lists in the background,
    and the calls after that see the subscriptions (before: tenant-level until --refresh)."""
    mock.admin.subscriptions(username=ALICE, subscriptions=[{"id": RECORDED["subscriptions"][0]["id"], "name": "One"}])
    verbs.write_config(armEndpoint=mock.url + "/arm/")
    verbs.ok("login")
    mock.admin.fault(endpoint="arm", type="status", status=500, retry_after=None, times=1)
    first = run_az(verbs, az, "account", "show")
    assert first.returncode == 0 and json.loads(first.stdout)["id"] == CONTOSO_TID
    assert first.stderr.startswith("WARNING: auth-sidecar: cannot list subscriptions (") and "500" in first.stderr
    failed_at = time.monotonic()
    kept = json.loads(next(Path(verbs.cache).parent.glob("azureProfile.*.json")).read_text())
    assert kept["subscriptions"] == [] and kept["listingFailed"]["attempts"] == 1
    mock.admin.counts__reset()
    assert _shown_name(verbs, az) == "N/A(tenant level account)"   # within the back-off: not asked
    assert mock.admin.count("arm") == 0
    time.sleep(max(0.0, failed_at + 5.2 - time.monotonic()))
    started = time.monotonic()
    later = run_az(verbs, az, "account", "get-access-token")
    assert later.returncode == 0 and later.stderr == "" and json.loads(later.stdout)["subscription"] == CONTOSO_TID
    assert time.monotonic() - started < 5
    _wait_for(lambda: _shown_name(verbs, az) == "One", 15, "the background listing never kept the subscription")
    assert mock.admin.count("arm") == 2   # tenants, subscriptions: once
    kept = json.loads(next(Path(verbs.cache).parent.glob("azureProfile.*.json")).read_text())
    assert "listingFailed" not in kept and [s["name"] for s in kept["subscriptions"]] == ["One"]


@pytest.mark.time_limit(90)
def test_a_hanging_resource_manager_costs_http_timeout_seconds_once_and_never_blocks_later_calls(verbs, mock, az):
    mock.admin.subscriptions(username=ALICE, subscriptions=[{"id": RECORDED["subscriptions"][0]["id"], "name": "One"}])
    verbs.write_config(armEndpoint=mock.url + "/arm/", httpTimeoutSeconds=2)
    verbs.ok("login")
    mock.admin.fault(endpoint="arm", type="latency", delay_ms=60_000, times=-1)
    try:
        started = time.monotonic()
        first = run_az(verbs, az, "account", "get-access-token")
        first_took = time.monotonic() - started
        assert first.returncode == 0 and json.loads(first.stdout)["subscription"] == CONTOSO_TID
        assert "cannot list subscriptions" in first.stderr
        assert 2 <= first_took < 8, first_took   # httpTimeoutSeconds (2 s), not libcurl's 30 s
        time.sleep(5.2)
        # a call that waited on the listing would now take 20 s
        verbs.write_config(armEndpoint=mock.url + "/arm/", httpTimeoutSeconds=20)
        mock.admin.counts__reset()
        started = time.monotonic()
        later = run_az(verbs, az, "account", "get-access-token")   # past the back-off: the retry hangs in the background
        assert later.returncode == 0 and later.stderr == ""
        assert time.monotonic() - started < 5
        _wait_for(lambda: mock.admin.count("arm") >= 1, 5, "no background retry")
    finally:
        mock.admin.faults__clear()
    print(f"az get-access-token with a hanging ARM: first call {first_took:.2f} s")


def test_temporaries_of_a_killed_profile_rewrite_are_removed_at_the_next_rewrite(subscribed, az):
    assert _shown_name(subscribed, az) == "Contoso Production"
    profile = next(Path(subscribed.cache).parent.glob("azureProfile.*.json"))
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = profile.parent / f".{profile.name}.tmp-{dead.pid}-12345"
    live = profile.parent / f".{profile.name}.tmp-{os.getpid()}-12345"
    for path in (orphan, live):
        path.write_text('{"subscriptions": [')
    p = run_az(subscribed, az, "account", "set", "--subscription", "Contoso Dev")
    assert p.returncode == 0, p.stderr
    assert not orphan.exists() and live.exists()   # a live writer's is left alone
    live.unlink()
    assert _shown_name(subscribed, az) == "Contoso Dev"


@pytest.mark.time_limit(120)
def test_three_thousand_subscriptions_in_one_answer_over_a_mib_or_in_pages(verbs, mock, az):
    subscriptions = [{"id": "%08x-aaaa-4000-8000-%012x" % (i, i), "name": "Subscription %04d" % i} for i in range(3000)]
    mock.admin.subscriptions(username=ALICE, subscriptions=subscriptions)
    verbs.write_config(armEndpoint=mock.url + "/arm/")
    verbs.ok("login")
    mock.admin.config(arm_page_size=0)
    mock.admin.counts__reset()
    listed = run_az(verbs, az, "account", "list", "--all", "-o", "json")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr[:500]
    entries = json.loads(listed.stdout)
    assert len(entries) == 3000 and {e["id"] for e in entries} == {s["id"] for s in subscriptions}
    assert mock.admin.count("arm") == 2   # tenants, then one answer of them all
    # the answer was over 1 MiB (the engine's default limit of an answer)
    one = _arm_subscriptions_bytes(verbs, mock)
    assert one > 1 << 20, one
    mock.admin.config(arm_page_size=100)
    mock.admin.counts__reset()
    refreshed = run_az(verbs, az, "account", "list", "--refresh", "--all", "-o", "json")
    assert refreshed.returncode == 0, refreshed.stderr[:500]
    assert [e["id"] for e in json.loads(refreshed.stdout)] == [e["id"] for e in entries]
    assert mock.admin.count("arm") == 1 + 30   # tenants, then 30 pages by nextLink
    mock.admin.config(arm_page_size=0)


def _arm_subscriptions_bytes(verbs, mock) -> int:
    """The size of the mock's one-answer subscriptions listing, fetched with a token of ours."""
    import urllib.request
    import ssl
    token = json.loads(verbs.ok("token", "--scope", "https://management.core.windows.net//.default", "--output", "json"))
    context = ssl.create_default_context(cafile=mock.ca_file)
    request = urllib.request.Request(mock.url + "/arm/subscriptions?api-version=2022-12-01",
                                     headers={"Authorization": "Bearer " + token["accessToken"]})
    with urllib.request.urlopen(request, context=context) as answer:
        return len(answer.read())
