#!/usr/bin/env bash
# Installs what building and testing need, only what is missing: the C libraries'
# development packages (libcurl, jansson), jq for the shell recipes, git and kubectl (the
# adapters' real clients), and the Python test packages. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="/opt/swift/usr/bin:$PATH"
command -v swift >/dev/null || { echo "setup: Swift 6 is needed (swift not on PATH)" >&2; exit 1; }

missing=()
for pkg in libcurl4-openssl-dev libjansson-dev jq pkg-config; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
command -v git >/dev/null || missing+=(git)
command -v kubectl >/dev/null || missing+=(kubernetes-client)  # Debian's kubectl
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c "import pytest, jsonschema, cryptography, msal, requests, azure.identity" 2>/dev/null \
   || [ "$(python3 -c 'import msal; print(msal.__version__)' 2>/dev/null)" != "1.39.0" ]; then
    echo "setup: installing Python test packages" >&2
    python3 -m pip install -q --disable-pip-version-check -r requirements-test.txt
fi
