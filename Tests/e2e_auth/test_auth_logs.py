"""--log-level trace through full sign-ins: stderr carries no access token, refresh token,
authorization code, device code, PKCE verifier or full ID token."""
from __future__ import annotations

import json

import sidecar as sc
from auth_e2e import ALICE, BOB, SCOPES, read_cache

SHORT = 240


def secrets_of(value: str) -> list[str]:
    """The string itself plus the parts of it that are secret on their own."""
    out = [value]
    if value.startswith("eyJ") and value.count(".") == 2:
        out.append(value.rsplit(".", 1)[1])          # a JWT's signature
        out.append(value.split(".")[1][:60])          # the start of its payload
    elif ".MOCK." in value:
        out.append(value.split(".MOCK.", 1)[1])      # the random part of a mock code / token
    elif value.startswith("DAQABAAEAAAB"):
        out.append(value[len("DAQABAAEAAAB"):])
    return [s for s in out if len(s) >= 16]


def test_trace_logs_carry_no_secrets(launch, mock, tmp_path):
    mock.admin.config(device_code_interval=1)
    path = str(tmp_path / "logs" / "cache.json")
    p = launch("--log-level", "trace", cache=path, stderr_name="trace.log")
    found: dict[str, str] = {}
    labels: set[str] = set()

    def collect(label, value):
        if isinstance(value, str) and value:
            found.setdefault(value, label)
            labels.add(label)

    def collect_cache():
        for kind in ("AccessToken", "RefreshToken", "IdToken"):
            for e in read_cache(path).get(kind, {}).values():
                collect(f"cache {kind}", e["secret"])

    first = p.sign_in()
    collect("accessToken (browser)", first["accessToken"])
    collect("idToken (browser)", first.get("idToken"))
    collect_cache()
    mock.admin.config(access_token_lifetime=SHORT)
    r = p.silent(forceRefresh=True)
    collect("accessToken (forced refresh)", r["accessToken"])
    collect("idToken (forced refresh)", r.get("idToken"))
    collect_cache()
    r = p.silent()  # expired by the margin: another refresh
    collect("accessToken (refresh)", r["accessToken"])
    collect_cache()
    mock.admin.config(access_token_lifetime=3600)
    r = p.device_sign_in(BOB)
    collect("accessToken (device code)", r["accessToken"])
    collect("idToken (device code)", r.get("idToken"))
    collect_cache()
    p.ok("getAccounts")
    p.ok("getCurrentAccount")
    p.ok("signout", {"account": {"username": BOB}})
    p.error("acquireTokenSilent", {"scopes": SCOPES, "account": {"username": BOB}}, -51011)
    mock.admin.config(access_token_lifetime=SHORT)
    p.silent(forceRefresh=True)
    collect_cache()
    mock.admin.revoke(username=ALICE)
    p.error("acquireTokenSilent", {"scopes": SCOPES}, -50002)  # the refresh fails: invalid_grant
    rest, code = p.finish()
    assert code == 0, (code, rest)

    # What the sidecar sent to the token endpoint: codes, verifiers, refresh and device codes.
    for entry in mock.admin.log("token"):
        form = entry.get("form") or {}
        for key in ("code", "code_verifier", "refresh_token", "device_code"):
            collect(f"token request {key}", form.get(key))
    for needed in ("token request code", "token request code_verifier", "token request refresh_token",
                   "token request device_code", "cache RefreshToken", "idToken (browser)"):
        assert needed in labels, f"the test collected no {needed}: {sorted(labels)}"

    # error.data (and every other reply) never carries a secret either; results are the
    # only place tokens may appear.
    for msg in p.received:
        if isinstance(msg, dict) and "error" in msg:
            text = json.dumps(msg)
            for value, label in found.items():
                assert value not in text, f"{label} in an error reply: {text[:300]}"

    log = p.stderr_text()
    assert "acquireToken" in log and len(log.splitlines()) > 10, "trace logging wrote (almost) nothing"
    leaks = []
    for value, label in found.items():
        for piece in secrets_of(value):
            if piece in log:
                line = next(l for l in log.splitlines() if piece in l)
                leaks.append(f"{label}: {piece[:12]}… in log line {line[:200]!r}")
                break
    assert not leaks, "secrets in the trace log:\n" + "\n".join(leaks)
