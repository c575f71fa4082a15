# Sourced by the editor and shell client tests: starts the project's mock identity
# platform (mock) for the lifetime of the calling shell.
#
#   source clients/shell/test/mock.sh
#   start_mock "$tmpdir"        # sets MOCK_URL MOCK_CA MOCK_CLIENT_ID MOCK_PID
#   mock_admin /_admin/config '{"device_code_interval": 1}'
#   stop_mock
#
# The mock runs with --exit-on-stdin-eof and its stdin is a FIFO held open on fd 9 by
# this shell, so it can never outlive the test even if the trap does not run.

CLIENTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REPO_ROOT="$(cd "$CLIENTS_DIR/.." && pwd)"
: "${AUTH_SIDECAR_BIN:=$REPO_ROOT/.build/release/auth-sidecar}"
export AUTH_SIDECAR_BIN

start_mock() {
  local dir="$1"
  mkdir -p "$dir/mock"
  rm -f "$dir/mock.in"
  mkfifo "$dir/mock.in"
  ( cd "$REPO_ROOT/mock" &&
    exec python3 -m mock_idp --port 0 --state-dir "$dir/mock" --exit-on-stdin-eof \
      <"$dir/mock.in" >"$dir/mock.ready" 2>"$dir/mock.log" ) &
  MOCK_PID=$!
  exec 9>"$dir/mock.in"
  local i
  for ((i = 0; i < 200; i++)); do
    if [[ -s "$dir/mock.ready" ]] && jq -e .url "$dir/mock.ready" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$MOCK_PID" 2>/dev/null; then
      echo "mock identity platform failed to start:" >&2; cat "$dir/mock.log" >&2; return 1
    fi
    sleep 0.05
  done
  MOCK_URL=$(jq -r .url "$dir/mock.ready")
  MOCK_CA=$(jq -r .caFile "$dir/mock.ready")
  MOCK_CLIENT_ID=$(jq -r .clientId "$dir/mock.ready")
  if [[ -z "$MOCK_URL" || "$MOCK_URL" == null ]]; then
    echo "mock identity platform not ready after 10 s" >&2; cat "$dir/mock.log" >&2; return 1
  fi
  export MOCK_URL MOCK_CA MOCK_CLIENT_ID MOCK_PID
}

# mock_admin PATH [JSON]: POST (or GET without JSON) a control of the mock.
mock_admin() {
  if [[ $# -ge 2 ]]; then
    curl -sS --fail --max-time 10 --cacert "$MOCK_CA" -H 'Content-Type: application/json' \
      -X POST -d "$2" "$MOCK_URL$1"
  else
    curl -sS --fail --max-time 10 --cacert "$MOCK_CA" "$MOCK_URL$1"
  fi
}

# snapshot_binary DIR: run a private copy of the binary, so a rebuild of
# $AUTH_SIDECAR_BIN while the tests run ("text file busy") cannot break them.
snapshot_binary() {
  cp "$AUTH_SIDECAR_BIN" "$1/auth-sidecar" && AUTH_SIDECAR_BIN="$1/auth-sidecar"
  export AUTH_SIDECAR_BIN
}

stop_mock() {
  exec 9>&- 2>/dev/null || true
  if [[ -n "${MOCK_PID:-}" ]]; then
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=
  fi
}
