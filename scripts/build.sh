#!/usr/bin/env bash
# Builds the release binary (static Swift runtime: fastest start-up) and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The build checks the house: a warning, or an import of a module the target does not declare
# in Package.swift, fails the build (STRICT_BUILD_FLAGS, shared with scripts/test.sh).
STRICT_BUILD_FLAGS=(-Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error)
swift build -c release --static-swift-stdlib --product auth-sidecar "${STRICT_BUILD_FLAGS[@]}" >&2
echo "$PWD/.build/release/auth-sidecar"
