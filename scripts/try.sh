#!/usr/bin/env bash
# Try auth-sidecar by hand against the bundled mock identity platform (mock): builds
# the binary, starts the mock, and writes a ready configuration under .try/ in this
# repository, so the README's snippets and every client's quick start run as written.
# Without Swift, an installed auth-sidecar (a package, README "Install") is used instead of
# building one. From a package, without a clone: `eval "$(auth-sidecar-try)"` does the same.
#
#   scripts/try.sh              build, start in the background, print what to `source`
#   scripts/try.sh --foreground the same, but stay in the foreground until Ctrl-C
#   scripts/try.sh env          print the export lines (eval "$(scripts/try.sh env)")
#   scripts/try.sh stop         stop the mock
#
# Nothing outside .try/ is written: the configuration is named by AUTH_SIDECAR_CONFIG (your
# ~/.config/auth-sidecar/config.json is left alone), the token cache is .try/cache/, the
# agent socket .try/agent.sock. What the export lines set, and why: scripts/try.py.
# TRY_DIR=DIR uses DIR instead of .try/; with AUTH_SIDECAR_BIN set, that binary is used
# instead of building one (the tests do both), e.g.
#   AUTH_SIDECAR_BIN=$(command -v auth-sidecar) scripts/try.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
dir="${TRY_DIR:-$repo/.try}"
pid_file="$dir/try.pid"

say() { echo "try: $*" >&2; }

running() { [[ -s "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; }

stop() {
    if running; then
        local pid; pid=$(cat "$pid_file")
        kill -TERM "$pid"
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        say "stopped the mock identity platform"
    elif [[ ${1:-} == quiet ]]; then
        say "stopped the mock identity platform"  # Ctrl-C reached it first
    else
        say "not running"
    fi
    rm -f "$pid_file" "$dir/env"
}

instructions() {
    cat >&2 <<EOF

The mock identity platform is running. In any shell, point auth-sidecar and its clients at it:

    source ${dir#$repo/}/env            # or: eval "\$(scripts/try.sh env)"

Then run the README's snippets and the clients' quick starts as written. The sign-in is
alice@contoso.com: the browser is a script that clicks through, and device codes are
approved within a second (as if you signed in on another device). The .try cache holds the
mock's tokens only and is plaintext ("cacheProtection": "plaintext" in its config.json), so
this works on any machine; your own cache is encrypted. Your own configuration
(~/.config/auth-sidecar) and cache (~/.cache/auth-sidecar) are not touched.
EOF
}

start() {
    local foreground=$1
    if running; then
        say "already running (scripts/try.sh stop first)"; instructions; return 0
    fi
    mkdir -p "$dir"; chmod 700 "$dir"
    local python binary
    python=$(scripts/mock-python.sh)
    if [[ -n "${AUTH_SIDECAR_BIN:-}" && -x "${AUTH_SIDECAR_BIN:-}" ]]; then
        binary=$AUTH_SIDECAR_BIN
        say "using AUTH_SIDECAR_BIN=$binary"
    elif [[ -z "${AUTH_SIDECAR_BIN:-}" ]] && ! PATH="/opt/swift/usr/bin:$PATH" command -v swift >/dev/null; then
        # No Swift to build with: an installed binary does as well.
        binary=$(command -v auth-sidecar) || {
            say "Swift 6 is needed to build auth-sidecar, or an installed one (README \"Install\": each"
            say "package puts auth-sidecar on PATH; or AUTH_SIDECAR_BIN=/path/to/auth-sidecar scripts/try.sh)"; exit 1; }
        say "Swift is not installed: using the installed $binary (AUTH_SIDECAR_BIN=... chooses another)"
    else
        scripts/setup.sh --build-only
        say "building auth-sidecar (the first build takes a few minutes)"
        binary=$(scripts/build.sh 2>"$dir/build.log") || { cat "$dir/build.log" >&2; say "the build failed"; exit 1; }
    fi
    rm -f "$dir/env"
    if [[ $foreground == yes ]]; then
        "$python" scripts/try.py "$dir" "$binary" &
    else
        # A session of its own: Ctrl-C in this terminal later does not reach it.
        setsid "$python" scripts/try.py "$dir" "$binary" </dev/null >/dev/null 2>"$dir/try.log" &
    fi
    echo $! >"$pid_file"
    for _ in $(seq 200); do
        [[ -s "$dir/env" ]] && break
        running || { say "the mock did not start:"; cat "$dir/try.log" "$dir/mock/mock.log" 2>/dev/null >&2; exit 1; }
        sleep 0.05
    done
    [[ -s "$dir/env" ]] || { say "the mock did not start within 10 s"; stop; exit 1; }
    instructions
    if [[ $foreground == yes ]]; then
        say "Ctrl-C stops it"
        trap 'stop quiet; exit 0' INT TERM
        wait
    else
        say "scripts/try.sh stop stops it"
    fi
}

case "${1:-start}" in
    start) start no ;;
    --foreground|-f) start yes ;;
    stop) stop ;;
    env) running && [[ -s "$dir/env" ]] && cat "$dir/env" || { say "not running: scripts/try.sh first"; exit 1; } ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0" ;;   # the whole header
    *) say "unknown command '$1' (start, --foreground, env, stop)"; exit 64 ;;
esac
