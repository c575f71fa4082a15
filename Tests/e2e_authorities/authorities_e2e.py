"""Constants and helpers of the authorities + Graph suite (on top of Tests/e2e_auth/auth_e2e.py)."""
from __future__ import annotations

import base64
import json

from auth_e2e import ALICE, BOB, CLIENT_ID, CONTOSO_TID, QUICK, SCOPES, SIGN_IN  # noqa: F401

# The mock's directory (mock/README.md).
ALICE_OID = "a11ce000-0000-4000-8000-000000000001"
MSA_TID = "9188040d-6c67-4c5b-b112-36a304b66dad"
CAROL = "carol@outlook.example"
CAROL_OID = "00000000-0000-0000-ca20-100000000003"
B2C_TID = "bbbbcccc-1111-dddd-2222-eeee3333ffff"
B2C_TENANT = "fabrikamb2c.onmicrosoft.com"
DAVE = "dave@fabrikam.example"
DAVE_OID = "da7e0000-0000-4000-8000-000000000004"
SUSI = "B2C_1_susi"
EDIT = "B2C_1_edit_profile"
B2C_SCOPES = [f"https://{B2C_TENANT}/api/demo.read"]


def b2c_path(policy: str) -> str:
    return f"/tfp/{B2C_TENANT}/{policy}"


def b2c_home_account_id(policy: str) -> str:
    return f"{DAVE_OID}-{policy.lower()}.{B2C_TID}"


def jwt_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def home_ids(p) -> list[str]:
    return sorted(a["homeAccountId"] for a in p.ok("getAccounts", {})["accounts"])


def token_calls(mock) -> dict:
    """The mock's authorize/token counts (zeros left out)."""
    return {k: v for k, v in mock.admin.counts().items()
            if (k.startswith("token") or k == "authorize") and v}
