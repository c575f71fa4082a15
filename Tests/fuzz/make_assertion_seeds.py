#!/usr/bin/env python3
"""Writes the assertion fuzz target's seeds and dictionary (scripts/fuzz.sh --target assertion).

    make_assertion_seeds.py SEED_DIR DICT_FILE [REGRESSION_DIR]

An input is a selector byte (0: the assertion file, 1: a command's output, 2: a CI endpoint's
answer, its next byte picking the status) and what that source gives. Seeds: JWTs (unsigned,
the signature is not checked here) whose `exp` is ordinary, absent, a string, a float, and the
extremes, each through the three sources; torn and padded ones. With REGRESSION_DIR, the
inputs that crashed the process before issue #47 (an `exp` near Int64.min or max) are written
there instead (they are kept in Tests/fuzz/regressions-assertion).
"""
import base64
import json
import os
import sys


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims, header=None) -> str:
    header = header or {"alg": "RS256", "typ": "JWT", "kid": "k"}
    return ".".join([b64(json.dumps(header).encode()), b64(json.dumps(claims).encode()), b64(b"\x01" * 256)])


def through(token: str) -> list[bytes]:
    """The token as each source gives it."""
    return [b"\x00" + token.encode() + b"\n", b"\x01" + token.encode(),
            b"\x02\x00" + json.dumps({"count": 1, "value": token}).encode()]


BASE = {"iss": "https://ci.example", "sub": "repo:x", "aud": "api://AzureADTokenExchange"}
EXTREMES = [-2**63, -2**63 + 1, 2**63 - 1, -1, 0, 2**62]


def crashers() -> dict[str, bytes]:
    found = {}
    for exp in EXTREMES[:3]:
        for i, data in enumerate(through(jwt({**BASE, "exp": exp}))):
            found[f"exp-{'min' if exp < 0 else 'max'}{'-plus-1' if exp == -2**63 + 1 else ''}-source-{i}"] = data
    return found


def main() -> None:
    if len(sys.argv) == 4:
        os.makedirs(sys.argv[3], exist_ok=True)
        for name, data in crashers().items():
            with open(os.path.join(sys.argv[3], name), "wb") as f:
                f.write(data)
        return
    seeds, dictionary = sys.argv[1], sys.argv[2]
    os.makedirs(seeds, exist_ok=True)
    tokens = [jwt({**BASE, "exp": e}) for e in [1700000000, *EXTREMES]]
    tokens += [jwt(BASE), jwt({**BASE, "exp": "1700000000"}), jwt({**BASE, "exp": 1.7e9}), jwt({**BASE, "exp": 1e300})]
    whole = tokens[0]
    tokens += [whole[: len(whole) // 3], "", "a.b", "..", whole + "\n\n", "  " + whole]
    inputs = [data for token in tokens for data in through(token)]
    inputs += [b"\x02\x02{}", b"\x02\x03not json", b"\x02\x00[]", b"\x02\x00{\"value\":1}"]
    for i, data in enumerate(inputs):
        with open(os.path.join(seeds, f"seed-{i:03d}"), "wb") as f:
            f.write(data)
    words = ["exp", "value", "count", "alg", "RS256", "typ", "JWT", "9223372036854775807", "-9223372036854775808", "1e308",
             "eyJ", "."]
    with open(dictionary, "w") as f:
        f.writelines(json.dumps(w) + "\n" for w in words)


if __name__ == "__main__":
    main()
