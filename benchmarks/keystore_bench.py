#!/usr/bin/env python3
"""Cold cached-token time per key store layer (issue #20): a fresh stdio process, spawned,
asked one acquireTokenSilent whose token is in the cache, until its reply, median of N runs.

Layers: plaintext (cacheProtection "plaintext"), keyring (the persistent kernel keyring),
secretService (a headless GNOME Keyring on a private D-Bus session this script starts:
dbus-daemon + gnome-keyring-daemon --unlock; the process loads libsecret and asks it over
D-Bus, or after the first run takes the key's copy in the kernel keyring), secretServiceNoCopy
(the same with `secretServiceKeyCacheSeconds` 0: libsecret in every process), keyFile, keyCommand (`cat KEYFILE`: the cost of one spawn); with `--today-binary PATH`, also
"today": a binary that predates the key store, on the plaintext file (its configuration has no
cacheProtection key), for the before/after figure. The same cache (alice signed in through the
bundled mock) is copied for each layer; the first run of each (which encrypts the copy in place)
is not counted; the runs go round-robin over the layers, so a busy machine slows all alike.

Usage: python3 benchmarks/keystore_bench.py [--binary PATH] [--today-binary PATH] [--runs N] [--layers a,b,...]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

from benchlib.harness import DEFAULT_BINARY, log, machine
from benchlib.mock import CLIENT_ID, SCOPES, MockSession
from benchlib.report import ms

LAYERS = ["plaintext", "keyring", "secretService", "secretServiceNoCopy", "keyFile", "keyCommand"]
SECRET_SERVICE_LAYERS = ("secretService", "secretServiceNoCopy")


def layer_config(bench: MockSession, layer: str) -> str:
    """A configuration for a copy of the signed-in cache, protected by `layer`."""
    directory = os.path.join(bench.tmp, "layer-" + layer)
    os.makedirs(directory, mode=0o700)
    cache = os.path.join(directory, "cache.json")
    shutil.copy(bench.cache, cache)
    # The origin the harness signed in at (https://localhost, proxied), where the cache's tokens are.
    config = {"clientId": CLIENT_ID, "authority": bench.authority, "knownAuthorities": [bench.default_port.host],
              "scopes": SCOPES, "cache": {"path": cache}}
    key = os.path.join(directory, "cache.key")
    with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(os.urandom(32))
    if layer == "keyFile":
        config["cache"]["encryption"] = {"keyFile": key}
    elif layer == "keyCommand":
        config["cache"]["encryption"] = {"keyCommand": ["cat", key]}
    if layer == "secretServiceNoCopy":
        config["cacheProtection"], config["secretServiceKeyCacheSeconds"] = "secretService", 0
    elif layer != "today":
        config["cacheProtection"] = "auto" if layer in ("keyFile", "keyCommand") else layer
    path = os.path.join(directory, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    bench._configs[cache] = path  # the harness's fresh process reads this configuration
    return cache


def forget_keyring_key(description: str) -> None:
    """Removes a key this run put in the persistent keyring (keyctl, when installed)."""
    if not shutil.which("keyctl"):
        return
    ring = subprocess.run(["keyctl", "get_persistent", "@u"], capture_output=True, text=True)
    found = subprocess.run(["keyctl", "search", ring.stdout.strip(), "user", description],
                           capture_output=True, text=True)
    if found.returncode == 0:
        subprocess.run(["keyctl", "unlink", found.stdout.strip(), ring.stdout.strip()], capture_output=True)


class KeyringSession:
    """A private D-Bus session with an unlocked gnome-keyring-daemon (its keyrings in `root`)."""

    def __init__(self, root: str):
        run = os.path.join(root, "run")
        os.makedirs(run, mode=0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=run, XDG_DATA_HOME=os.path.join(root, "data"), HOME=root)
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1",
                                     f"--address=unix:path={run}/bus"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        self.address = self.bus.stdout.readline().decode().strip()
        env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        self.keyring = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env=env, start_new_session=True)
        self.keyring.stdin.write(b"bench")
        self.keyring.stdin.close()
        ask = ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
               "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"]
        deadline = time.monotonic() + 10
        while b"boolean true" not in subprocess.run(ask, env=env, capture_output=True).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError("gnome-keyring-daemon did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        for process in (self.keyring, self.bus):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--layers", default=",".join(LAYERS))
    ap.add_argument("--today-binary", help="a binary from before the key store: adds the 'today' row")
    a = ap.parse_args()
    bench = MockSession(a.binary)
    layers = a.layers.split(",") + (["today"] if a.today_binary else [])
    caches, times = {}, {layer: [] for layer in layers}
    session, envs = None, {}
    try:
        bench.start_mock()
        bench.sign_in()
        plain_env = {k: v for k, v in bench.child_env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        if any(layer in SECRET_SERVICE_LAYERS for layer in layers):
            session = KeyringSession(os.path.join(bench.tmp, "keyring-session"))
        for layer in layers:
            envs[layer] = (dict(plain_env, DBUS_SESSION_BUS_ADDRESS=session.address) if layer in SECRET_SERVICE_LAYERS
                           else plain_env)
        for layer in layers:
            caches[layer] = layer_config(bench, layer)
            bench.binary = a.today_binary if layer == "today" else a.binary
            bench.child_env = envs[layer]
            _, first = bench.sidecar_fresh(caches[layer])  # warm-up: migrates the copy
            if not first.get("result", {}).get("fromCache"):
                raise RuntimeError(f"{layer}: no cached token: {first}")
        for _ in range(a.runs):
            for layer in layers:
                bench.binary = a.today_binary if layer == "today" else a.binary
                bench.child_env = envs[layer]
                t, r = bench.sidecar_fresh(caches[layer])
                if not r.get("result", {}).get("fromCache"):
                    raise RuntimeError(f"{layer}: no cached token: {r}")
                times[layer].append(t)
        rows = [(layer, statistics.median(times[layer]), open(caches[layer], "rb").read(9) == b"auth-side")
                for layer in layers]
    finally:
        if session:
            session.stop()
        if "keyring" in caches:
            forget_keyring_key("auth-sidecar:cache-key:" + caches["keyring"])
        if "secretService" in caches:
            forget_keyring_key("auth-sidecar:secret-service-key:" + caches["secretService"])
        bench.cleanup()
    print(f"machine: {machine()}; {a.runs} runs per layer, round-robin")
    print("| layer | cold cached token (median) | file encrypted |")
    print("|---|---|---|")
    for layer, median, encrypted in rows:
        print(f"| {layer} | {ms(median)} | {'yes' if encrypted else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
