"""Proof-of-possession through the client: ``proof_of_possession`` asks for a PoP token whose
``authorization_header`` is ``PoP <signed HTTP request>``; ``sign_http_request`` signs afresh."""
from __future__ import annotations

import base64
import json

import pytest

import auth_sidecar as a
from conftest import ALICE


def _payload(shr: str) -> dict:
    part = shr.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_a_pop_token_and_a_signed_http_request(sidecar_bin, auth_env, auth_config, mock):
    url = mock.url + "/pop/resource?x=1"
    with a.SidecarClient(sidecar_bin, env=auth_env(), timeout=10, **auth_config) as sidecar:
        sidecar.acquire_token(["User.Read"], login_hint=ALICE, timeout=25)
        pop = sidecar.acquire_token_silent(["User.Read"], proof_of_possession={"method": "post", "url": url})
        assert pop.token_type == "pop" and pop.signed_http_request
        assert pop.authorization_header == "PoP " + pop.signed_http_request
        shr = _payload(pop.signed_http_request)
        assert (shr["m"], shr["p"], shr["q"], shr["at"]) == ("POST", "/pop/resource", [[], "x=1"], pop.access_token)
        signed = sidecar.sign_http_request("GET", url, nonce="n-1", client_claims="u=/x", scopes=["User.Read"])
        assert isinstance(signed, a.SignedHttpRequest) and signed.from_cache and signed.token_type == "pop"
        again = _payload(signed.signed_http_request)
        assert (again["m"], again["nonce"], again["client_claims"], again["at"]) == ("GET", "n-1", "u=/x", pop.access_token)
        assert again["cnf"] == shr["cnf"]
        # kubelogin's Azure Arc shape: a resource id, the SHR's u for every request (no m, p).
        arc = sidecar.sign_http_request(resource_id="/subscriptions/1/connectedClusters/c", scopes=["User.Read"])
        arc_payload = _payload(arc.signed_http_request)
        assert arc_payload["u"] == "/subscriptions/1/connectedClusters/c" and "m" not in arc_payload and "p" not in arc_payload
        with pytest.raises(TypeError):
            sidecar.sign_http_request("GET", url, resource_id="/x")
        bearer = sidecar.acquire_token_silent(["User.Read"])
        assert bearer.authorization_header.startswith("Bearer ") and bearer.signed_http_request is None
        with pytest.raises(a.InvalidParamsError) as refused:
            sidecar.sign_http_request("GET", "http://example.com/")
        assert refused.value.member == "url"
