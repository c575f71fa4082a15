#!/usr/bin/env bash
# Emacs client test: emacs --batch runs the ERT suite against the real auth-sidecar
# binary and the mock identity platform. Bounded: 60 s.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../shell/test/mock.sh"

command -v emacs >/dev/null || { echo "emacs-test: emacs not installed" >&2; exit 1; }
[[ -x "$AUTH_SIDECAR_BIN" ]] || { echo "emacs-test: no binary at $AUTH_SIDECAR_BIN" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'stop_mock; rm -rf "$tmp"' EXIT
snapshot_binary "$tmp"
start_mock "$tmp"
mock_admin /_admin/config '{"device_code_interval": 1}' >/dev/null

export TEST_TMP="$tmp" XDG_CACHE_HOME="$tmp/xdg-cache" XDG_CONFIG_HOME="$tmp/xdg-config" HOME="$tmp/home" \
  AUTH_SIDECAR_POLICY_FILE="$tmp/no-policy.json" \
  SCRIPTED_BROWSER="$REPO_ROOT/mock/scripted_browser.py" \
  SCRIPTED_BROWSER_LOG="$tmp/browser.log"
mkdir -p "$HOME"

rc=0
timeout -k 5 60 emacs --batch -Q -L "$here/.." -l "$here/auth-sidecar-test.el" \
  -f ert-run-tests-batch-and-exit </dev/null || rc=$?
if [[ $rc -eq 124 ]]; then echo "emacs-test: TIMEOUT after 60 s" >&2; fi
if [[ $rc -ne 0 ]]; then
  echo "emacs-test: FAILED (exit $rc)" >&2
  echo "--- scripted browser log:" >&2; cat "$tmp/browser.log" >&2 2>/dev/null || true
  echo "--- mock log (tail):" >&2; tail -n 20 "$tmp/mock.log" >&2 || true
fi
exit $rc
