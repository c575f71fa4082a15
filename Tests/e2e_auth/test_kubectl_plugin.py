"""kubectl with `auth-sidecar kubectl-credential` (issue #25, item 5), the real kubectl against
the loopback API stand-in (kube_api.py), the plugin behind a shim that counts its runs:

- kubectl keeps the credential for its whole run: the `ExecCredential` carries
  `expirationTimestamp`, and client-go's exec authenticator runs the plugin again only once that
  time has passed or the server answered 401 (nothing is kept between runs: each asks the cache);
- a generic OIDC cluster (kube-apiserver's --oidc-issuer-url/--oidc-client-id) takes the ID
  token: `--id-token`, renewed when it has less than 5 minutes left.
"""
from __future__ import annotations

import datetime
import json
import os
import stat

from kube_api import KubeAPI
from auth_e2e import CLIENT_ID, CONTOSO_TID
from test_adapters import AKS, claims, kube_api, kubectl  # noqa: F401 (fixture)
from test_verbs import Verbs, verbs  # noqa: F401 (fixture)


def counting_plugin(verbs: Verbs, tmp_path) -> tuple[str, str]:
    """(the shim's path, the file it appends one line to per run, with KUBERNETES_EXEC_INFO)."""
    runs, shim = tmp_path / "plugin-runs", tmp_path / "auth-sidecar-shim"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$KUBERNETES_EXEC_INFO" >> "{runs}"\nexec "{verbs.binary}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return str(shim), str(runs)


def plugin_runs(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_one_kubectl_run_asks_the_plugin_once_for_many_requests(verbs, mock, kube_api: KubeAPI, tmp_path):
    shim, runs = counting_plugin(verbs, tmp_path)
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", shim, provide_cluster_info=True)
    verbs.ok("login")
    kube_api.accepted_token = verbs.ok("token", "--scope", f"{AKS}/.default").strip()

    pods = kubectl(verbs, kubeconfig, "get", "pods", "-o", "name")
    assert pods.returncode == 0, pods.stderr
    assert pods.stdout.strip() == "pod/hello"
    assert len(kube_api.seen) >= 3, kube_api.seen  # discovery, then the list
    assert set(kube_api.seen) == {"Bearer " + kube_api.accepted_token}
    info = plugin_runs(runs)
    assert len(info) == 1, info  # one run for every request of this kubectl
    # provideClusterInfo: the plugin is told the cluster (and accepts being told)
    assert info[0]["spec"]["cluster"]["server"] == kube_api.url and info[0]["spec"]["interactive"] is False

    # kubectl keeps nothing between runs: the next one asks again, and the cache answers
    refreshes = mock.admin.count("token:refresh_token")
    again = kubectl(verbs, kubeconfig, "get", "--raw", "/api/v1/namespaces/default/pods")
    assert again.returncode == 0, again.stderr
    assert len(plugin_runs(runs)) == 2 and mock.admin.count("token:refresh_token") == refreshes


def credential_expiry(credential: dict) -> int:
    stamp = datetime.datetime.strptime(credential["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    return int(stamp.replace(tzinfo=datetime.timezone.utc).timestamp())


def test_a_generic_oidc_cluster_gets_the_id_token(verbs, mock, kube_api: KubeAPI, tmp_path):
    verbs.write_config(authority=f"{mock.url}/{CONTOSO_TID}/v2.0", authorityType="oidc", knownAuthorities=[])
    shim, runs = counting_plugin(verbs, tmp_path)
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", shim, args=("--id-token",))
    verbs.ok("login")
    kube_api.accepted_token = json.loads(verbs.ok("token", "--output", "json"))["idToken"]
    assert claims(kube_api.accepted_token)["aud"] == CLIENT_ID

    pods = kubectl(verbs, kubeconfig, "get", "pods", "-o", "name")
    assert pods.returncode == 0, pods.stderr
    assert pods.stdout.strip() == "pod/hello" and len(plugin_runs(runs)) == 1
    assert set(kube_api.seen) == {"Bearer " + kube_api.accepted_token}

    direct = json.loads(verbs.ok("kubectl-credential", "--id-token"))
    assert direct["status"]["token"] == kube_api.accepted_token
    assert credential_expiry(direct) == claims(kube_api.accepted_token)["exp"]


def test_an_id_token_about_to_expire_is_renewed_first(verbs, mock):
    verbs.write_config(authority=f"{mock.url}/{CONTOSO_TID}/v2.0", authorityType="oidc", knownAuthorities=[])
    mock.admin.config(id_token_lifetime=120)  # less than the 5 minutes a credential must have left
    verbs.ok("login")
    cached = json.loads(verbs.ok("token", "--output", "json"))["idToken"]
    refreshes = mock.admin.count("token:refresh_token")
    credential = json.loads(verbs.ok("kubectl-credential", "--id-token"))
    token = credential["status"]["token"]
    assert token != cached and claims(token)["aud"] == CLIENT_ID
    assert mock.admin.count("token:refresh_token") == refreshes + 1
    assert credential_expiry(credential) == claims(token)["exp"]
