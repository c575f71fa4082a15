#!/usr/bin/env python3
"""The cost of getting a token through the `keyring` name and `docker-credential-auth-sidecar`,
cached (no agent, alice signed in, her token and the registry's refresh token already kept):

  1. `pip download` from the mock's package index with `--keyring-provider subprocess` (our
     `keyring` first on PATH), side by side with the same command given the token in the URL;
  2. `skopeo inspect` of the mock registry's image through `credHelpers` (the helper), side by
     side with `--creds 00000000-0000-0000-0000-000000000000:REFRESH_TOKEN` (the token given);
  3. each name alone, spawn to exit (`keyring get URL USER`, `docker-credential-auth-sidecar get`).

The two sides of 1 and 2 run as pairs, taking turns going first; the overhead is the median of
the pairs' differences (each pair ran under about the same load), with a distribution-free 95%
interval, in wall time and in CPU time (user + system of the whole process tree, from
getrusage(RUSAGE_CHILDREN): what load on other cores hardly moves). Target: the overhead of
getting the token at most 20 ms. Prints a Markdown table on stdout; progress on stderr.

Usage: python3 benchmarks/feeds_bench.py [--binary PATH] [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import sys
import urllib.parse

from benchlib.harness import DEFAULT_BINARY, machine, pct
from benchlib.mock import MockSession
from verbs_bench import spawn_to_exit

DEVOPS_DEFAULT = "499b84ac-1321-427f-aa17-267ca6975798/.default"
IMAGE = "demo/hello:1.0"
# pip run with two of its own steps timed from inside (what load does not blur): the `keyring`
# call (spawn, wait, read) and the handling of the index's 401 (that call and the second request)
PIP_TIMED = r"""
import atexit, json, os, sys, time
from pip._internal.network import auth
from pip._internal.network import session
spent = {"keyring": 0.0, "answer_401": 0.0, "requests": 0.0}
def timed(function, key):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - start
    return wrapper
auth.KeyRingCliProvider._get_password = timed(auth.KeyRingCliProvider._get_password, "keyring")
auth.MultiDomainBasicAuth.handle_401 = timed(auth.MultiDomainBasicAuth.handle_401, "answer_401")
session.PipSession.request = timed(session.PipSession.request, "requests")
atexit.register(lambda: os.write(2, ("PIP-TIMED " + json.dumps(spent) + "\n").encode()))
from pip._internal.cli.main import main
sys.exit(main())
"""


def log(msg: str) -> None:
    print("feeds_bench: " + msg, file=sys.stderr, flush=True)


def ms(values: list[float]) -> str:
    return "%.1f / %.1f" % (statistics.median(values) * 1e3, pct(values, 90) * 1e3)


def tree_cpu() -> float:
    """User + system seconds of every child process reaped so far (and their reaped children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def paired(sides: tuple[list[str], list[str]], env: dict, runs: int, before=None,
           seen=None) -> list[tuple[float, float, float, float]]:
    """`runs` pairs (wall A, wall B, CPU A, CPU B) in seconds, A first in even pairs, B in odd
    ones; `before` runs ahead of each command (outside the timing); `seen(side, result)` is
    given each run's result."""
    pairs = []
    for i in range(runs):
        measured = {}
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            if before:
                before()
            cpu0 = tree_cpu()
            t, p = spawn_to_exit(sides[side], env)
            cpu = tree_cpu() - cpu0
            if p.returncode != 0:
                raise RuntimeError("%s: %s" % (os.path.basename(sides[side][0]), p.stderr.decode()[-500:]))
            measured[side] = (t, cpu)
            if seen:
                seen(side, p)
        pairs.append((measured[0][0], measured[1][0], measured[0][1], measured[1][1]))
    return pairs


def median_interval(differences: list[float]) -> tuple[float, float, float]:
    """The median of `differences` and a distribution-free 95% interval for it (order
    statistics at the binomial ranks, normal approximation)."""
    d = sorted(differences)
    n = len(d)
    j = max(0, int(math.floor((n - 1.96 * math.sqrt(n)) / 2)))
    return statistics.median(d), d[j], d[n - 1 - j]


def overhead(pairs, column: int) -> str:
    """`+M [lo, hi]` ms: the median paired difference (A - B) of wall (column 0) or CPU (2)."""
    m, lo, hi = median_interval([p[column] - p[column + 1] for p in pairs])
    return "%+.1f [%+.1f, %+.1f]" % (m * 1e3, lo * 1e3, hi * 1e3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=31)
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
        pip = [sys.executable, "-c", PIP_TIMED, "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
               "--cert", bench.ca_file, "-d", dest, "demo-feed-pkg"]
        via_keyring = pip + ["--index-url", f"https://feeduser@{netloc}/pypi/simple/", "--keyring-provider", "subprocess"]
        direct = pip + ["--index-url", f"https://feeduser:{token}@{netloc}/pypi/simple/"]
        inside = {"keyring": [], "answer_401": [], "requests": []}
        given_requests = []

        def pip_timed(side: int, p) -> None:
            line = [x for x in p.stderr.decode().splitlines() if x.startswith("PIP-TIMED ")]
            spent = json.loads(line[-1].split(" ", 1)[1])
            if side == 0:
                for key in inside:
                    inside[key].append(spent[key])
            elif spent["keyring"]:  # (handle_401 is a hook on every response: it returns at once)
                raise RuntimeError("pip given the token asked keyring: %r" % spent)
            else:
                given_requests.append(spent["requests"])

        pip_pairs = paired((via_keyring, direct), env, a.runs, before=lambda: shutil.rmtree(dest, ignore_errors=True),
                           seen=pip_timed)
        log("pip download: overhead %s ms wall, %s ms CPU; inside pip: keyring %s ms, the 401 answered %s ms, "
            "all requests %s ms (token given: %s ms)" % (
                overhead(pip_pairs, 0), overhead(pip_pairs, 2), ms(inside["keyring"]), ms(inside["answer_401"]),
                ms(inside["requests"]), ms(given_requests)))

        rows = [("`keyring get URL USER` alone", ms(keyring_alone), "", "", ""),
                ("`docker-credential-auth-sidecar get` alone", ms(helper_alone), "", "", ""),
                ("`pip download` (1 wheel)", ms([p[0] for p in pip_pairs]), ms([p[1] for p in pip_pairs]),
                 overhead(pip_pairs, 0), overhead(pip_pairs, 2)),
                ("inside `pip download`: its `keyring` call", ms(inside["keyring"]), "", "", ""),
                ("inside `pip download`: the 401 answered (that call, the second request)", ms(inside["answer_401"]), "", "",
                 ""),
                ("inside `pip download`: all its requests", ms(inside["requests"]), ms(given_requests), "", "")]
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
            sk_pairs = paired((via_helper, given), senv, a.runs)
            log("skopeo inspect: overhead %s ms wall, %s ms CPU" % (overhead(sk_pairs, 0), overhead(sk_pairs, 2)))
            rows.append(("`skopeo inspect --raw`", ms([p[0] for p in sk_pairs]), ms([p[1] for p in sk_pairs]),
                         overhead(sk_pairs, 0), overhead(sk_pairs, 2)))
        print(machine())
        print()
        print("| figure (%d pairs) | through the name, ms (median / p90) | token given, ms (median / p90) "
              "| overhead, wall ms (median of pair differences [95%%]) | overhead, CPU ms (same) |" % a.runs)
        print("|---|---|---|---|---|")
        for row in rows:
            print("| %s | %s | %s | %s | %s |" % row)
        return 0
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
