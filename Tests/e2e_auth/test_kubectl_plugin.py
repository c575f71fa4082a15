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


ARC_CLUSTER = ("/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/"
               "Microsoft.Kubernetes/connectedClusters/arc-1")


def arc_guard(auth: str, arm_id: str) -> bool:
    """What an Azure Arc-enabled cluster's guard checks of kubelogin's PoP credential (sent after
    `Bearer `): a JWS signed by the JWK in its `cnf`, whose RFC 7638 thumbprint is the access
    token's `cnf.kid`, `u` the cluster's ARM id, `ts` within 5 minutes. Written from kubelogin's
    format (pkg/internal/pop) with PyJWT, not from the sidecar's code."""
    import time

    import jwt

    import shr_verifier
    if not auth.startswith("Bearer "):
        return False
    shr = auth[len("Bearer "):]
    try:
        header = jwt.get_unverified_header(shr)
        jwk = jwt.decode(shr, options={"verify_signature": False})["cnf"]["jwk"]
        payload = jwt.decode(shr, key=jwt.PyJWK(jwk, algorithm=header["alg"]).key, algorithms=["RS256"])
        token = jwt.decode(payload["at"], options={"verify_signature": False})
    except (jwt.PyJWTError, KeyError, TypeError):
        return False
    return (header.get("typ") == "pop" and token.get("cnf", {}).get("kid") == shr_verifier.jwk_thumbprint(jwk)
            and payload.get("u") == arm_id and abs(time.time() - payload.get("ts", 0)) < 300
            and not any(k in jwk for k in ("d", "p", "q")))


def test_an_azure_arc_cluster_takes_the_pop_credential_and_refuses_a_bearer_token(verbs, mock, kube_api: KubeAPI, tmp_path):
    """kubelogin's `--pop-enabled --pop-claims "u=<ARM id>"`: the credential is a signed HTTP
    request with `u` the cluster's ARM id (the claims also as `client_claims`), signed with the
    cache's PoP key; the real kubectl sends it and the Arc-like API server accepts it, and
    refuses the same run with a bearer token."""
    import jwt
    kube_api.check = lambda auth: arc_guard(auth, ARC_CLUSTER)
    verbs.ok("login")
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", verbs.binary, args=("--pop-claims", f"u={ARC_CLUSTER}"))
    pods = kubectl(verbs, kubeconfig, "get", "pods", "-o", "name")
    assert pods.returncode == 0, pods.stderr
    assert pods.stdout.strip() == "pod/hello"
    shr = kube_api.seen[-1][len("Bearer "):]
    payload = jwt.decode(shr, options={"verify_signature": False})
    assert payload["client_claims"] == f"u={ARC_CLUSTER}" and "m" not in payload and "p" not in payload
    assert jwt.decode(payload["at"], options={"verify_signature": False})["aud"] == AKS
    form = mock.admin.log("token:refresh_token")[-1]["form"]
    assert form["token_type"] == "pop" and form["req_cnf"]
    # The same cluster with a bearer token (no --pop-claims): refused.
    bearer = kube_api.kubeconfig(tmp_path / "kubeconfig-bearer", verbs.binary)
    refused = kubectl(verbs, bearer, "get", "pods", "-o", "name")
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr + refused.stdout
    # Another cluster's ARM id: refused too.
    other = kube_api.kubeconfig(tmp_path / "kubeconfig-other", verbs.binary, args=("--pop-claims", f"u={ARC_CLUSTER}-other"))
    assert kubectl(verbs, other, "get", "pods", "-o", "name").returncode != 0
    # kubelogin's rule: u is required, every pair key=value.
    for bad in ("x=1", "u=", "u"):
        usage = verbs.run("kubectl-credential", "--pop-claims", bad)
        assert usage.returncode == 64 or usage.returncode == 2, (bad, usage.returncode, usage.stderr)
        assert "--pop-claims" in usage.stderr and usage.stdout == ""
