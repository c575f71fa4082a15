"""Proof-of-possession through the Linux identity broker (#49 item 3): the stand-in broker
(broker_standin.py, not Microsoft's) holds the key, gets its PoP token from the mock (`--idp`:
`token_type=pop`, `req_cnf` naming its key) and signs the requests; the sidecar sends
`popParams` as MSALRuntime does (checked against MSALRuntime itself in
test_broker_msalruntime.py) and answers the broker's signed HTTP request, which the mock's PoP
resource and the independent verifier (Tests/e2e/shr_verifier.py) accept. The sidecar makes no
key of its own (`broker` "required")."""
from __future__ import annotations

import os

import jwt
import pytest

import shr_verifier
from broker_session import StandInBroker, missing
from mock_idp.testing import http
from test_broker import GRAPH_SCOPES


@pytest.fixture
def idp_broker(tmp_path, mock):
    absent = missing()
    if absent:
        if os.environ.get("CI"):
            pytest.fail(f"missing {absent}: scripts/setup.sh installs it")
        pytest.skip(f"missing {absent}")
    broker = StandInBroker(tmp_path, "--idp", mock.url, "--idp-ca", mock.ca_file)
    yield broker
    broker.stop()


def test_the_brokers_pop_token_and_signed_request_reach_the_resource(launch, mock, idp_broker, tmp_path):
    cache = str(tmp_path / "cache" / "cache.json")
    key = tmp_path / "cache.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    p = launch(env={"DBUS_SESSION_BUS_ADDRESS": idp_broker.address}, cache={"path": cache, "encryption": {"keyFile": str(key)}},
               broker="required")
    p.sign_in(scopes=GRAPH_SCOPES, loginHint="alice@contoso.com")
    # No query: MSALRuntime's popParams carry the path only (uriPath), so the broker's SHR has no `q`.
    url = mock.url + "/pop/resource/items"
    r = p.silent(scopes=GRAPH_SCOPES, proofOfPossession={"method": "POST", "url": url})
    assert r["tokenType"] == "pop" and r["authorizationHeader"] == "PoP " + r["signedHttpRequest"]
    payload = shr_verifier.verify(r["signedHttpRequest"], "POST", url)
    assert payload["at"] == r["accessToken"]
    kid = jwt.decode(r["accessToken"], options={"verify_signature": False})["cnf"]["kid"]
    assert kid == shr_verifier.jwk_thumbprint(payload["cnf"]["jwk"])
    # The mock issued it for the broker's key (req_cnf), and its resource accepts the broker's SHR.
    redeemed = mock.admin.log("token:device_code")
    assert redeemed and redeemed[-1]["form"]["token_type"] == "pop"
    ok = http("POST", url, mock.ca_file, headers={"Authorization": r["authorizationHeader"]})
    assert ok.status == 200, ok.text
    assert ok.json()["kid"] == kid
    refused = http("POST", mock.url + "/pop/resource/other", mock.ca_file, headers={"Authorization": r["authorizationHeader"]})
    assert refused.status == 401
    # signHttpRequest: a fresh signature by the broker for another request, the same token, no
    # new token request at the identity service.
    before = len(mock.admin.log("token:device_code"))
    other = mock.url + "/pop/resource/other"
    signed = p.ok("signHttpRequest", {"scopes": GRAPH_SCOPES, "method": "GET", "url": other})
    again = shr_verifier.verify(signed["signedHttpRequest"], "GET", other)
    assert again["at"] == r["accessToken"] and again["cnf"]["jwk"] == payload["cnf"]["jwk"]
    assert http("GET", other, mock.ca_file, headers={"Authorization": signed["authorizationHeader"]}).status == 200
    assert len(mock.admin.log("token:device_code")) == before
    # Every PoP call carried popParams; a bearer request still gets a bearer token.
    sent = [c["request"]["authParameters"]["popParams"] for c in idp_broker.calls("acquireTokenSilently")]
    assert {"httpMethod": "POST", "uriHost": mock.url.split("//")[1], "uriPath": "/pop/resource/items", "nonce": "",
            "clientClaims": "", "homeAccountId": ""} in sent
    bearer = p.silent(scopes=GRAPH_SCOPES)
    assert bearer["tokenType"] == "Bearer" and "signedHttpRequest" not in bearer
    # No key of the sidecar's own (an encrypted cache would keep it beside itself): the broker holds it.
    assert not os.path.exists(cache + ".pop-key")
