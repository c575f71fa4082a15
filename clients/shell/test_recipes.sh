#!/usr/bin/env bash
# Runs the recipes of clients/shell/README.md verbatim (every ```sh block after a
# "<!-- recipe: NAME -->" line) against the real binary and the mock identity platform.
# Bounded: every step has a 30 s limit, the whole script well under 60 s.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/test/mock.sh"

[[ -x "$AUTH_SIDECAR_BIN" ]] || { echo "shell-test: no binary at $AUTH_SIDECAR_BIN" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'stop_mock; rm -rf "$tmp"' EXIT
snapshot_binary "$tmp" || exit 1
start_mock "$tmp" || exit 1
mock_admin /_admin/config '{"device_code_interval": 1}' >/dev/null

# Extract the recipes.
awk -v dir="$tmp" '
  /^<!-- recipe: [a-z-]+ -->$/ { name = $3; next }
  name != "" && /^```sh$/ { file = dir "/recipe-" name ".sh"; inblock = 1; next }
  inblock && /^```$/ { inblock = 0; name = ""; next }
  inblock { print > file }
' "$here/README.md"
for r in setup token graph-me accounts sign-out; do
  [[ -s "$tmp/recipe-$r.sh" ]] || { echo "shell-test: recipe $r missing from README.md" >&2; exit 1; }
done

# The environment a user would have, pointing at the mock.
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/xdg-cache" SSL_CERT_FILE="$MOCK_CA" \
  AUTH_SIDECAR_POLICY_FILE="$tmp/no-policy.json" AUTH_SIDECAR_CONFIG="$tmp/config.json"
mkdir -p "$HOME"
jq -n --arg url "$MOCK_URL" --arg client "$MOCK_CLIENT_ID" --arg cache "$tmp/cache.json" \
  '{clientId: $client, authority: ($url + "/common"), knownAuthorities: ["127.0.0.1"],
    graphEndpoint: ($url + "/"), cache: {path: $cache}, cacheProtection: "plaintext"}' >"$AUTH_SIDECAR_CONFIG"

failures=0
ok() { echo "ok   - $1"; }
fail() { echo "FAIL - $1" >&2; failures=$((failures + 1)); }

# run NAME: run a recipe (after setup) in a fresh bash; sets OUT, ERR, RC.
run() {
  timeout -k 2 30 bash -c 'source "$1/recipe-setup.sh" && source "$1/recipe-$2.sh"' _ "$tmp" "$1" \
    >"$tmp/out" 2>"$tmp/err"
  RC=$?
  OUT=$(cat "$tmp/out"); ERR=$(cat "$tmp/err")
}

# start_bg NAME: run a recipe in the background; wait_bg collects it like run.
start_bg() {
  timeout -k 2 30 bash -c 'source "$1/recipe-setup.sh" && source "$1/recipe-$2.sh"' _ "$tmp" "$1" \
    >"$tmp/out" 2>"$tmp/err" &
  BG=$!
}
wait_bg() { wait "$BG"; RC=$?; OUT=$(cat "$tmp/out"); ERR=$(cat "$tmp/err"); }

# wait_code: the user code the token recipe printed on stderr (empty after 15 s).
wait_code() {
  local i code
  for ((i = 0; i < 300; i++)); do
    code=$(grep -o 'enter the code [A-Z0-9]*' "$tmp/err" 2>/dev/null | awk '{print $4}')
    [[ -n "$code" ]] && { echo "$code"; return; }
    sleep 0.05
  done
}

jwt='^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$'

run accounts
[[ $RC -eq 0 && -z "$OUT" ]] && ok "accounts: none before sign-in" || fail "accounts before sign-in: rc=$RC out=$OUT err=$ERR"

run graph-me
[[ $RC -ne 0 && "$ERR" == *"no account"* ]] && ok "graph-me: fails before sign-in" || fail "graph-me before sign-in: rc=$RC out=$OUT err=$ERR"

start_bg token
code=$(wait_code)
if [[ -n "$code" ]]; then
  mock_admin /_admin/devicecode "{\"user_code\": \"$code\", \"action\": \"approve\"}" >/dev/null
  wait_bg
  [[ $RC -eq 0 && "$OUT" =~ $jwt && "$ERR" == *"/devicelogin"* ]] && ok "token: device code sign-in" \
    || fail "token with device code: rc=$RC out=${OUT:0:20} err=$ERR"
else
  kill "$BG" 2>/dev/null; wait_bg; fail "token: no device code on stderr: $ERR"
fi

mock_admin /_admin/counts/reset '{}' >/dev/null
run token
devicecodes=$(mock_admin /_admin/counts | jq '.devicecode // 0')
[[ $RC -eq 0 && "$OUT" =~ $jwt && -z "$ERR" && $devicecodes -eq 0 ]] && ok "token: silent the second time" \
  || fail "token silent: rc=$RC out=${OUT:0:20} err=$ERR devicecode=$devicecodes"

run graph-me
[[ $RC -eq 0 && $(jq -r .userPrincipalName <<<"$OUT") == alice@contoso.com && $(jq -r .jobTitle <<<"$OUT") == null ]] \
  && ok "graph-me: /me of alice" || fail "graph-me: rc=$RC out=$OUT err=$ERR"

run accounts
[[ $RC -eq 0 && "$OUT" == "alice@contoso.com"$'\t'"Alice Example"$'\t'a11ce000-* ]] \
  && ok "accounts: alice" || fail "accounts: rc=$RC out=$OUT err=$ERR"

run sign-out
[[ $RC -eq 0 && "$OUT" == true ]] && ok "sign-out" || fail "sign-out: rc=$RC out=$OUT err=$ERR"

run accounts
[[ $RC -eq 0 && -z "$OUT" ]] && ok "accounts: none after sign-out" || fail "accounts after sign-out: rc=$RC out=$OUT err=$ERR"

start_bg token
code=$(wait_code)
[[ -n "$code" ]] && mock_admin /_admin/devicecode "{\"user_code\": \"$code\", \"action\": \"decline\"}" >/dev/null
wait_bg
[[ -n "$code" && $RC -ne 0 && -z "$OUT" && "$ERR" == *"sign-in failed"*"(-50005)"* ]] && ok "token: declined device code fails with -50005" \
  || fail "token declined: code=$code rc=$RC out=${OUT:0:20} err=$ERR"

run sign-out
[[ $RC -ne 0 ]] && ok "sign-out: fails when nobody is signed in" || fail "sign-out with nobody: rc=$RC out=$OUT err=$ERR"

echo "shell: $failures failure(s)"
[[ $failures -eq 0 ]]
