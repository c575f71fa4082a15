#!/usr/bin/env bash
# The main job: installs what building needs, builds, and walks a scripted session through
# the sidecar against the bundled mock, one line per step (--verbose: every JSON-RPC exchange
# too). The compiler's output is shown only when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
python=$(scripts/mock-python.sh)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "demo: building auth-sidecar (release; the first build takes a few minutes, later ones seconds)..."
started=$SECONDS
if ! binary=$(scripts/build.sh 2>"$log"); then
    cat "$log" >&2
    echo "demo: the build failed (compiler output above)" >&2
    exit 1
fi
echo "demo: built in $((SECONDS - started)) s: $binary"
exec "$python" scripts/demo.py "$@" "$binary"
