#!/usr/bin/env bash
# Usage errors exit 2 with a pointer to --help; --help and --version exit 0.
set -u
tg=$1
fails=0; passes=0
expect() {  # expect RC CMD...
  local want=$1; shift
  "$tg" "$@" >/dev/null 2>&1
  local rc=$?
  if [ "$rc" = "$want" ]; then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: tracegate $* -> $rc, want $want"; fi
}
expect 0 --help
expect 0 --version
expect 0 analyze --help
expect 2
expect 2 analyze
expect 2 frobnicate
expect 2 frobnicate --help
"$tg" frobnicate 2>&1 | grep -q "^tracegate: error: unknown command 'frobnicate' (commands: analyze, .*record)" \
  && passes=$((passes+1)) || { fails=$((fails+1)); echo "FAIL: unknown command message"; }
expect 2 analyze x.json --top 0
expect 2 export x.json
expect 2 analyze x.json --batch 0
expect 0 predict --help
"$tg" --help | grep -q "analyze" || { fails=$((fails+1)); echo "FAIL: --help does not list analyze"; }
echo "$passes passed, $fails failed"
[ $fails = 0 ]
