#!/usr/bin/env bash
# Builds the release binary (static Swift runtime: fastest start-up) and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --static-swift-stdlib --product auth-sidecar >&2
echo "$PWD/.build/release/auth-sidecar"
