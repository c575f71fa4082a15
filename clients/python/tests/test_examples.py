"""Replays protocol/examples/*.json through the Python client's raw call API: every exchange
of an implemented method that needs no identity service (``needsIdentityService`` false or
absent; in files still marked planned, no sign-in in the setup and no token or Graph result
expected). Each reply must validate against the protocol's schemas
and match the example's ``exact`` paths (or the whole reply, when not ``schemaOnly``)."""
from __future__ import annotations

import copy
import json

import pytest

import auth_sidecar as a
from conftest import REPO, APP_ID

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

PROTO = REPO / "protocol"
QUICK = 10.0
# Methods that reach the identity service (used when an exchange has no needsIdentityService flag).
SERVICE_METHODS = {"acquireToken", "acquireTokenSilent", "callGraph"}
MISSING = object()


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


OPENRPC = _load(PROTO / "openrpc.json")
METHODS = {m["name"]: m for m in OPENRPC["methods"]}
REGISTRY = referencing.Registry().with_resources(
    (p.name, referencing.Resource.from_contents(_load(p))) for p in sorted((PROTO / "schemas").glob("*.schema.json")))


def _validate(instance, ref: str) -> None:
    ref = ref[len("schemas/"):] if ref.startswith("schemas/") else ref
    jsonschema.Draft202012Validator({"$ref": ref}, registry=REGISTRY).validate(instance)


def _exchanges():
    for path in sorted((PROTO / "examples").glob("*.json")):
        doc = _load(path)
        for index, ex in enumerate(doc["exchanges"]):
            request = ex["request"]
            method = request.get("method")
            setup_methods = {s.get("method") for s in ex.get("setup", [])}
            reason = None
            if "id" not in request:
                reason = "a notification"
            elif ex.get("response") is None or "exitCode" in ex.get("match", {}):
                reason = "no reply / exit code"
            elif ex.get("awaitSetup") is False:
                reason = "needs unawaited setup"
            elif ex.get("needsIdentityService") is True:
                reason = "needs the identity service"
            elif ("needsIdentityService" not in ex and doc.get("status") != "implemented"
                  and (setup_methods & SERVICE_METHODS
                       or (method in SERVICE_METHODS and "result" in (ex.get("response") or {})))):
                reason = "needs the identity service (planned file without the flag: by method)"
            elif any(m.startswith("diagnostics/") for m in setup_methods | {method}):
                reason = "test-only diagnostics"
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            yield pytest.param(path.stem, doc.get("status"), ex, id="%s-%d" % (path.stem, index), marks=marks)


def _get(obj, path):
    cur = obj
    for part in path.split(".") if path else []:
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return MISSING
    return cur


def _delete(obj, path):
    *parents, last = path.split(".")
    cur = _get(obj, ".".join(parents))
    if isinstance(cur, dict):
        cur.pop(last, None)


def _normalise_unordered(obj, paths):
    for p in paths:
        value = _get(obj, p)
        if isinstance(value, list):
            value.sort(key=lambda v: json.dumps(v, sort_keys=True))


@pytest.fixture(scope="module")
def implemented_methods(sidecar_bin, tmp_path_factory):
    env_dir = tmp_path_factory.mktemp("caps")
    with a.SidecarClient(sidecar_bin, env={"HOME": str(env_dir), "PATH": "/usr/bin:/bin"},
                         client_id=APP_ID, cache="memory", timeout=QUICK) as sidecar:
        caps = sidecar.server_info.capabilities
    return set(caps.get("methods", [])) | set(caps.get("notifications", []))


@pytest.mark.parametrize("fname,status,ex", list(_exchanges()))
def test_replay_example(fname, status, ex, sidecar_bin, base_env, implemented_methods):
    request, expected = ex["request"], ex["response"]
    method = request["method"]
    if status != "implemented" and method not in implemented_methods:
        pytest.skip("%s is not implemented by this binary" % method)
    cli = ex.get("cli", [] if method == "initialize" else ["--client-id", APP_ID])
    with a.SidecarClient(sidecar_bin, args=cli, env=base_env, initialize=False, timeout=QUICK) as sidecar:
        for message in ex.get("setup", []):
            sidecar.call(message["method"], message.get("params"))
        reply = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = sidecar.call(method, request.get("params"))
        except a.SidecarProcessError:
            raise
        except a.SidecarError as err:
            reply["error"] = err.raw

    _validate(reply, "JsonRpc.schema.json#/$defs/response")
    if "error" in reply:
        _validate(reply["error"], "ErrorObject.schema.json")
    else:
        _validate(reply["result"], METHODS[method]["result"]["schema"]["$ref"])
    assert ("error" in reply) == ("error" in expected), "reply %s\nexpected %s" % (reply, expected)

    match = ex.get("match", {})
    actual, wanted = copy.deepcopy(reply), copy.deepcopy(expected)
    unordered = match.get("unordered", [])
    _normalise_unordered(actual, unordered)
    _normalise_unordered(wanted, unordered)
    for path in match.get("exact", []):
        assert _get(actual, path) == _get(wanted, path), "%s: %r != %r" % (path, _get(actual, path), _get(wanted, path))
    if not match.get("schemaOnly"):
        for path in match.get("ignore", []):
            _delete(actual, path)
            _delete(wanted, path)
        assert actual == wanted
