"""The cache encrypted at rest with a key file (`cache.encryption.keyFile`): no token in
clear on disk, the same key reads it after a restart, anything else is refused cleanly."""
from __future__ import annotations

import os

import sidecar as sc


def _key(tmp_path, name="cache.key", mode=0o600) -> str:
    path = tmp_path / name
    path.write_bytes(os.urandom(32))
    os.chmod(path, mode)
    return str(path)


def _encrypted(cache: str, key: str) -> dict:
    return {"path": cache, "encryption": {"keyFile": key}}


def test_tokens_are_encrypted_at_rest_and_survive_a_restart(launch, tmp_path):
    cache, key = str(tmp_path / "enc" / "cache.json"), _key(tmp_path)
    p = launch(cache=_encrypted(cache, key))
    r = p.sign_in()
    stored = open(cache, "rb").read()
    assert stored.startswith(b"auth-sidecar-aes256gcm-v1\n"), stored[:40]
    for secret in (r["accessToken"], r["idToken"], r["account"]["username"]):
        assert secret.encode() not in stored
    assert oct(os.stat(cache).st_mode & 0o777) == "0o600"
    p.kill()

    again = launch(cache=_encrypted(cache, key))
    s = again.silent()
    assert s["fromCache"] and s["accessToken"] == r["accessToken"]


def test_without_the_key_the_cache_is_unavailable_and_untouched(launch, tmp_path):
    cache, key = str(tmp_path / "enc" / "cache.json"), _key(tmp_path)
    launch(cache=_encrypted(cache, key)).sign_in()
    before = open(cache, "rb").read()

    plain = launch(cache=cache)
    e = plain.error("getAccounts", {}, -51005, name="cacheUnavailable")
    assert "encrypted" in e["message"], e
    other = launch(cache=_encrypted(cache, _key(tmp_path, "other.key")))
    other.error("acquireTokenSilent", {"scopes": ["User.Read"]}, -51005, name="cacheUnavailable")
    assert open(cache, "rb").read() == before


def test_a_bad_key_file_is_refused_at_initialize(launch, tmp_path):
    p = launch(initialize=False)
    e = sc.assert_error(p.call("initialize", p.config_for(_encrypted(str(tmp_path / "c.json"), _key(tmp_path, mode=0o644)))),
                        -32602, name="invalidParams")
    assert e["data"]["member"] == "cache.encryption.keyFile", e
    assert "group or others" in e["message"], e
