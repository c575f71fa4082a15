#!/usr/bin/env python3
"""Writes the fuzz target's seed corpus and dictionary (see scripts/fuzz.sh).

    make_seeds.py SEED_DIR DICT_FILE

Seeds: every exchange of protocol/examples/*.json as one input stream (an `initialize`
first when the exchange needs one, its setup, its request, the client's replies to server
requests), each in NDJSON and in LSP framing, and as a batch; plus framing cases (split
headers, garbage, NUL bytes, oversized lengths, whitespace, unframeable starts).
The dictionary: JSON-RPC and protocol member names, method names, framing tokens.
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "protocol", "examples")
INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
              "params": {"clientId": "11111111-2222-3333-4444-555555555555"}}


def compact(message):
    return json.dumps(message, separators=(",", ":")).encode()


def ndjson(messages):
    return b"".join(compact(m) + b"\n" for m in messages)


def lsp(messages):
    out = b""
    for m in messages:
        body = compact(m)
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def exchange_streams(example):
    """The message sequence of each exchange of one example file."""
    for exchange in example.get("exchanges", []):
        messages = list(exchange.get("setup", []))
        request = exchange.get("request")
        if request is None:
            continue
        sends_initialize = any(isinstance(m, dict) and m.get("method") == "initialize"
                               for m in messages + [request])
        if not sends_initialize and not exchange.get("cli"):
            messages.insert(0, INITIALIZE)
        messages += request if isinstance(request, list) else [request]
        for server_message in exchange.get("serverMessages", []):
            if isinstance(server_message, dict) and "reply" in server_message:
                messages.append(server_message["reply"])
        yield messages


FRAMING_CASES = [
    b"",
    b"\n\n   \t\r\n",
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":4\x00,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
    b'garbage\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"exit"}]\n',
    b"[]\n[1,2]\n{}\nnull\n",
    b'Content-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}',
    b'Content-Length: 40\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n'
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    b"Content-Length: 99999999999999999999\r\n\r\n{}",
    b"Content-Length: -1\r\n\r\n",
    b"Content-Length: 10\r\nContent-Length: 11\r\n\r\n0123456789a",
    b"Content-Length: 5\r\n\r\n{\"a\":",
    b"C{}\n",
    b'c{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"shutdown","params":null}\n{"jsonrpc":"2.0","method":"exit","params":null}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"diagnostics/sleep","params":{"ms":1}}\n',
    b'{"jsonrpc":"2.0","id":"a","result":{}}\n{"jsonrpc":"2.0","id":"b","error":{"code":1,"message":"x"}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}\n' * 3,
    b'{"a":"\\ud800"}\n{"a":"\xff"}\n{"a":1e999}\n{"a":9223372036854775808}\n',
    b"[" * 600 + b"]" * 600 + b"\n",
    # One seed per shape limit, just over and just under it (the fuzz harness's small
    # limits, DispatchHarness: 16 batch members, 16 object members, 256 values).
    b"[" + b",".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i for i in range(17)) + b"]\n",
    b"[" + b",".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i for i in range(16)) + b"]\n",
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{' + b",".join(b'"k%d":1' % i for i in range(17)) + b"}}\n",
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[' + b",".join([b"[]"] * 257) + b"]}}\n",
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a:b,c\\":[{"}}\n',

]

DICTIONARY = [
    "jsonrpc", "2.0", "id", "method", "params", "result", "error", "code", "message", "data",
    "Content-Length: ", "Content-Type: ", "\\x0D\\x0A\\x0D\\x0A", "\\x00", "null", "true", "false",
    "$/cancelRequest", "exit", "shutdown", "initialize", "ping", "getDeviceInformation",
    "getCurrentAccount", "getAccounts", "setCurrentAccount", "acquireToken", "acquireTokenSilent", "signout",
    "callGraph", "openUrl", "clientId", "authority", "redirectUri", "knownAuthorities", "scopes",
    "graphEndpoint", "cache", "persistence", "memory", "path", "sharedDeviceMode",
    "clientCapabilities", "browser", "client", "system", "authorityType", "instanceDiscovery",
    "httpTimeoutSeconds", "interactiveTimeoutSeconds", "promptType", "loginHint", "domainHint",
    "account", "homeAccountId", "username", "claims", "extraScopesToConsent",
    "extraQueryParameters", "flow", "deviceCode", "forceRefresh", "correlationId",
    "signoutFromBrowser", "apiVersion", "query", "headers", "body", "timeoutSeconds", "allPages",
    "https://login.microsoftonline.com/common", "b2c", "oidc", "adfs", "ciam",
]


def main(seed_dir, dict_file):
    os.makedirs(seed_dir, exist_ok=True)
    seeds = list(FRAMING_CASES)
    for path in sorted(glob.glob(os.path.join(EXAMPLES, "*.json"))):
        with open(path, encoding="utf-8") as f:
            example = json.load(f)
        for messages in exchange_streams(example):
            seeds += [ndjson(messages), lsp(messages), compact(messages) + b"\n"]
    for number, seed in enumerate(seeds):
        with open(os.path.join(seed_dir, "seed-%03d" % number), "wb") as f:
            f.write(seed)
    with open(dict_file, "w", encoding="utf-8") as f:
        f.writelines('"%s"\n' % word.replace('"', '\\"') for word in DICTIONARY)
    print("fuzz: %d seeds in %s" % (len(seeds), seed_dir), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
