#!/usr/bin/env bash
# Prints a Python that can run the bundled mock identity platform (mock needs the
# standard library and `cryptography`): the test environment's (.venv/), the first python3,
# Debian's. When none has it, installs Debian's python3-cryptography (as root or with
# passwordless sudo); else says what to install and exits 1. Used by scripts/demo.sh and
# scripts/try.sh, which need none of the other test packages.
set -euo pipefail
cd "$(dirname "$0")/.."
for python in "$PWD/.venv/bin/python" python3 /usr/bin/python3; do
    if command -v "$python" >/dev/null && "$python" -c 'import cryptography' 2>/dev/null; then
        command -v "$python"; exit 0
    fi
done
sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo -n"
echo "installing python3-cryptography (the mock identity platform needs it)" >&2
if $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-cryptography >/dev/null 2>&1 \
    && /usr/bin/python3 -c 'import cryptography' 2>/dev/null; then
    echo /usr/bin/python3; exit 0
fi
echo "the mock identity platform needs Python's 'cryptography': apt-get install python3-cryptography" >&2
exit 1
