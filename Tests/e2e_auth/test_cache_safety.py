"""Cache path safety (issue 10, item 2): no symbolic link at the cache path is followed, a
directory others can write is refused with the fix, and no error quotes the file."""
from __future__ import annotations

import hashlib
import os

import sidecar as sc
from auth_e2e import ALICE, read_cache


def digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_a_symlink_planted_at_the_cache_path_is_not_followed(launch, mock, tmp_path):
    # "Another user's" cache with their account in it, and a link to it where ours should be.
    theirs = tmp_path / "theirs" / "cache.json"
    launch(cache=str(theirs), stderr_name="theirs.log").sign_in()
    before = digest(theirs)
    ours = tmp_path / "ours" / "cache.json"
    ours.parent.mkdir(mode=0o700)
    os.symlink(theirs, ours)
    p = launch(cache=str(ours))
    for method, params in [("getAccounts", {}), ("getCurrentAccount", {}), ("acquireTokenSilent", {})]:
        e = p.error(method, params, -51005, name="cacheUnavailable")
        assert str(ours) in e["message"] and "symbolic link" in e["message"], e
        assert ALICE not in e["message"] and "secret" not in e["message"], e
    e = p.error("acquireToken", {"scopes": ["User.Read"]}, -51005, name="cacheUnavailable", timeout=20)
    assert digest(theirs) == before, "the link's target was written"
    assert os.path.islink(ours), "the link is left for the user to remove"
    secrets = [entry["secret"] for entry in read_cache(str(theirs))["RefreshToken"].values()]
    assert not any(s in p.stderr_tail() for s in secrets)


def test_a_directory_others_can_write_is_refused_with_the_fix(launch, mock, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o775)
    path = shared / "cache.json"
    p = launch(cache=str(path))
    e = p.error("acquireToken", {"scopes": ["User.Read"]}, -51005, name="cacheUnavailable", timeout=20)
    assert f"chmod 700 {shared}" in e["message"], e
    assert not path.exists(), "nothing written into a directory others can write"
    os.chmod(shared, 0o700)
    assert p.sign_in()["account"]["username"] == ALICE


def test_a_cache_others_can_write_or_a_parse_error_never_quote_the_file(launch, mock, tmp_path):
    path = tmp_path / "cache" / "cache.json"
    p = launch(cache=str(path))
    p.sign_in()
    os.chmod(path, 0o666)
    e = p.error("getAccounts", {}, -51005, name="cacheUnavailable")
    assert f"chmod 600 {path}" in e["message"], e
    os.chmod(path, 0o600)
    path.write_text('{"RefreshToken": {"k": {"secret": "0.AAAA-PLANTED-SECRET"')
    r = p.call("getAccounts", {})
    sc.check_response(r)
    assert r["error"]["code"] == -51005, r
    assert "PLANTED" not in r["error"]["message"] and "PLANTED" not in str(r["error"]["data"]), r
