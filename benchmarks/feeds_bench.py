#!/usr/bin/env python3
"""The cost of getting a token through the `keyring` name and `docker-credential-auth-sidecar`,
cached (no agent, alice signed in, her token and the registry's refresh token already kept):

  1. `pip download` from the mock's package index with `--keyring-provider subprocess` (our
     `keyring` first on PATH), side by side with the same command given the token in the URL;
  2. `skopeo inspect` of the mock registry's image through `credHelpers` (the helper), side by
     side with `--creds 00000000-0000-0000-0000-000000000000:REFRESH_TOKEN` (the token given);
  3. each name alone, spawn to exit (`keyring get URL USER`, `docker-credential-auth-sidecar get`).

The two sides of 1 and 2 take turns going first. Target: the difference (the overhead of getting
the token) at most 20 ms. Prints a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/feeds_bench.py [--binary PATH] [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import urllib.parse

from benchlib.harness import DEFAULT_BINARY, machine, pct
from benchlib.mock import MockSession
from verbs_bench import spawn_to_exit

DEVOPS_DEFAULT = "499b84ac-1321-427f-aa17-267ca6975798/.default"
IMAGE = "demo/hello:1.0"


def log(msg: str) -> None:
    print("feeds_bench: " + msg, file=sys.stderr, flush=True)


def ms(values: list[float]) -> str:
    return "%.1f / %.1f" % (statistics.median(values) * 1e3, pct(values, 90) * 1e3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    skopeo = shutil.which("skopeo")
    bench = MockSession(a.binary, keep=a.keep)
    try:
        bench.start_mock()
        bench.sign_in()
        env = bench.verb_env()
        netloc = urllib.parse.urlsplit(bench.url).netloc
        config_path = os.path.join(env["XDG_CONFIG_HOME"], "auth-sidecar", "config.json")
        with open(config_path) as f:
            config = json.load(f)
        config.update(packageFeeds={bench.url + "/pypi/": DEVOPS_DEFAULT}, containerRegistries=[netloc])
        with open(config_path, "w") as f:
            json.dump(config, f)
        bindir = os.path.join(bench.tmp, "bin")
        os.makedirs(bindir)
        for name in ("keyring", "docker-credential-auth-sidecar"):
            os.symlink(bench.binary, os.path.join(bindir, name))
        env = dict(env, PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin", AUTH_SIDECAR_NO_AGENT="1")
        keyring = os.path.join(bindir, "keyring")
        helper = os.path.join(bindir, "docker-credential-auth-sidecar")

        # the names alone
        _, p = spawn_to_exit([keyring, "get", bench.url + "/pypi/simple/", "u"], env)
        token = p.stdout.decode().strip()
        if p.returncode != 0 or not token:
            raise RuntimeError("keyring: %r" % p.stderr)
        _, p = spawn_to_exit([helper, "get"], env, netloc.encode())
        if p.returncode != 0:
            raise RuntimeError("helper: %r" % p.stderr)
        refresh = json.loads(p.stdout)["Secret"]
        keyring_alone = [spawn_to_exit([keyring, "get", bench.url + "/pypi/simple/", "u"], env)[0] for _ in range(a.runs * 2)]
        helper_alone = [spawn_to_exit([helper, "get"], env, netloc.encode())[0] for _ in range(a.runs * 2)]
        log("keyring alone %s ms, helper alone %s ms (median / p90)" % (ms(keyring_alone), ms(helper_alone)))

        # pip download, through keyring and given the token
        dest = os.path.join(bench.tmp, "pip-dest")
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
               "--cert", bench.ca_file, "-d", dest, "demo-feed-pkg"]
        via_keyring = pip + ["--index-url", f"https://feeduser@{netloc}/pypi/simple/", "--keyring-provider", "subprocess"]
        direct = pip + ["--index-url", f"https://feeduser:{token}@{netloc}/pypi/simple/"]
        pip_keyring, pip_direct = [], []
        for i in range(a.runs):
            for first in ((via_keyring, pip_keyring), (direct, pip_direct))[:: 1 if i % 2 == 0 else -1]:
                shutil.rmtree(dest, ignore_errors=True)
                t, p = spawn_to_exit(first[0], env)
                if p.returncode != 0:
                    raise RuntimeError("pip: %s" % p.stderr.decode()[-500:])
                first[1].append(t)
        log("pip download: keyring %s ms, token given %s ms" % (ms(pip_keyring), ms(pip_direct)))

        rows = [("`keyring get URL USER` alone", ms(keyring_alone), "", ""),
                ("`docker-credential-auth-sidecar get` alone", ms(helper_alone), "", ""),
                ("`pip download` (1 wheel)", ms(pip_keyring), ms(pip_direct),
                 "%+.1f" % ((statistics.median(pip_keyring) - statistics.median(pip_direct)) * 1e3))]
        if skopeo:
            certs = os.path.join(bench.tmp, "certs")
            os.makedirs(certs)
            shutil.copy(bench.ca_file, os.path.join(certs, "ca.crt"))
            auth = os.path.join(bench.tmp, "auth.json")
            with open(auth, "w") as f:
                json.dump({"credHelpers": {netloc: "auth-sidecar"}}, f)
            empty = os.path.join(bench.tmp, "empty-auth.json")
            with open(empty, "w") as f:
                f.write("{}")
            conf = os.path.join(bench.tmp, "registries.conf")
            open(conf, "w").close()
            senv = dict(env, CONTAINERS_REGISTRIES_CONF=conf)
            image = f"docker://{netloc}/{IMAGE}"
            via_helper = [skopeo, "inspect", "--raw", "--authfile", auth, "--cert-dir", certs, image]
            given = [skopeo, "inspect", "--raw", "--authfile", empty, "--cert-dir", certs,
                     "--creds", "00000000-0000-0000-0000-000000000000:" + refresh, image]
            sk_helper, sk_given = [], []
            for i in range(a.runs):
                for first in ((via_helper, sk_helper), (given, sk_given))[:: 1 if i % 2 == 0 else -1]:
                    t, p = spawn_to_exit(first[0], senv)
                    if p.returncode != 0:
                        raise RuntimeError("skopeo: %s" % p.stderr.decode()[-500:])
                    first[1].append(t)
            log("skopeo inspect: helper %s ms, token given %s ms" % (ms(sk_helper), ms(sk_given)))
            rows.append(("`skopeo inspect --raw`", ms(sk_helper), ms(sk_given),
                         "%+.1f" % ((statistics.median(sk_helper) - statistics.median(sk_given)) * 1e3)))
        print(machine())
        print()
        print("| figure (%d runs) | through the name, ms (median / p90) | token given, ms (median / p90) | overhead, ms (medians) |"
              % a.runs)
        print("|---|---|---|---|")
        for row in rows:
            print("| %s | %s | %s | %s |" % row)
        return 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
