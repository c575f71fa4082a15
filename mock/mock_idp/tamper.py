"""ID tokens with a chosen defect, for testing a client's ID-token validation.

``POST /_admin/id_token {"tamper": MODE, "times": N}``: the next N token responses that carry
an ID token (Microsoft-shaped endpoints and generic issuers alike) get one with that defect;
``times`` -1 = until cleared; ``"none"`` (or a reset) clears it. Access tokens are untouched.
"""

from .jwtsign import b64url, b64url_decode

OTHER_HOST = "https://wrong-issuer.example"            # `issuer`: same path, another host
OTHER_CLIENT_ID = "99999999-9999-4999-8999-999999999999"   # `audience`
SHIFT = 3600   # `expired` / `not_yet_valid`: an hour, well beyond any clock skew allowance


def _issuer(app, claims):
    claims["iss"] = claims["iss"].replace(app.base_url, OTHER_HOST, 1)


def _audience(app, claims):
    claims["aud"] = OTHER_CLIENT_ID


def _expired(app, claims):
    life = claims["exp"] - claims["iat"]
    claims["exp"] = claims["iat"] - SHIFT
    claims["iat"] = claims["nbf"] = claims["exp"] - life


def _not_yet_valid(app, claims):
    life = claims["exp"] - claims["iat"]
    claims["iat"] = claims["nbf"] = claims["iat"] + SHIFT
    claims["exp"] = claims["iat"] + life


def _nonce(app, claims):
    claims["nonce"] = "not-the-nonce-sent-" + (claims.get("nonce") or "")


DEFECTS = {"signature": None, "issuer": _issuer, "audience": _audience, "expired": _expired,
           "not_yet_valid": _not_yet_valid, "nonce": _nonce}


def arm(state, tamper=None, times=1):
    """The admin control; returns what is armed (None: nothing)."""
    times = int(times)
    if tamper in (None, "none") or times == 0:
        state.id_token_tamper = None
    elif tamper not in DEFECTS:
        raise ValueError("tamper must be one of %s or none" % sorted(DEFECTS))
    else:
        state.id_token_tamper = {"tamper": tamper, "times": times}
    return {"id_token_tamper": state.id_token_tamper}


def _take(state):
    armed = state.id_token_tamper
    if armed is None:
        return None
    if armed["times"] > 0:
        armed["times"] -= 1
        if armed["times"] == 0:
            state.id_token_tamper = None
    return armed["tamper"]


def sign_id_token(app, signer, claims):
    """Sign `claims` as an ID token, with the armed defect (if any). Call under the state lock."""
    mode = _take(app.state)
    if DEFECTS.get(mode):
        claims = dict(claims)
        DEFECTS[mode](app, claims)
    token = signer.sign(claims)
    if mode == "signature":   # flip the signature's last four bytes
        signing_input, signature = token.rsplit(".", 1)
        raw = bytearray(b64url_decode(signature))
        raw[-4:] = bytes(b ^ 0xFF for b in raw[-4:])
        token = signing_input + "." + b64url(bytes(raw))
    return token
