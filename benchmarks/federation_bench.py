#!/usr/bin/env python3
"""Workload identity federation in CI (issue #37): an app token as a CI step gets it, side by
side in one run, against the same mock (mock) and the same stand-in CI issuer (a
Kubernetes-style token file, mock/mock_idp/workload_issuer.py):

1. `az account get-access-token --resource https://management.azure.com` through the `az`
   shim, a fresh process each time, with only the CI variables set (AZURE_CLIENT_ID,
   AZURE_TENANT_ID, AZURE_AUTHORITY_HOST, AZURE_FEDERATED_TOKEN_FILE; no configuration file,
   no agent): the app token cached after the first exchange;
2. azure-identity's `WorkloadIdentityCredential().get_token(...)` in a fresh Python process
   each time, the same variables (what a CI step running a Python tool pays: the import, the
   token file, the exchange at the token endpoint; it keeps no cache between processes).

Azure CLI's own `az login --federated-token` cannot be measured here (it takes the assertion
once and has no mock to sign in to). Prints a machine line and a Markdown table on stdout;
progress on stderr.

Usage: python3 benchmarks/federation_bench.py [--binary PATH] [--runs N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib.harness import DEFAULT_BINARY, log, machine, missing_binary, pct
from benchlib.report import markdown_table, ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "mock"))

from mock_idp.testing import AdminClient, start_mock, stop_mock  # noqa: E402
from mock_idp.workload_issuer import WorkloadIssuer  # noqa: E402

APP = "5e1f0000-0000-4000-8000-00000000ab01"
TENANT = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
ARM = "https://management.azure.com"
PYTHON_STEP = ("from azure.identity import WorkloadIdentityCredential\n"
               "WorkloadIdentityCredential(disable_instance_discovery=True).get_token('%s/.default')\n" % ARM)


def timed(argv: list[str], env: dict, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {p.stderr.strip()[:500]}")
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    if problem := missing_binary(a.binary):
        print(problem, file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="federation-bench-")
    url, ca_file, mock = start_mock(os.path.join(tmp, "mock-idp"))
    issuer = WorkloadIssuer(lifetime=3600).start()
    try:
        admin = AdminClient(url, ca_file)
        admin.federation(client_id=APP, issuer=issuer.url, subject=issuer.subject)
        token_file = os.path.join(tmp, "azure-identity-token")
        issuer.write_token_file(token_file)
        shim = os.path.join(tmp, "az-shim")
        os.makedirs(shim)
        os.symlink(os.path.abspath(a.binary), os.path.join(shim, "az"))
        home = os.path.join(tmp, "home")
        for d in ("home", "config", "run"):
            os.makedirs(os.path.join(tmp, d), mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "ACTIONS_ID_TOKEN", "AUTH_SIDECAR"))}
        env.update({"SSL_CERT_FILE": ca_file, "REQUESTS_CA_BUNDLE": ca_file, "HOME": home,
                    "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
                    "XDG_RUNTIME_DIR": os.path.join(tmp, "run"), "AUTH_SIDECAR_NO_AGENT": "1",
                    "AZURE_CLIENT_ID": APP, "AZURE_TENANT_ID": TENANT, "AZURE_AUTHORITY_HOST": url,
                    "AZURE_FEDERATED_TOKEN_FILE": token_file, "PATH": f"{shim}:{os.environ['PATH']}"})
        az = [os.path.join(shim, "az"), "account", "get-access-token", "--resource", ARM]
        log("warm-up: the shim's first exchange, then cached", who="federation_bench")
        timed(az, env, 2)
        before = admin.count("token:client_credentials")
        shim_samples = timed(az, env, a.runs)
        shim_exchanges = admin.count("token:client_credentials") - before
        python_runs = max(5, a.runs // 3)
        log(f"azure-identity WorkloadIdentityCredential, {python_runs} fresh processes", who="federation_bench")
        timed([sys.executable, "-c", PYTHON_STEP], env, 1)
        before = admin.count("token:client_credentials")
        python_samples = timed([sys.executable, "-c", PYTHON_STEP], env, python_runs)
        python_exchanges = admin.count("token:client_credentials") - before
        import azure.identity
        shim_median, python_median = statistics.median(shim_samples), statistics.median(python_samples)
        ratio = python_median / shim_median
        print(f"federation_bench shim_ms={shim_median * 1e3:.2f} python_ms={python_median * 1e3:.2f} ratio={ratio:.1f}")
        print()
        print(f"App token in CI (workload identity federation) — {machine()}")
        print()
        rows = [
            (f"`az account get-access-token` through the shim, CI variables only, cached app token, median ({a.runs} runs)",
             ms(shim_median), f"{shim_exchanges} exchanges"),
            ("same, p90", ms(pct(shim_samples, 90)), ""),
            (f"azure-identity {azure.identity.__version__} `WorkloadIdentityCredential().get_token` in a fresh Python "
             f"process, median ({python_runs} runs)", ms(python_median), f"{python_exchanges} exchanges"),
            ("same, p90", ms(pct(python_samples, 90)), ""),
            ("ratio (medians)", f"{ratio:.1f}x", ""),
        ]
        for line in markdown_table(["figure", "time", "token endpoint"], rows):
            print(line)
        return 0 if shim_exchanges == 0 else 1
    finally:
        issuer.stop()
        stop_mock(mock)


if __name__ == "__main__":
    sys.exit(main())
