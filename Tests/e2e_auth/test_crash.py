"""kill -9 during cache writes: nothing answered is lost, nothing is left behind.

Each round starts the real binary on one cache file (MSAL's format, many accounts), pipelines
`signout` requests (each one a cache write: lock, temp file, rename), and kills the process
with SIGKILL after a random delay. Then: the file still parses; every account whose sign-out
was answered is gone; every account never asked about is intact. At the end a fresh process
writes at once (a dead writer's lock file does not block it) and leaves no temporary file.

Rounds: $CRASH_RUNS (default 100; the issue's full run is 1,000).
"""
from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import time

CLIENT = "00001111-aaaa-2222-bbbb-3333cccc4444"
ENV = "login.microsoftonline.com"
TENANT = "aaaabbbb-0000-cccc-1111-dddd2222eeee"


def make_cache(path: str, n: int) -> list[str]:
    now = int(time.time())
    doc = {"AccessToken": {}, "Account": {}, "IdToken": {}, "RefreshToken": {}, "AppMetadata": {}}
    homes = []
    for i in range(n):
        oid = "%08d-0000-4000-8000-%012d" % (i, i)
        home = f"{oid}.{TENANT}"
        homes.append(home)
        doc["Account"][f"{home}-{ENV}-{TENANT}"] = {
            "home_account_id": home, "environment": ENV, "realm": TENANT, "local_account_id": oid,
            "username": f"user{i}@contoso.com", "authority_type": "MSSTS"}
        doc["AccessToken"][f"{home}-{ENV}-accesstoken-{CLIENT}-{TENANT}-user.read"] = {
            "credential_type": "AccessToken", "secret": "at-%d-" % i + "a" * 1500, "home_account_id": home,
            "environment": ENV, "client_id": CLIENT, "target": "User.Read", "realm": TENANT,
            "cached_at": str(now), "expires_on": str(now + 3600), "extended_expires_on": str(now + 3600)}
        doc["RefreshToken"][f"{home}-{ENV}-refreshtoken-{CLIENT}--"] = {
            "credential_type": "RefreshToken", "secret": "rt-%d" % i, "home_account_id": home,
            "environment": ENV, "client_id": CLIENT, "target": "User.Read"}
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)
    os.chmod(path, 0o600)
    return homes


def accounts_in(path: str) -> set[str]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)  # must parse whatever the moment of the kill
    return {a["home_account_id"] for a in doc["Account"].values()}


def start(binary: str, config: str, tmp_path) -> subprocess.Popen:
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               AUTH_SIDECAR_POLICY_FILE=str(tmp_path / "no-policy.json"))
    return subprocess.Popen([binary, "--config", config], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)


def answered_ids(proc: subprocess.Popen, until: float, stop_after: int = 0) -> set[int]:
    """Ids of the replies read from `proc` until the monotonic time `until` (or, with
    `stop_after`, as soon as that many arrived)."""
    got, buffer = set(), b""
    fd = proc.stdout.fileno()
    while True:
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            reply = json.loads(line)
            if "result" in reply:
                got.add(reply["id"])
        if stop_after and len(got) >= stop_after:
            break
    return got


def write_config(path: str, cache: str) -> None:
    with open(path, "w") as f:
        json.dump({"clientId": CLIENT, "authority": f"https://{ENV}/organizations", "instanceDiscovery": False,
                   "cache": {"path": cache}, "cacheProtection": "plaintext"}, f)


def write_interval(binary: str, cache: str, homes: list[str], tmp_path) -> float:
    """Seconds between two answered sign-outs (one cache write each) on a copy of `cache`: the
    kills below are spread over that span, whatever the cache's size and the machine's speed."""
    copy_dir = tmp_path / "calibration"
    copy_dir.mkdir(mode=0o700)
    copy = str(copy_dir / "cache.json")
    with open(cache, "rb") as source, open(os.open(copy, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as target:
        target.write(source.read())
    config = str(copy_dir / "config.json")
    write_config(config, copy)
    proc = start(binary, config, tmp_path)
    proc.stdin.write(b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "signout",
                                          "params": {"account": {"homeAccountId": h}}}).encode() + b"\n"
                              for i, h in enumerate(homes[-4:])))
    proc.stdin.flush()
    answered_at = []
    while len(answered_at) < 4:
        got = answered_ids(proc, time.monotonic() + 30, stop_after=1)
        assert got, "calibration: a sign-out was not answered"
        answered_at += [time.monotonic()] * len(got)
    proc.stdin.close()
    proc.wait(10)
    return (answered_at[-1] - answered_at[0]) / (len(answered_at) - 1)


def test_kill_9_during_cache_writes_loses_nothing_answered(sidecar_bin, tmp_path):
    rounds = int(os.environ.get("CRASH_RUNS", "100"))
    per_round = 5
    cache = str(tmp_path / "cache" / "cache.json")
    # About 3 MB, so a write (serialise, write, fsync, rename) takes long enough to be cut.
    homes = make_cache(cache, max(rounds * per_round + 20, 1000))
    config = str(tmp_path / "config.json")
    write_config(config, cache)
    # The kill comes 0 to 1.5 writes after the first answer: a fixed span cut writes of a small
    # cache mid-way but, at 1,000 rounds (a 15 MB cache), only ever hit the serialisation before them.
    kill_span = 1.5 * write_interval(sidecar_bin, cache, homes, tmp_path)
    rng = random.Random(1234)
    signed_out: set[str] = set()
    orphans: list[str] = []
    cut_writes = 0
    for r in range(rounds):
        batch = homes[r * per_round:(r + 1) * per_round]
        proc = start(sidecar_bin, config, tmp_path)
        requests = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "signout",
                                        "params": {"account": {"homeAccountId": h}}}).encode() + b"\n"
                            for i, h in enumerate(batch))
        proc.stdin.write(requests)
        proc.stdin.flush()
        # The first write answered (the process is warm), then a kill somewhere in the next ones.
        got = answered_ids(proc, time.monotonic() + 10, stop_after=1)
        got |= answered_ids(proc, time.monotonic() + rng.uniform(0.0, kill_span))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        signed_out |= {batch[i] for i in got}
        # What the killed writer left is gone once the next process has written.
        assert not (set(orphans) & set(os.listdir(os.path.dirname(cache)))), f"round {r}: orphans kept"
        orphans = [n for n in os.listdir(os.path.dirname(cache)) if ".tmp-" in n]
        cut_writes += bool(orphans)
        left = accounts_in(cache)
        assert not (left & signed_out), f"round {r}: an answered sign-out came back"
        untouched = set(homes[(r + 1) * per_round:])
        assert untouched <= left, f"round {r}: accounts nobody asked about were lost"

    print(f"{rounds} rounds, {len(signed_out)} sign-outs answered, {cut_writes} writes cut mid-way "
          f"(kills within {kill_span * 1000:.0f} ms of the first answer)")
    assert cut_writes > 0, "no kill landed inside a write: the test proves nothing"
    # A fresh process writes at once (dead writers' lock files are recovered) and cleans up.
    proc = start(sidecar_bin, config, tmp_path)
    last = homes[-1]
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "signout",
                                 "params": {"account": {"homeAccountId": last}}}).encode() + b"\n")
    proc.stdin.flush()
    assert answered_ids(proc, time.monotonic() + 5) == {1}, "the write after the crashes did not finish"
    proc.stdin.close()
    assert proc.wait(10) == 0
    leftovers = [n for n in os.listdir(os.path.dirname(cache)) if ".tmp-" in n or n.endswith(".lockfile")]
    assert leftovers == [], leftovers
    assert last not in accounts_in(cache)
