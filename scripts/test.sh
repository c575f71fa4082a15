#!/usr/bin/env bash
# Runs every test: Swift unit tests (also under ThreadSanitizer), a minute of fuzzing, then
# the end-to-end, protocol and mock suites against the real release binary, with the Python
# of the test virtual environment (.venv/). Installs what is missing first. Exit status 0
# only if all pass.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# Warnings and undeclared target imports fail the build (as in scripts/build.sh).
STRICT_BUILD_FLAGS=(-Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error)

scripts/setup.sh || exit 1
# The test packages live in .venv/ (scripts/setup.sh): its bin first on PATH, so every suite,
# and every python3 a test spawns (the mock, scripted browsers, run-tests scripts), uses it.
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" PYTHON="$PWD/.venv/bin/python"
unset PYTHONHOME
AUTH_SIDECAR_BIN="$(scripts/build.sh)" || { echo "test: release build failed" >&2; exit 1; }
export AUTH_SIDECAR_BIN

failed=()
passed=0
run() {
    local name="$1"; shift
    local start=$SECONDS
    echo "=== $name: $*"
    if "$@"; then passed=$((passed + 1)); else failed+=("$name"); fi
    echo "=== $name: $((SECONDS - start)) s"
}

# Each module's imports against ARCHITECTURE.md's module table and Package.swift, the tables'
# paths, and the checker's own tests (it must catch a violation).
run "architecture" bash -c "python3 scripts/check-architecture.py && python3 -m pytest -q Tests/architecture"
# The benchmarks' shared code (benchmarks/benchlib: the chart, tables, percentiles, cache
# files) and that each benchmark script starts; a few seconds, no binary needed.
run "benchmark helpers" python3 -m pytest -q Tests/benchmarks
# The committed .swift-format, applied once: new code keeps it (scripts/format.sh applies it).
run "format" swift format lint --strict --recursive Sources Tests Package.swift
run "swift unit tests" swift test "${STRICT_BUILD_FLAGS[@]}"
# The same unit tests built with ThreadSanitizer, in a build directory of their own, one at a
# time: slowed down by TSan and run side by side on two cores, tests that wait on sockets or
# child processes ran past their own deadlines. (A TSan report makes the suite fail.)
run "swift unit tests (ThreadSanitizer)" bash -c \
    "swift build --build-tests --sanitize=thread --build-path .build-tsan ${STRICT_BUILD_FLAGS[*]} && swift test --skip-build --sanitize=thread --build-path .build-tsan --no-parallel"
# libFuzzer over framing, JSON and dispatch for a minute (scripts/fuzz.sh; longer runs by hand).
run "fuzz (60 s)" scripts/fuzz.sh 60
run "mock identity platform" bash -c "cd mock && python3 -m pytest -q"
run "protocol spec" python3 -m pytest -q Tests/protocol
run "JSON-RPC end to end" python3 -m pytest -q Tests/e2e
run "auth end to end" python3 -m pytest -q Tests/e2e_auth
for suite in Tests/e2e_authorities; do
    [ -d "$suite" ] && run "$(basename "$suite")" python3 -m pytest -q "$suite"
done
# scripts/package.sh on the binary above, then each package installed as a user would (a fresh
# venv, apt, an npm project, the tarball's install.sh) with the toolchain hidden (Tests/packages).
run "packages" python3 -m pytest -q Tests/packages
for client in clients/python/run-tests clients/node/run-tests clients/run-editor-tests; do
    [ -x "$client" ] && run "$client" "$client"
done

echo
echo "suites: $passed passed, ${#failed[@]} failed"
if ((${#failed[@]})); then
    echo "test: FAILED: ${failed[*]}" >&2
    exit 1
fi
