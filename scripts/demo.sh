#!/usr/bin/env bash
# The main job: installs what is missing, builds, and walks a scripted session through the
# sidecar, printing each JSON-RPC exchange.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
binary="$(scripts/build.sh)"
exec python3 scripts/demo.py "$binary"
