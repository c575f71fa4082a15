#!/usr/bin/env python3
"""Walks a scripted session through the sidecar and prints every JSON-RPC exchange.

Usage: demo.py BINARY
"""
import json
import subprocess
import sys

STEPS = [
    ("initialize", {"clientId": "00000000-0000-0000-0000-000000000001", "cache": {"persistence": "memory"}}),
    ("getDeviceInformation", {}),
    ("ping", {}),
    ("acquireTokenSilent", {"scopes": ["user.read"]}),
    ("shutdown", None),
]


def main(binary: str) -> int:
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for number, (method, params) in enumerate(STEPS, start=1):
        request = {"jsonrpc": "2.0", "id": number, "method": method}
        if params is not None:
            request["params"] = params
        line = json.dumps(request)
        print(f"--> {line}")
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        reply = proc.stdout.readline()
        if not reply:
            print("the sidecar closed its output", file=sys.stderr)
            return 1
        print(f"<-- {reply.rstrip()}\n")
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "exit"}) + "\n")
    proc.stdin.close()
    status = proc.wait(timeout=10)
    print(f"sidecar exited with status {status}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
