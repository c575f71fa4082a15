"""The cache file both tools read: reading and writing it, expiring the signed-in account's
access tokens, and the 10,001-account copy (synthetic accounts in MSAL's cross-SDK format)."""
from __future__ import annotations

import base64
import json
import os
import random
import time

from .mock import ALICE, CLIENT_ID, CONTOSO_TID


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path: str, doc: dict) -> None:
    tmp = path + ".bench.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def real_home(doc: dict) -> str:
    for acc in doc.get("Account", {}).values():
        if acc.get("username", "").lower() == ALICE:
            return acc["home_account_id"]
    raise RuntimeError(f"no account {ALICE} in the cache")


def expire_access_tokens(path: str) -> None:
    """Make the signed-in account's access tokens expire in 60 s: expired for both tools
    (each treats a token with less than 5 minutes left as expired)."""
    doc = read_json(path)
    home = real_home(doc)
    soon = str(int(time.time()) + 60)
    n = 0
    for at in doc.get("AccessToken", {}).values():
        if at.get("home_account_id") == home:
            at["expires_on"] = soon
            at["extended_expires_on"] = soon
            at.pop("refresh_on", None)
            n += 1
    if not n:
        raise RuntimeError("no access token to expire")
    write_json(path, doc)


def valid_token_left(path: str) -> bool:
    doc = read_json(path)
    home = real_home(doc)
    now = time.time()
    return any(at.get("home_account_id") == home and int(at.get("expires_on", 0)) > now + 900
               for at in doc.get("AccessToken", {}).values())


def fake_jwt(rng: random.Random, claims: dict, sig_len: int) -> str:
    header = b64url(json.dumps({"typ": "JWT", "alg": "RS256", "kid": "bench"}).encode())
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(rng.randbytes(sig_len * 3 // 4 + 3))[:sig_len]
    return f"{header}.{payload}.{sig}"


def add_synthetic_accounts(src: str, dst: str, n: int, url: str) -> int:
    """Write `dst`: the cache `src` plus `n` synthetic accounts, each with an Account, an
    AccessToken, a RefreshToken and an IdToken (both tokens JWT-shaped with decodable claims,
    compact: about 3 KB per account in all, 30 MB for 10,001; the fields other than the
    secrets alone take ~2 KB per account) in MSAL's cross-SDK format, shaped like the real
    account's entries (same client, environment, realm kind, scopes). The real account's
    entries come last in every section, so a linear scan pays for all the others. Returns the
    file size."""
    doc = read_json(src)
    home = real_home(doc)
    rng = random.Random(20261122)
    tmpl = {}
    for section in ("Account", "AccessToken", "RefreshToken", "IdToken"):
        entries = [e for e in doc.get(section, {}).values() if e.get("home_account_id") == home]
        if not entries:
            raise RuntimeError(f"the signed-in account has no {section} entry to copy")
        tmpl[section] = entries[0]
    now = int(time.time())
    synth = {s: {} for s in tmpl}
    for i in range(n):
        uid = "%08x-%04x-4%03x-8%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                                 rng.getrandbits(12), rng.getrandbits(12),
                                                 rng.getrandbits(48))
        tid = CONTOSO_TID
        h = f"{uid}.{tid}"
        user = f"user{i:05d}@contoso.com"
        name = f"Synthetic User {i:05d}"
        acc = dict(tmpl["Account"], home_account_id=h, local_account_id=uid, username=user)
        if "name" in acc:
            acc["name"] = name
        if "client_info" in acc:
            acc["client_info"] = b64url(json.dumps({"uid": uid, "utid": tid}).encode())
        env, realm = acc["environment"], acc["realm"]
        synth["Account"][f"{h}-{env}-{realm}".lower()] = acc

        at = dict(tmpl["AccessToken"], home_account_id=h)
        at["secret"] = fake_jwt(rng, {
            "aud": "https://graph.microsoft.com", "iss": f"{url}/{tid}/v2.0", "exp": now + 3600,
            "oid": uid, "tid": tid, "upn": user, "scp": "User.Read",
            "uti": b64url(rng.randbytes(12))}, 43)
        synth["AccessToken"]["-".join([h, at["environment"], "accesstoken", at["client_id"],
                                       at["realm"], at["target"]]).lower()] = at

        rt = dict(tmpl["RefreshToken"], home_account_id=h)
        rt["secret"] = "0.MOCK." + b64url(rng.randbytes(36))
        synth["RefreshToken"]["-".join([h, rt["environment"], "refreshtoken", rt["client_id"],
                                        rt.get("family_id") or "", rt.get("target", "")]).lower()] = rt

        it = dict(tmpl["IdToken"], home_account_id=h)
        it["secret"] = fake_jwt(rng, {
            "aud": CLIENT_ID, "iss": f"{url}/{tid}/v2.0", "exp": now + 3600, "name": name,
            "oid": uid, "tid": tid, "preferred_username": user}, 43)
        synth["IdToken"]["-".join([h, it["environment"], "idtoken", it["client_id"],
                                   it["realm"], ""]).lower()] = it
    for section, entries in synth.items():
        real = doc.get(section, {})
        entries.update(real)          # the real entries last
        doc[section] = entries
    write_json(dst, doc)
    return os.path.getsize(dst)
