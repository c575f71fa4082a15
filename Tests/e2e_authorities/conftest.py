"""Fixtures for the authorities + Graph end-to-end suite.

Reuses Tests/e2e_auth (owned elsewhere, not modified here): its conftest's fixtures
(`sidecar_bin`, `mock_session`, `mock`, `launch`, the per-test time limit) and its helpers
(`auth_e2e.AuthSidecar`, the scripted browser wrapper). The binary: env AUTH_SIDECAR_BIN,
else .build/release/auth-sidecar in this repository; missing -> skipped, unless env CI is set.
"""
from __future__ import annotations

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
E2E_AUTH = os.path.join(TESTS, "e2e_auth")
for path in (os.path.join(os.path.dirname(TESTS), "mock"), os.path.join(TESTS, "e2e"), E2E_AUTH, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

# Load Tests/e2e_auth/conftest.py under its own module name (both files are "conftest").
_spec = importlib.util.spec_from_file_location("e2e_auth_conftest", os.path.join(E2E_AUTH, "conftest.py"))
_auth_conftest = importlib.util.module_from_spec(_spec)
sys.modules["e2e_auth_conftest"] = _auth_conftest
_spec.loader.exec_module(_auth_conftest)

# Re-exported fixtures (pytest collects fixtures defined or imported in a conftest).
sidecar_bin = _auth_conftest.sidecar_bin
mock_session = _auth_conftest.mock_session
mock = _auth_conftest.mock
launch = _auth_conftest.launch
_time_limit = _auth_conftest._time_limit
