"""The cache file's layout (#46): every file beside the cache is named by one type, which makes
the cache's directory (0700) before anything is written next to it. With the broker on no
cache file is written, yet the az shim keeps its subscriptions (azureProfile.ACCOUNT.json) beside
it: `az account get-access-token` must answer, and keep what it listed.
"""
from __future__ import annotations

import json
import os
import stat

from test_broker import broker, broker_env, start_broker  # noqa: F401  (fixtures)
from test_az_shim import az, run_az  # noqa: F401  (az: the fixture)
from test_verbs import verbs  # noqa: F401  (the fixture)


def test_az_get_access_token_with_the_broker_makes_the_cache_directory(verbs, mock, broker, az):  # noqa: F811
    """Broker mode writes no cache file, so nothing made its directory; the az profile kept
    beside it is written all the same, in a directory made 0700, and read back next time."""
    verbs.write_config(broker="required", armEndpoint=mock.url + "/arm/")
    env = broker_env(broker)
    assert verbs.run("login", env=env).returncode == 0
    directory = os.path.dirname(verbs.cache)
    assert not os.path.exists(directory)
    first = run_az(verbs, az, "account", "get-access-token", env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["tokenType"] == "Bearer"
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    kept = [name for name in os.listdir(directory) if name.startswith("azureProfile.")]
    assert len(kept) == 1 and stat.S_IMODE(os.stat(os.path.join(directory, kept[0])).st_mode) == 0o600
    arm = mock.admin.count("other")
    again = run_az(verbs, az, "account", "get-access-token", env=env)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert mock.admin.count("other") == arm  # the kept list: Resource Manager is not asked again
