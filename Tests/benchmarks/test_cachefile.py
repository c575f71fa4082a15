"""benchlib.cachefile: the synthetic accounts of the 10,001-account file, and expiring alice's
access token, on a small cache in MSAL's cross-SDK format."""
import json
import os
import time

import pytest

from benchlib.cachefile import add_synthetic_accounts, expire_access_tokens, read_json, valid_token_left
from benchlib.mock import ALICE, CLIENT_ID

HOME = "a1.t1"


def alice_cache(path, expires_in=3600):
    common = {"home_account_id": HOME, "environment": "login.example", "client_id": CLIENT_ID}
    doc = {
        "Account": {"k-acc": dict(common, username=ALICE, realm="t1", local_account_id="a1",
                                  authority_type="MSSTS", client_info="e30")},
        "AccessToken": {"k-at": dict(common, credential_type="AccessToken", realm="t1", secret="at",
                                     target="User.Read openid profile",
                                     expires_on=str(int(time.time()) + expires_in),
                                     extended_expires_on=str(int(time.time()) + expires_in))},
        "RefreshToken": {"k-rt": dict(common, credential_type="RefreshToken", secret="rt")},
        "IdToken": {"k-it": dict(common, credential_type="IdToken", realm="t1", secret="it")},
        "AuthSidecar": {"currentAccount": HOME},
    }
    with open(path, "w") as f:
        json.dump(doc, f)
    return doc


def test_synthetic_accounts_come_first_and_look_like_msal_entries(tmp_path):
    src, dst = tmp_path / "cache.json", tmp_path / "big.json"
    alice_cache(src)
    size = add_synthetic_accounts(str(src), str(dst), 3, "https://127.0.0.1:1")
    assert size == os.path.getsize(dst)
    doc = read_json(str(dst))
    for section in ("Account", "AccessToken", "RefreshToken", "IdToken"):
        entries = list(doc[section].values())
        assert len(entries) == 4
        assert entries[-1]["home_account_id"] == HOME           # the real account last
        assert len({e["home_account_id"] for e in entries}) == 4
    users = [a["username"] for a in doc["Account"].values()]
    assert users == ["user00000@contoso.com", "user00001@contoso.com", "user00002@contoso.com", ALICE]
    at = list(doc["AccessToken"].values())[0]
    assert at["target"] == "User.Read openid profile" and at["secret"].count(".") == 2
    key = list(doc["AccessToken"])[0]
    assert key == "-".join([at["home_account_id"], "login.example", "accesstoken", CLIENT_ID, "t1",
                            "User.Read openid profile"]).lower()
    assert doc["AuthSidecar"] == {"currentAccount": HOME}      # the current account kept
    assert oct(os.stat(dst).st_mode & 0o777) == "0o600"


def test_expire_access_tokens(tmp_path):
    path = tmp_path / "cache.json"
    alice_cache(path)
    assert valid_token_left(str(path))
    expire_access_tokens(str(path))
    at = read_json(str(path))["AccessToken"]["k-at"]
    assert int(at["expires_on"]) <= time.time() + 61
    assert not valid_token_left(str(path))


def test_a_cache_without_alice_is_refused(tmp_path):
    path = tmp_path / "cache.json"
    path.write_text(json.dumps({"Account": {}}))
    with pytest.raises(RuntimeError, match="no account"):
        expire_access_tokens(str(path))
