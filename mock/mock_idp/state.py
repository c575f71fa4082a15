"""All mutable state of the mock: directory (tenants, users, clients), grants, controls.

Everything lives in memory behind one lock; ``State.reset()`` restores the defaults
so a long-lived mock can serve many isolated tests.
"""

import collections
import copy
import threading
import time

MSA_TENANT_ID = "9188040d-6c67-4c5b-b112-36a304b66dad"
DEFAULT_CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
CONTOSO_TENANT_ID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
B2C_TENANT_ID = "bbbbcccc-1111-dddd-2222-eeee3333ffff"
DEFAULT_ISSUERS = ("a", "b")   # generic OpenID Connect issuers at /issuers/{name}

DEFAULT_CONFIG = {
    "default_user": "alice@contoso.com",   # who "signs in" when the browser asks nobody
    "access_token_lifetime": 3600,          # seconds; expires_in
    "ext_expires_in": None,                 # None: same as access_token_lifetime
    "id_token_lifetime": 3600,
    "refresh_token_lifetime": 90 * 86400,   # inactivity window; AADSTS700082 after it
    "refresh_in": None,                     # int: add refresh_in to token responses
    "foci": None,                           # "1": answer with foci (family of client ids)
    "refresh_token_reuse": True,            # False: a rotated-out refresh token is rejected
    "device_code_lifetime": 900,
    "device_code_interval": 5,
    "login_form": False,                    # True: /authorize shows an HTML form (real browser)
    "require_state": True,
    "require_pkce": True,
    "auto_consent": True,                   # interactive sign-in grants the requested scopes
    "declined_scopes": [],                  # scopes left out of every token response
    "b2c_preferred_username": False,        # B2C id tokens carry `emails`, not preferred_username
    "graph_page_size": 10,
    "graph_collection_size": 25,
    "ssh_cert_lifetime": 3600,              # seconds an ssh-cert token's certificate is valid
    "ssh_cert_unconsented_clients": [],     # client ids whose ssh-cert requests need consent
    "pop_require_nonce": False,             # True: a PoP resource wants a nonce it issued (pop.py)
    "arm_page_size": 0,                     # Resource Manager's subscriptions per page (0: one answer)
    "feed_resource": "499b84ac-1321-427f-aa17-267ca6975798",  # the package index's token audience (pkgindex.py)
}


def default_directory():
    tenants = {
        CONTOSO_TENANT_ID: {"id": CONTOSO_TENANT_ID, "domains": ["contoso.onmicrosoft.com", "contoso.com"],
                            "b2c": False, "policies": [], "msa": False},
        MSA_TENANT_ID: {"id": MSA_TENANT_ID, "domains": ["consumers.example"], "b2c": False,
                        "policies": [], "msa": True},
        B2C_TENANT_ID: {"id": B2C_TENANT_ID, "domains": ["fabrikamb2c.onmicrosoft.com"], "b2c": True,
                        "policies": ["B2C_1_susi", "B2C_1_edit_profile", "B2C_1_reset"], "msa": False},
    }
    users = {}
    for oid, username, name, tid in [
        ("a11ce000-0000-4000-8000-000000000001", "alice@contoso.com", "Alice Example", CONTOSO_TENANT_ID),
        ("b0b00000-0000-4000-8000-000000000002", "bob@contoso.com", "Bob Example", CONTOSO_TENANT_ID),
        ("00000000-0000-0000-ca20-100000000003", "carol@outlook.example", "Carol Personal", MSA_TENANT_ID),
        ("da7e0000-0000-4000-8000-000000000004", "dave@fabrikam.example", "Dave Customer", B2C_TENANT_ID),
    ]:
        users[oid] = new_user(oid, username, name, tid)
    clients = {DEFAULT_CLIENT_ID: {"client_id": DEFAULT_CLIENT_ID, "name": "auth-sidecar tests",
                                   "redirect_uris": ["http://localhost", "http://127.0.0.1",
                                                     "https://login.microsoftonline.com/common/oauth2/nativeclient"],
                                   "family": "1"}}
    return tenants, users, clients


def new_user(oid, username, name, tid, password="password"):
    return {"oid": oid, "username": username, "name": name, "tid": tid, "password": password,
            "rt_valid_after": 0, "revoke_reason": "rt_expired",
            "mfa": None, "ca": None}


class State:
    """The mock's memory. Use ``with state.lock:`` around multi-step changes."""

    def __init__(self):
        self.lock = threading.RLock()
        self.reset()

    def reset(self):
        with self.lock:
            self.config = copy.deepcopy(DEFAULT_CONFIG)
            self.tenants, self.users, self.clients = default_directory()
            self.clock_offset = 0.0
            self.codes = {}            # code -> grant
            self.refresh_tokens = {}   # rt -> grant
            self.sessions = {}         # session id -> {"users": [oid], "auth_time": t}
            self.device_codes = {}     # device_code -> record
            self.consents = {}         # (oid, client_id) -> set of lower-case scopes
            self.faults = []           # see faults.py
            self.counts = collections.Counter()
            self.log = collections.deque(maxlen=500)
            self.graph_challenge = None
            self.authorize_outcomes = []   # queued outcomes for the next /authorize calls
            self.issuers = {name: {"name": name} for name in DEFAULT_ISSUERS}
            self.id_token_tamper = None    # {"tamper": mode, "times": n}, see tamper.py
            self.arm_subscriptions = {}    # oid -> [subscription], see arm.py
            self.federations = []          # federated identity credentials, see federation.py
            self.feed_uploads = {}         # filename -> bytes uploaded to the package index, see pkgindex.py
            self.pop_nonces = set()        # nonces PoP resources issued, see pop.py
            self.pop_refusals = collections.deque(maxlen=50)   # why SHRs were refused

    def now(self):
        """The mock's clock (wall clock plus the admin-controlled offset)."""
        return time.time() + self.clock_offset

    # -- directory look-ups -------------------------------------------------
    def find_tenant(self, name):
        """A tenant by GUID or domain (case-insensitive), or None."""
        name = (name or "").lower()
        for tenant in self.tenants.values():
            if tenant["id"] == name or name in [d.lower() for d in tenant["domains"]]:
                return tenant
        return None

    def find_user(self, username_or_oid):
        key = (username_or_oid or "").lower()
        for user in self.users.values():
            if user["oid"] == key or user["username"].lower() == key:
                return user
        return None

    def consented(self, oid, client_id):
        return self.consents.setdefault((oid, client_id), set())
