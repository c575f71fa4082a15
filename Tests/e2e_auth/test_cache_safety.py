"""Cache path safety (issue 10, item 2): no symbolic link at the cache path is followed, a
directory others can write is refused with the fix, and no error quotes the file. Issue 19:
a cache directory that is itself a symbolic link is refused too, and a cache others can read
is made 0600 with a warning."""
from __future__ import annotations

import hashlib
import os
import stat

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


def test_a_cache_others_can_read_is_made_private_with_a_warning(launch, mock, tmp_path):
    path = tmp_path / "cache" / "cache.json"
    launch(cache=str(path), stderr_name="writer.log").sign_in()
    os.chmod(path, 0o644)  # as older msal-extensions wrote it
    inode = os.stat(path).st_ino
    p = launch(cache=str(path), stderr_name="reader.log")
    assert [a["username"] for a in p.ok("getAccounts")["accounts"]] == [ALICE]
    assert p.silent()["fromCache"] is True
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, oct(os.stat(path).st_mode)
    assert os.stat(path).st_ino == inode, "made private in place, not rewritten"
    warnings = [line for line in p.stderr_text().splitlines() if str(path) in line and "0600" in line]
    assert len(warnings) == 1 and "warning" in warnings[0], p.stderr_text()
    assert "secret" not in warnings[0]


def test_a_symlinked_cache_directory_is_refused(launch, mock, tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    launch(cache=str(real / "cache.json"), stderr_name="real.log").sign_in()
    before = digest(real / "cache.json")
    link = tmp_path / "link"
    link.symlink_to(real)
    p = launch(cache=str(link / "cache.json"))
    for method, params in [("getAccounts", {}), ("getCurrentAccount", {}), ("acquireTokenSilent", {})]:
        e = p.error(method, params, -51005, name="cacheUnavailable")
        assert str(link) in e["message"] and "symbolic link" in e["message"], e
        assert str(real) in e["message"], "the real directory is named as the fix"
    p.error("acquireToken", {"scopes": ["User.Read"]}, -51005, name="cacheUnavailable", timeout=20)
    assert digest(real / "cache.json") == before, "written through the link"
    assert sorted(os.listdir(real)) == ["cache.json"], "a lock file made through the link"
    # Only the directory itself: a link further up the path is the user's own business.
    parent_link = tmp_path / "parent-link"
    parent_link.symlink_to(tmp_path / "real-parent", target_is_directory=True)
    (tmp_path / "real-parent").mkdir(mode=0o700)
    q = launch(cache=str(parent_link / "cache" / "cache.json"))
    assert q.sign_in()["account"]["username"] == ALICE
