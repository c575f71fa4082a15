#!/usr/bin/env bash
# Fuzzes framing + JSON parsing + JSON-RPC dispatch with libFuzzer (Sources/FuzzDispatch), or
# with --target assertion the client assertion sources (Sources/FuzzAssertion: the assertion
# file's content, a command's output, a CI endpoint's answer, and what is computed from `exp`).
#
#   scripts/fuzz.sh [--target dispatch|assertion] [SECONDS | -runs=N] [other libFuzzer flags...]
#
# Default: 60 seconds. Builds the target with -sanitize=fuzzer,address into .build-fuzz
# (apart from the normal builds; FUZZ_CONFIGURATION=release for an optimized build, about
# three times the inputs per second for a longer build), seeds it from protocol/examples plus
# framing cases
# (Tests/fuzz/make_seeds.py), replays the regression inputs in Tests/fuzz/regressions first,
# then fuzzes. The corpus grows in .build-fuzz/work/corpus and is kept between runs.
# Exit status: 0 when nothing was found; a crash, a hang (-timeout), a leak or an
# out-of-memory stops libFuzzer with its input saved under .build-fuzz/work/artifacts/
# and a non-zero status. Reproduce one without sanitizers: swift build --product
# FuzzDispatch && .build/debug/FuzzDispatch ARTIFACT (prints the replies).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

target=dispatch
if [[ $# -gt 1 && "$1" == --target ]]; then target="$2"; shift 2; fi
case "$target" in
    dispatch) product=FuzzDispatch; regression_dir=Tests/fuzz/regressions ;;
    assertion) product=FuzzAssertion; regression_dir=Tests/fuzz/regressions-assertion ;;
    *) echo "fuzz: unknown target $target (dispatch or assertion)" >&2; exit 64 ;;
esac

limit="-max_total_time=60"
if [[ $# -gt 0 && "$1" =~ ^[0-9]+$ ]]; then limit="-max_total_time=$1"; shift
elif [[ $# -gt 0 && "$1" == -runs=* ]]; then limit="$1"; shift
fi

build=.build-fuzz
work="$build/work"
[[ "$target" == dispatch ]] || work="$build/work-$target"
configuration="${FUZZ_CONFIGURATION:-debug}"
echo "fuzz: building $product ($configuration) with libFuzzer and AddressSanitizer" >&2
swift build --product "$product" --build-path "$build" -c "$configuration" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >&2
fuzzer="$build/$configuration/$product"
mkdir -p "$work/corpus" "$work/artifacts"
if [[ "$target" == dispatch ]]; then
    python3 Tests/fuzz/make_seeds.py "$work/seeds" "$work/dict"
else
    python3 Tests/fuzz/make_assertion_seeds.py "$work/seeds" "$work/dict"
fi

# Leaks are still checked once at exit, less libdispatch's continuation cache (lsan.supp).
export LSAN_OPTIONS="suppressions=$PWD/Tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# Per-input leak detection is off: Swift frees task and thread memory after an input's run
# returns, so libFuzzer would run LeakSanitizer after nearly every input (90% of the time, and
# it found nothing); -rss_limit_mb still stops a run whose memory grows.
flags=(-dict="$work/dict" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -detect_leaks=0
       -artifact_prefix="$work/artifacts/" -print_final_stats=1)
regressions=("$regression_dir"/*)
if [[ -e "${regressions[0]}" ]]; then
    echo "fuzz: replaying ${#regressions[@]} regression inputs" >&2
    "$fuzzer" "${flags[@]}" "${regressions[@]}"
fi
exec "$fuzzer" "${flags[@]}" "$limit" "$@" "$work/corpus" "$work/seeds"
