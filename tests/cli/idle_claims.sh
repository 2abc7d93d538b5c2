#!/usr/bin/env bash
# Idle judgments against the raw traces (tests/cli/idle_claims.py): every real trace of
# tests/fixtures/real and ../shared/traces (skipped with a reason when that folder is absent).
# Usage: idle_claims.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../shared/traces
traces=("$fixtures"/real/*.json.gz)
if [ -d "$shared" ]; then
  traces+=("$shared"/*.json.gz "$shared"/*.sqlite)
else
  echo "skip ../shared/traces: folder absent"
fi
if python3 "$here/idle_claims.py" "$tg" "${traces[@]}"; then ok; else fail "idle claims exceed the raw traces' idle time"; fi
finish idle_claims
