"""Tests of the protocol specification in protocol/ and replay of its examples.

(a) protocol/openrpc.json is well formed, every $ref resolves, every contract method is
    there with its x-status; the schemas are valid draft 2020-12; errors.md agrees.
(b) every example exchange validates against the JSON-RPC 2.0 envelope and the method's
    params/result schemas (error responses against ErrorObject).
(c) REPLAY: examples of "implemented" methods are sent to the real binary over NDJSON on
    pipes and the reply is compared per the exchange's `match`; for "planned" methods the
    binary must answer -32601 with data.planned true. Exchanges with
    "needsIdentityService": true (a real sign-in) run against the mock identity platform
    (mock, started once per session on first use): --config points the binary at
    it, $BROWSER is its scripted browser, and server-to-client messages (deviceCode, openUrl)
    are answered and acted on as the exchange's serverMessages say.

Binary: $AUTH_SIDECAR_BIN, else .build/release/auth-sidecar (relative to this repository).
Replay tests are skipped when the binary is missing (mock-backed ones also when the mock
cannot start, e.g. without `cryptography`), unless $CI is set, in which case that is a failure.
Every read, process exit, mock start, admin call and browser run is bounded by a timeout.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

REPO = Path(__file__).resolve().parents[2]
PROTO = REPO / "protocol"
SCHEMAS = PROTO / "schemas"
EXAMPLES = PROTO / "examples"
APP_ID = "11111111-2222-3333-4444-555555555555"
TIMEOUT = 15.0  # seconds for any single reply / process exit
MOCK_DIR = REPO / "mock"
MOCK_CLIENT_ID = "00001111-aaaa-2222-bbbb-3333cccc4444"
SCRIPTED_BROWSER = MOCK_DIR / "scripted_browser.py"
BROWSER_TIMEOUT = 30.0  # seconds for one run of the scripted browser in the foreground
# hosts of the identity service that a mock-backed replay points at the mock instead
SERVICE_HOSTS = ("login.microsoftonline.com", ".b2clogin.com", ".ciamlogin.com")

CONTRACT_METHODS = {
    # name: (x-status, x-kind, x-direction)
    "initialize": ("implemented", "request", "clientToServer"),
    "shutdown": ("implemented", "request", "clientToServer"),
    "ping": ("implemented", "request", "clientToServer"),
    "getDeviceInformation": ("implemented", "request", "clientToServer"),
    "exit": ("implemented", "notification", "clientToServer"),
    "$/cancelRequest": ("implemented", "notification", "clientToServer"),
    "getCurrentAccount": ("implemented", "request", "clientToServer"),
    "getAccounts": ("implemented", "request", "clientToServer"),
    "acquireToken": ("implemented", "request", "clientToServer"),
    "acquireTokenSilent": ("implemented", "request", "clientToServer"),
    "signout": ("implemented", "request", "clientToServer"),
    "callGraph": ("implemented", "request", "clientToServer"),
    # The project's own, beyond protocol-contract.md (documented in protocol/README.md):
    "setCurrentAccount": ("implemented", "request", "clientToServer"),
    "getCacheSummary": ("implemented", "request", "clientToServer"),
    "signHttpRequest": ("implemented", "request", "clientToServer"),
    "deviceCode": ("implemented", "notification", "serverToClient"),
    "openUrl": ("implemented", "request", "serverToClient"),
    "pasteSignIn": ("implemented", "request", "serverToClient"),
}
EXAMPLE_FILE = {m: ("cancelRequest" if m == "$/cancelRequest" else m) for m in CONTRACT_METHODS}

CONTRACT_CONFIG_DEFAULTS = {
    "clientId": None,
    "authority": "https://login.microsoftonline.com/common",
    "redirectUri": "http://localhost",
    "redirectPort": None,  # absent: redirectUri's port (or any free one)
    "knownAuthorities": [],
    "scopes": ["user.read"],
    "graphEndpoint": "https://graph.microsoft.com/",
    "cache": None,  # default is a file under $XDG_CACHE_HOME: no literal default
    "cacheProtection": "auto",
    "secretServiceKeyCacheSeconds": 600,
    "sharedDeviceMode": False,
    "clientCapabilities": [],
    "browser": "system",
    "authorityType": None,  # absent/null: detected from the authority URL
    "instanceDiscovery": True,
    "httpTimeoutSeconds": 30,
    "interactiveTimeoutSeconds": 600,
    "postLogoutRedirectUri": None,  # absent/null: not sent
    "azPassthrough": False,
    "armEndpoint": None,  # absent/null: the Azure cloud's, for a known cloud's authority
    "forwardScopes": [],  # read by the agent only (its forward socket)
    "forwardApproval": "deny",
    "forwardProofOfPossession": None,  # read by the agent only: the hosts its forward socket signs PoP requests for
    "broker": "off",  # the Linux identity broker: off, auto, required
    "brokerSilentRescue": False,  # a silent InteractionRequired tried once as interactive (with a display)
    "clientAssertion": None,  # absent/null: a public client (workload identity federation when set)
}
CONTRACT_CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32800,
                  -50000, -50001, -50002, -50003, -50004, -50005, -50006}
MSAL_NAMES = {-50000: "internal", -50001: "workplaceJoinRequired", -50002: "interactionRequired",
              -50003: "serverDeclinedScopes", -50004: "serverProtectionPoliciesRequired",
              -50005: "userCanceled", -50006: "serverError"}


# --------------------------------------------------------------------------- loading

def load_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


OPENRPC = load_json(PROTO / "openrpc.json")
METHODS = {m["name"]: m for m in OPENRPC["methods"]}
SCHEMA_DOCS = {p.name: load_json(p) for p in sorted(SCHEMAS.glob("*.schema.json"))}
REGISTRY = Registry().with_resources(
    (name, Resource.from_contents(doc)) for name, doc in SCHEMA_DOCS.items()
)
EXAMPLE_DOCS = {p.stem: load_json(p) for p in sorted(EXAMPLES.glob("*.json"))}


def validator_for_ref(ref: str) -> Draft202012Validator:
    """A validator for a $ref as written in openrpc.json (relative to protocol/)."""
    if ref.startswith("schemas/"):
        ref = ref[len("schemas/"):]
    return Draft202012Validator({"$ref": ref}, registry=REGISTRY,
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


def validate(instance, ref: str):
    validator_for_ref(ref).validate(instance)


def envelope(kind: str) -> str:
    return f"JsonRpc.schema.json#/$defs/{kind}"


def params_ref(method: str) -> str:
    return METHODS[method]["x-paramsSchema"]["$ref"]


def result_ref(method: str) -> str:
    return METHODS[method]["result"]["schema"]["$ref"]


def resolve_pointer(doc, pointer: str):
    if pointer in ("", "/"):
        return doc
    cur = doc
    for raw in pointer.lstrip("/").split("/"):
        tok = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            cur = cur[int(tok)]
        else:
            cur = cur[tok]
    return cur


def iter_refs(node, where=""):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield where, v
            else:
                yield from iter_refs(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from iter_refs(v, f"{where}/{i}")


# --------------------------------------------------------------------------- (a) the document

def test_openrpc_document_shape():
    assert re.match(r"^1\.3\.\d+$", OPENRPC["openrpc"]), OPENRPC["openrpc"]
    assert OPENRPC["info"]["title"] and OPENRPC["info"]["version"]
    names = [m["name"] for m in OPENRPC["methods"]]
    assert len(names) == len(set(names)), "duplicate method names"
    for m in OPENRPC["methods"]:
        assert isinstance(m.get("params"), list), m["name"]
        assert m.get("paramStructure") == "by-name", m["name"]
        for cd in m["params"]:
            assert cd.get("name") and "schema" in cd, (m["name"], cd)
        assert m.get("x-status") in ("implemented", "planned"), m["name"]
        assert m.get("x-kind") in ("request", "notification"), m["name"]
        assert m.get("x-direction") in ("clientToServer", "serverToClient"), m["name"]
        assert "$ref" in m.get("x-paramsSchema", {}), m["name"]
        if m["x-kind"] == "request":
            assert "result" in m and "$ref" in m["result"]["schema"], m["name"]
        else:
            assert "result" not in m, f"{m['name']}: a notification has no result"
        # every params content descriptor matches a property of the params schema
        pv = validator_for_ref(params_ref(m["name"]))
        for cd in m["params"]:
            assert cd["schema"]["$ref"].endswith(f"/properties/{cd['name']}"), (m["name"], cd)
            closing = [e for e in pv.iter_errors({cd["name"]: None})
                       if e.validator in ("additionalProperties", "unevaluatedProperties")]
            assert not closing, f"{m['name']}: param {cd['name']} is not a member of x-paramsSchema"


def test_every_contract_method_present_with_status():
    for name, (status, kind, direction) in CONTRACT_METHODS.items():
        assert name in METHODS, f"method {name} missing from openrpc.json"
        m = METHODS[name]
        assert m["x-status"] == status, (name, m["x-status"])
        assert m["x-kind"] == kind, (name, m["x-kind"])
        assert m["x-direction"] == direction, (name, m["x-direction"])
    extra = set(METHODS) - set(CONTRACT_METHODS)
    assert not extra, f"methods not in the contract: {extra}"
    assert not any(n.startswith("diagnostics/") for n in METHODS)


def test_all_refs_resolve():
    # refs in openrpc.json: internal (#/...) or relative files (schemas/...#frag)
    for where, ref in iter_refs(OPENRPC):
        path, _, frag = ref.partition("#")
        doc = OPENRPC if path == "" else load_json(PROTO / path)
        try:
            resolve_pointer(doc, frag)
        except (KeyError, IndexError, ValueError) as e:
            pytest.fail(f"openrpc.json{where}: $ref {ref} does not resolve ({e!r})")
        if path:  # the target must also be usable as a schema (its own refs resolve)
            validator_for_ref(ref).is_valid(None)
    # refs inside the schema files
    for name, doc in SCHEMA_DOCS.items():
        for where, ref in iter_refs(doc):
            path, _, frag = ref.partition("#")
            target = doc if path == "" else SCHEMA_DOCS.get(path)
            assert target is not None, f"{name}{where}: $ref {ref}: no such schema file"
            try:
                resolve_pointer(target, frag)
            except (KeyError, IndexError, ValueError) as e:
                pytest.fail(f"{name}{where}: $ref {ref} does not resolve ({e!r})")
    for m in METHODS.values():
        ex = m.get("x-examples")
        assert ex and (PROTO / ex).is_file(), f"{m['name']}: example file {ex} missing"


@pytest.mark.parametrize("name", sorted(SCHEMA_DOCS))
def test_schema_is_valid_draft_2020_12(name):
    doc = SCHEMA_DOCS[name]
    assert doc.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)
    Draft202012Validator(doc, registry=REGISTRY).is_valid({})  # refs resolvable


REQUIRED_SCHEMAS = [
    "Configuration", "InitializeParams", "InitializeResult", "Account", "AccountRef", "TokenResult",
    "GetCurrentAccountParams", "GetCurrentAccountResult", "GetAccountsParams", "GetAccountsResult",
    "AcquireTokenParams", "AcquireTokenSilentParams", "SignoutParams", "SignoutResult",
    "GetDeviceInformationParams", "DeviceInformation", "DeviceCodeNotification", "OpenUrlParams",
    "OpenUrlResult", "CancelParams", "CallGraphParams", "CallGraphResult", "ErrorObject", "ErrorData",
    "PingParams", "PingResult", "ShutdownParams", "ShutdownResult", "JsonRpc",
]


def test_required_schema_files_exist():
    missing = [n for n in REQUIRED_SCHEMAS if f"{n}.schema.json" not in SCHEMA_DOCS]
    assert not missing, missing


def test_params_schemas_reject_unknown_members():
    for m in METHODS.values():
        v = validator_for_ref(params_ref(m["name"]))
        assert not v.is_valid({"__unknownMember__": 1}), f"{m['name']}: unknown member accepted"
        assert not v.is_valid([]), f"{m['name']}: by-position params accepted"


def test_configuration_keys_and_defaults():
    keys = SCHEMA_DOCS["Configuration.schema.json"]["$defs"]["keys"]["properties"]
    assert set(keys) == set(CONTRACT_CONFIG_DEFAULTS)
    for k, default in CONTRACT_CONFIG_DEFAULTS.items():
        if default is not None:
            assert keys[k].get("default") == default, k
    cfg = validator_for_ref("Configuration.schema.json")
    cfg.validate({"clientId": APP_ID})
    cfg.validate({"clientId": APP_ID, "cache": {"path": "/tmp/c.json"}, "browser": "client",
                  "knownAuthorities": ["fabrikamb2c.b2clogin.com"], "clientCapabilities": ["cp1"]})
    cfg.validate({"cache": {"persistence": "memory"}})
    assert not cfg.is_valid({"clientId": APP_ID, "processId": 1}), "LSP keys are for initialize only"
    assert not cfg.is_valid({"authority": "http://login.microsoftonline.com/common"})
    assert not cfg.is_valid({"browser": "firefox"})
    cfg.validate({"clientId": APP_ID, "authority": "https://accounts.example.com/", "authorityType": "oidc",
                  "instanceDiscovery": False})
    cfg.validate({"clientId": APP_ID, "authorityType": None})
    assert not cfg.is_valid({"authorityType": "OIDC"})
    assert not cfg.is_valid({"instanceDiscovery": "false"})
    cfg.validate({"clientId": APP_ID, "httpTimeoutSeconds": 1, "interactiveTimeoutSeconds": 3600})
    cfg.validate({"clientId": APP_ID, "redirectPort": 8400})
    assert not cfg.is_valid({"redirectPort": 0}) and not cfg.is_valid({"redirectPort": 65536})
    for bad in ({"httpTimeoutSeconds": 0}, {"httpTimeoutSeconds": 301}, {"httpTimeoutSeconds": 1.5},
                {"interactiveTimeoutSeconds": 0}, {"interactiveTimeoutSeconds": 3601}):
        assert not cfg.is_valid(bad), bad
    init = validator_for_ref("InitializeParams.schema.json")
    init.validate({"clientId": APP_ID, "processId": 1, "clientInfo": {"name": "x"}, "trace": "off",
                   "rootUri": None, "workspaceFolders": None, "locale": "en", "capabilities": {}})
    assert not init.is_valid({"clientId": APP_ID, "bogus": 1})
    # a configuration file's named profiles (the file only; initialize names one with `profile`)
    cfg.validate({"scopes": ["User.Read"], "defaultProfile": "work",
                  "profiles": {"work": {"clientId": APP_ID}, "b2c-test": {"clientId": APP_ID, "authorityType": "b2c"}}})
    for bad in ({"profiles": {}}, {"profiles": {"work": {"processId": 1}}}, {"profiles": {".hidden": {}}},
                {"profiles": {"work": {"profiles": {}}}}):
        assert not cfg.is_valid(bad), bad
    init.validate({"profile": "work", "scopes": ["User.Read"]})
    assert not init.is_valid({"profiles": {"work": {}}}) and not init.is_valid({"profile": 1})


AUTHORITIES_OK = [
    "https://login.microsoftonline.com/common",
    "https://login.microsoftonline.com/organizations",
    "https://login.microsoftonline.com/consumers",
    "https://login.microsoftonline.com/contoso.onmicrosoft.com",
    "https://login.microsoftonline.com/11111111-2222-4333-8444-555555555555",
    "https://fabrikamb2c.b2clogin.com/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi",
    "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/B2C_1_susi",
    "https://contoso.ciamlogin.com/",
    "https://login.microsoftonline.us/contoso.onmicrosoft.com",
]


@pytest.mark.parametrize("authority", AUTHORITIES_OK)
def test_authority_forms_accepted_by_schema(authority):
    validate({"clientId": APP_ID, "authority": authority}, "Configuration.schema.json")
    validate({"authority": authority}, "AcquireTokenParams.schema.json")


def _errors_md_table():
    text = (PROTO / "errors.md").read_text(encoding="utf-8")
    text = text.split("\n## ")[0]  # the main table comes before the first section
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\|\s*(-\d+)\s*\|\s*`([A-Za-z0-9]+)`\s*\|", line)
        if m:
            code, name = int(m.group(1)), m.group(2)
            assert code not in rows, f"errors.md lists {code} twice"
            rows[code] = name
    return rows


def test_error_codes_table():
    comp = OPENRPC["components"]["errors"]
    codes = [e["code"] for e in comp.values()]
    assert len(codes) == len(set(codes)), "an error code appears twice in components.errors"
    assert CONTRACT_CODES <= set(codes)
    own = set(codes) - CONTRACT_CODES
    assert own, "no platform codes of the project's own"
    for c in own:
        assert -51999 <= c <= -51001, f"project code {c} outside the documented range"
    for c, n in MSAL_NAMES.items():
        assert [e["data"]["name"] for e in comp.values() if e["code"] == c] == [n]
    table = _errors_md_table()
    assert table == {e["code"]: e["data"]["name"] for e in comp.values()}, "errors.md and openrpc.json disagree"
    enum = SCHEMA_DOCS["ErrorObject.schema.json"]["properties"]["code"]["enum"]
    assert set(enum) == set(codes)
    for m in METHODS.values():
        for e in m.get("errors", []):
            assert e["$ref"].startswith("#/components/errors/")
        if m["x-status"] == "planned" and m["x-direction"] == "clientToServer":
            assert {"$ref": "#/components/errors/MethodNotFound"} in m["errors"], m["name"]


def test_example_files_cover_every_method():
    for name, (status, _, _) in CONTRACT_METHODS.items():
        f = EXAMPLE_FILE[name]
        assert f in EXAMPLE_DOCS, f"protocol/examples/{f}.json missing"
        doc = EXAMPLE_DOCS[f]
        assert doc["status"] == status, (f, doc["status"])
        assert METHODS[name]["x-examples"] == f"examples/{f}.json"
    assert set(EXAMPLE_DOCS) == {EXAMPLE_FILE[m] for m in CONTRACT_METHODS}


# --------------------------------------------------------------------------- (b) examples

EXCHANGE_KEYS = {"description", "request", "response", "match", "setup", "awaitSetup", "cli",
                 "serverMessages", "requestValid", "needsIdentityService", "mockControls", "env"}
MATCH_KEYS = {"schemaOnly", "exact", "unordered", "ignore", "exitCode"}
SERVER_MESSAGE_KEYS = {"message", "reply", "userAction"}
# what the user does when a server message reaches the client (mock-backed replays only)
USER_ACTIONS = {"deviceCode": {"approve", "decline", "expire"},   # POST /_admin/devicecode
                "openUrl": {"complete", "deny", "cancel"},        # the scripted browser's action
                "pasteSignIn": {"paste"}}                         # the scripted browser's final address, pasted


def all_exchanges():
    for fname, doc in EXAMPLE_DOCS.items():
        for i, ex in enumerate(doc["exchanges"]):
            yield pytest.param(fname, i, ex, id=f"{fname}[{i}]")


MISSING = object()


def get_path(obj, path: str):
    cur = obj
    if path == "":
        return cur
    for part in path.split("."):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return MISSING
    return cur


def del_path(obj, path: str):
    parts = path.split(".")
    parent = get_path(obj, ".".join(parts[:-1])) if len(parts) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(parts[-1], None)


def sent_messages(ex):
    return list(ex.get("setup", [])) + [ex["request"]]


def validate_client_message(msg, *, in_setup: bool):
    """Envelope + params validation of a client-to-server message."""
    kind = "request" if "id" in msg else "notification"
    validate(msg, envelope(kind))
    method = msg["method"]
    if method not in METHODS:
        assert in_setup and method.startswith("diagnostics/"), f"unknown method {method}"
        return
    m = METHODS[method]
    assert m["x-direction"] == "clientToServer", method
    assert m["x-kind"] == kind, f"{method} must be sent as a {m['x-kind']}"
    params = msg.get("params")
    validate({} if params is None else params, params_ref(method))  # null = omitted


def reply_method(ex, reply_id):
    """Which request a reply answers (by id) among the messages the example sends."""
    for msg in sent_messages(ex):
        if msg.get("id", MISSING) == reply_id and "method" in msg:
            return msg["method"]
    return None


def validate_response(resp, method):
    validate(resp, envelope("response"))
    if "error" in resp:
        validate(resp["error"], "ErrorObject.schema.json")
    elif method is not None and method in METHODS:
        validate(resp["result"], result_ref(method))


@pytest.mark.parametrize("fname,index,ex", list(all_exchanges()))
def test_example_is_schema_valid(fname, index, ex):
    doc = EXAMPLE_DOCS[fname]
    assert set(doc) == {"description", "status", "exchanges"}
    assert set(ex) <= EXCHANGE_KEYS, set(ex) - EXCHANGE_KEYS
    assert "request" in ex and "response" in ex and "match" in ex
    assert set(ex["match"]) <= MATCH_KEYS, set(ex["match"]) - MATCH_KEYS

    for msg in ex.get("setup", []):
        validate_client_message(msg, in_setup=True)
    if ex.get("requestValid", True):
        validate_client_message(ex["request"], in_setup=False)
    else:
        # a deliberately invalid request: the schemas must reject it, as the server does
        msg = ex["request"]
        kind = "request" if "id" in msg else "notification"
        ok_env = Draft202012Validator({"$ref": envelope(kind)}, registry=REGISTRY).is_valid(msg)
        ok_params = ok_env and msg["method"] in METHODS and \
            validator_for_ref(params_ref(msg["method"])).is_valid(msg.get("params", {}))
        assert not ok_params, "requestValid false, but the request is schema-valid"
        assert ex["response"] and ex["response"]["error"]["code"] in (-32600, -32602)

    resp = ex["response"]
    if resp is None:
        assert "id" not in ex["request"], "a request always gets a response"
    else:
        if "id" in ex["request"]:
            assert resp["id"] == ex["request"]["id"], "response id differs from request id"
        method = reply_method(ex, resp["id"])
        assert method is not None, "the response answers none of the example's requests"
        validate_response(resp, method)
        for p in ex["match"].get("exact", []) + ex["match"].get("unordered", []) + ex["match"].get("ignore", []):
            assert get_path(resp, p) is not MISSING, f"match path {p} not in the example response"
        for p in ex["match"].get("unordered", []):
            assert isinstance(get_path(resp, p), list), p

    needs_service = ex.get("needsIdentityService", False)
    assert isinstance(needs_service, bool)
    if needs_service:
        assert "cli" not in ex, "a mock-backed replay configures the process itself (--config)"
        assert doc["status"] == "implemented", "only implemented examples are replayed against the mock"
    for control in ex.get("mockControls", []):
        assert needs_service, "mockControls need needsIdentityService"
        assert set(control) <= {"control", "body"} and re.match(r"^[a-z_/]+$", control["control"]), control
        assert isinstance(control.get("body", {}), dict), control
    env = ex.get("env", {})
    assert isinstance(env, dict) and all(isinstance(v, str) for v in env.values()), env
    if ex.get("serverMessages") and doc["status"] == "implemented":
        assert needs_service, "server messages are replayed only against the mock identity service"

    for sm in ex.get("serverMessages", []):
        assert set(sm) <= SERVER_MESSAGE_KEYS, set(sm) - SERVER_MESSAGE_KEYS
        msg = sm["message"]
        if "userAction" in sm:
            assert sm["userAction"] in USER_ACTIONS.get(msg["method"], ()), sm["userAction"]
        m = METHODS[msg["method"]]
        assert m["x-direction"] == "serverToClient"
        kind = "request" if "id" in msg else "notification"
        assert m["x-kind"] == kind
        validate(msg, envelope(kind))
        validate(msg["params"], params_ref(msg["method"]))
        if kind == "request":
            reply = sm["reply"]
            assert reply["id"] == msg["id"]
            validate(reply, envelope("response"))
            if "error" in reply:
                validate(reply["error"], "ErrorObject.schema.json")
            else:
                validate(reply["result"], result_ref(msg["method"]))
        else:
            assert "reply" not in sm

    # examples of planned methods: the first planned message is what the replay probes
    if doc["status"] == "planned":
        assert planned_probe(ex) is not None


def test_error_examples_cover_key_cases():
    codes = {ex["response"]["error"]["code"]
             for doc in EXAMPLE_DOCS.values() for ex in doc["exchanges"]
             if ex["response"] and "error" in ex["response"]}
    for c in (-32602, -32600, -32002, -32800, -50002, -50003, -50005, -50006):
        assert c in codes, f"no example of error {c}"


def test_examples_hold_no_real_tokens():
    text = "\n".join(p.read_text() for p in EXAMPLES.glob("*.json"))
    # every JWT-shaped string must be an unsigned ("alg":"none") example token
    for tok in re.findall(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*", text):
        assert tok.startswith("eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0."), tok


# --------------------------------------------------------------------------- (c) replay

def binary_path() -> Path:
    env = os.environ.get("AUTH_SIDECAR_BIN")
    return Path(env) if env else REPO / ".build" / "release" / "auth-sidecar"


@pytest.fixture(scope="session")
def sidecar_bin():
    b = binary_path()
    if not (b.is_file() and os.access(b, os.X_OK)):
        if os.environ.get("CI"):
            pytest.fail(f"auth-sidecar binary not found at {b} (CI is set, so this is a failure)")
        pytest.skip(f"auth-sidecar binary not found at {b}; build it (scripts/build.sh) "
                    f"or set AUTH_SIDECAR_BIN")
    return b


class IdentityService:
    """The project's mock identity platform (mock), one per test session."""

    def __init__(self, url, ca_file, process, admin):
        self.url, self.ca_file, self.process, self.admin = url.rstrip("/"), ca_file, process, admin

    def env(self):
        return {"SSL_CERT_FILE": self.ca_file, "BROWSER": str(SCRIPTED_BROWSER),
                "SCRIPTED_BROWSER_CA": self.ca_file}

    def config(self):
        """The configuration keys (a --config file) pointing the sidecar at the mock, which
        also serves Microsoft Graph (graphEndpoint)."""
        return {"clientId": MOCK_CLIENT_ID, "authority": self.url + "/common",
                "knownAuthorities": ["127.0.0.1"], "graphEndpoint": self.url + "/"}

    def rewrite(self, msg):
        """An `authority` on an identity-service host in the params stands for the mock."""
        msg = copy.deepcopy(msg)
        params = msg.get("params")
        if isinstance(params, dict) and isinstance(params.get("authority"), str):
            parts = urllib.parse.urlsplit(params["authority"])
            host = parts.hostname or ""
            if any(host == h or (h.startswith(".") and host.endswith(h)) for h in SERVICE_HOSTS):
                params["authority"] = self.url + parts.path
        return msg

    def control(self, name, body):
        return self.admin.call(name, body)

    def run_browser(self, url, action):
        """The user in the browser the client opened (openUrl): the scripted browser, in
        the foreground, bounded."""
        env = dict(os.environ, SCRIPTED_BROWSER_CA=self.ca_file, SCRIPTED_BROWSER_WAIT="1",
                   SCRIPTED_BROWSER_ACTION=action)
        try:
            done = subprocess.run([sys.executable, str(SCRIPTED_BROWSER), url], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=BROWSER_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the scripted browser did not finish within {BROWSER_TIMEOUT}s")
        assert done.returncode == 0, f"scripted browser failed: {done.stderr.decode(errors='replace')}"

    def browse_address(self, url):
        """The user of a paste-back sign-in (pasteSignIn): the address the scripted browser
        ends on (printed, not delivered: nothing listens there)."""
        env = dict(os.environ, SCRIPTED_BROWSER_CA=self.ca_file, SCRIPTED_BROWSER_ADDRESS="1",
                   SCRIPTED_BROWSER_ACTION="complete")
        done = subprocess.run([sys.executable, str(SCRIPTED_BROWSER), url], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=BROWSER_TIMEOUT)
        assert done.returncode == 0, f"scripted browser failed: {done.stderr.decode(errors='replace')}"
        return done.stdout.decode().strip()


@pytest.fixture(scope="session")
def identity_service(tmp_path_factory):
    """Started on first use (only mock-backed examples need it); stopped at session end."""
    try:
        if str(MOCK_DIR) not in sys.path:
            sys.path.insert(0, str(MOCK_DIR))
        from mock_idp.testing import AdminClient, start_mock, stop_mock
        url, ca_file, process = start_mock(tmp_path_factory.mktemp("mock-idp"), timeout=TIMEOUT)
    except Exception as e:  # e.g. the `cryptography` package missing
        if os.environ.get("CI"):
            pytest.fail(f"the mock identity service (mock) did not start: {e!r}")
        pytest.skip(f"the mock identity service (mock) did not start: {e!r} "
                    f"(pip install -r mock/requirements.txt)")
    try:
        yield IdentityService(url, ca_file, process, AdminClient(url, ca_file))
    finally:
        stop_mock(process)


class Sidecar:
    """The binary on real pipes, NDJSON framing, with timeouts on every read."""

    def __init__(self, binary: Path, args, env_extra=None, config=None):
        """`config`: a configuration written to a --config file (its cache in the temp dir)."""
        self.tmp = tempfile.TemporaryDirectory(prefix="auth-sidecar-spec-")
        env = dict(os.environ)
        env["AUTH_SIDECAR_POLICY_FILE"] = os.path.join(self.tmp.name, "no-such-policy.json")
        env["XDG_CACHE_HOME"] = os.path.join(self.tmp.name, "cache")
        env["HOME"] = self.tmp.name
        env.update(env_extra or {})
        args = list(args)
        if config is not None:
            config = dict(config, cache={"path": os.path.join(self.tmp.name, "token-cache.json")},
                          cacheProtection=config.get("cacheProtection", "plaintext"))
            path = os.path.join(self.tmp.name, "config.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(config, f)
            args += ["--config", path]
        if "--cache-protection" not in args:
            args += ["--cache-protection", "plaintext"]  # the protocol, not the key store: no keyring needed
        self.proc = subprocess.Popen([str(binary), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines: queue.Queue = queue.Queue()
        self.stderr_chunks: list[bytes] = []
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self):
        try:
            for raw in iter(self.proc.stdout.readline, b""):
                self.lines.put(raw)
        except (ValueError, OSError):  # the stream was closed at teardown
            pass
        self.lines.put(None)

    def _pump_err(self):
        try:
            for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
                self.stderr_chunks.append(chunk)
        except (ValueError, OSError):  # the stream was closed at teardown
            pass

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")[-2000:]

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def read(self, timeout=TIMEOUT):
        try:
            raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no reply within {timeout}s; stderr:\n{self.stderr}")
        if raw is None:
            return None
        assert raw.endswith(b"\n"), f"reply not newline-terminated: {raw!r}"
        try:
            msg = json.loads(raw)
        except ValueError:
            pytest.fail(f"stdout carried a non-JSON line: {raw!r}")
        assert isinstance(msg, dict), f"unexpected reply (not an object): {raw!r}"
        return msg

    def read_until_id(self, want_id, allowed_ids=(), on_server_message=None):
        """Read replies until the one with id == want_id; others must be in allowed_ids.
        Server-to-client messages go to on_server_message (without one they are unexpected)."""
        while True:
            msg = self.read()
            if msg is None:
                pytest.fail(f"stdout closed before the reply to id {want_id!r} "
                            f"(exit {self.proc.poll()}); stderr:\n{self.stderr}")
            if "method" in msg and on_server_message is not None:
                on_server_message(msg)
                continue
            if msg.get("id", MISSING) == want_id and "method" not in msg:
                return msg
            assert msg.get("id", MISSING) in allowed_ids, f"unexpected message {msg}"

    def close_and_wait(self, timeout=TIMEOUT):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        return self.wait(timeout)

    def wait(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the process did not exit within {timeout}s; stderr:\n{self.stderr}")

    def remaining(self):
        out = []
        while True:
            try:
                raw = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                break
            if raw is None:
                break
            out.append(json.loads(raw))
        return out

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                s.close()
            except Exception:
                pass
        self.tmp.cleanup()


def default_cli(ex):
    if "cli" in ex:
        return list(ex["cli"])
    return [] if ex["request"].get("method") == "initialize" else ["--client-id", APP_ID]


def canonical(v, unordered: bool):
    if unordered and isinstance(v, list):
        return sorted(json.dumps(x, sort_keys=True) for x in v)
    return v


def compare(actual, expected, match):
    unordered = set(match.get("unordered", []))
    for p in match.get("exact", []):
        a, e = get_path(actual, p), get_path(expected, p)
        assert a is not MISSING, f"{p} missing from the reply {actual}"
        assert canonical(a, p in unordered) == canonical(e, p in unordered), \
            f"{p}: got {a!r}, expected {e!r}"
    if not match.get("schemaOnly", False):
        a, e = copy.deepcopy(actual), copy.deepcopy(expected)
        for p in match.get("ignore", []):
            del_path(a, p)
            del_path(e, p)
        for p in unordered:
            for d in (a, e):
                v = get_path(d, p)
                if isinstance(v, list):
                    v.sort(key=lambda x: json.dumps(x, sort_keys=True))
        assert a == e, f"reply differs from the example:\n got      {a}\n expected {e}"


class ServerMessages:
    """Plays the client's side of the exchange's `serverMessages`: each message the server
    sends must be the next one listed (same method and kind, schema-valid, same requestId);
    a request gets the listed `reply` (with the server's id), then the `userAction` is done."""

    def __init__(self, ex, sc, service):
        self.expected = list(ex.get("serverMessages", []))
        self.sc, self.service = sc, service

    def __call__(self, msg):
        assert self.expected, f"unexpected server-to-client message {msg}"
        want = self.expected.pop(0)
        wmsg = want["message"]
        assert msg.get("method") == wmsg["method"], f"expected a {wmsg['method']} message, got {msg}"
        kind = "request" if "id" in wmsg else "notification"
        assert ("id" in msg) == (kind == "request"), f"{msg['method']} must be a {kind}: {msg}"
        validate(msg, envelope(kind))
        validate(msg["params"], params_ref(msg["method"]))
        if "requestId" in wmsg["params"]:
            assert msg["params"].get("requestId") == wmsg["params"]["requestId"], msg
        if kind == "request":
            assert isinstance(msg["id"], str) and re.match(r"^sidecar-\d+$", msg["id"]), msg["id"]
            reply = dict(want["reply"], id=msg["id"])
            if msg["method"] == "pasteSignIn" and want.get("userAction") == "paste":
                reply["result"] = {"redirectedTo": self.service.browse_address(msg["params"]["url"])}
            self.sc.send(reply)
        action = want.get("userAction")
        if action and msg["method"] == "deviceCode":
            self.service.control("devicecode", {"user_code": msg["params"]["userCode"], "action": action})
        elif action and msg["method"] == "openUrl":
            self.service.run_browser(msg["params"]["url"], action)

    def check_done(self):
        assert not self.expected, f"server messages not received: {[m['message'] for m in self.expected]}"


def replay_implemented(binary, ex, service=None):
    match = ex["match"]
    setup = ex.get("setup", [])
    request = ex["request"]
    await_setup = ex.get("awaitSetup", True)
    setup_ids = [m["id"] for m in setup if "id" in m]
    env, config, cli = {}, None, default_cli(ex)
    if ex.get("needsIdentityService"):
        assert service is not None
        service.control("reset", {})
        env, config, cli = service.env(), service.config(), []
        setup = [service.rewrite(m) for m in setup]
        request = service.rewrite(request)
    env.update(ex.get("env", {}))
    with Sidecar(binary, cli, env, config) as sc:
        server_messages = ServerMessages(ex, sc, service)
        for m in setup:
            sc.send(m)
            if await_setup and "id" in m:
                r = sc.read_until_id(m["id"], on_server_message=server_messages)
                assert "result" in r, f"setup request failed: {r}"
        for control in ex.get("mockControls", []):
            service.control(control["control"], control.get("body", {}))
        sc.send(request)
        resp = ex["response"]
        if resp is not None:
            got = sc.read_until_id(resp["id"], allowed_ids=setup_ids, on_server_message=server_messages)
            validate_response(got, reply_method(ex, resp["id"]))
            compare(got, resp, match)
        server_messages.check_done()
        if "exitCode" in match:
            code = sc.wait()
            extra = [m for m in sc.remaining() if m.get("id", MISSING) not in setup_ids]
            assert not extra, f"unexpected output: {extra}"
            assert code == match["exitCode"], f"exit code {code}, expected {match['exitCode']}; stderr:\n{sc.stderr}"
            return
        if resp is None:
            # a notification: nothing may answer it; prove it with a sentinel ping
            sc.send({"jsonrpc": "2.0", "id": "__sentinel__", "method": "ping"})
            sc.read_until_id("__sentinel__", allowed_ids=setup_ids)
        code = sc.close_and_wait()
        extra = [m for m in sc.remaining() if m.get("id", MISSING) not in setup_ids or "method" in m]
        assert not extra, f"unexpected output after the exchange: {extra}"
        assert code == 0, f"end of input must exit 0, got {code}; stderr:\n{sc.stderr}"


def planned_probe(ex):
    for m in sent_messages(ex):
        meta = METHODS.get(m.get("method"))
        if meta and meta["x-status"] == "planned" and meta["x-direction"] == "clientToServer" and "id" in m:
            return m
    return None


def replay_planned(binary, ex):
    probe = planned_probe(ex)
    with Sidecar(binary, ["--client-id", APP_ID]) as sc:
        sc.send(probe)
        got = sc.read_until_id(probe["id"])
        validate_response(got, probe["method"])
        assert "error" in got, f"{probe['method']} is planned: expected -32601, got {got}"
        err = got["error"]
        assert err["code"] == -32601, err
        assert err["data"]["name"] == "methodNotFound", err
        assert err["data"].get("planned") is True, err
        assert sc.close_and_wait() == 0


@pytest.mark.parametrize("fname,index,ex", list(all_exchanges()))
def test_replay(sidecar_bin, request, fname, index, ex):
    if EXAMPLE_DOCS[fname]["status"] == "implemented":
        service = request.getfixturevalue("identity_service") if ex.get("needsIdentityService") else None
        replay_implemented(sidecar_bin, ex, service)
    else:
        replay_planned(sidecar_bin, ex)


PLANNED_REQUESTS = sorted(m for m, (s, k, d) in CONTRACT_METHODS.items()
                          if s == "planned" and k == "request" and d == "clientToServer")


@pytest.mark.skipif(not PLANNED_REQUESTS, reason="every client-to-server request method is implemented")
@pytest.mark.parametrize("method", PLANNED_REQUESTS or ["(none)"])
def test_planned_methods_answer_planned_before_and_after_initialize(sidecar_bin, method):
    # configured by initialize rather than the command line: still -32601 planned
    with Sidecar(sidecar_bin, []) as sc:
        sc.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientId": APP_ID}})
        assert "result" in sc.read_until_id(1)
        sc.send({"jsonrpc": "2.0", "id": 2, "method": method, "params": {}})
        err = sc.read_until_id(2)["error"]
        assert (err["code"], err["data"].get("name"), err["data"].get("planned")) == (-32601, "methodNotFound", True)
        assert sc.close_and_wait() == 0


def test_device_mode_from_policy_file(sidecar_bin, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text('{"sharedDeviceMode": true}')
    with Sidecar(sidecar_bin, ["--client-id", APP_ID], {"AUTH_SIDECAR_POLICY_FILE": str(policy)}) as sc:
        sc.send({"jsonrpc": "2.0", "id": 1, "method": "getDeviceInformation", "params": {}})
        got = sc.read_until_id(1)
        validate_response(got, "getDeviceInformation")
        assert got["result"]["deviceMode"] == "shared"
        assert got["result"]["sharedDeviceModeSource"] == "policyFile"
        assert sc.close_and_wait() == 0


def test_initialize_capabilities_match_openrpc_status(sidecar_bin):
    with Sidecar(sidecar_bin, []) as sc:
        sc.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientId": APP_ID}})
        got = sc.read_until_id(1)
        validate_response(got, "initialize")
        caps = got["result"]["capabilities"]
        implemented = {n for n, m in METHODS.items()
                       if m["x-status"] == "implemented" and m["x-kind"] == "request"
                       and m["x-direction"] == "clientToServer"}
        assert set(caps["methods"]) == implemented
        notes = {n for n, m in METHODS.items() if m["x-kind"] == "notification" and m["x-direction"] == "clientToServer"}
        assert set(caps["notifications"]) == notes
        assert sc.close_and_wait() == 0
