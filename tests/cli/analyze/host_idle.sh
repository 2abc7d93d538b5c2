#!/usr/bin/env bash
# The idle causes against the raw traces (tests/cli/analyze/host_idle.py, plain Python over the JSON): every
# Kineto trace with host events in tests/fixtures/real and ../shared/traces (skipped with a reason
# when that folder is absent), then what the five traces of issue 27 must say.
# Usage: host_idle.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../../shared/traces
traces=("$fixtures"/real/*.json.gz)
[ -d "$shared" ] && traces+=("$shared"/*.json.gz) || echo "skip ../shared/traces: folder absent"
if python3 "$here/host_idle.py" "$tg" "${traces[@]}"; then ok; else fail "idle causes disagree with the raw traces"; fi
finish host_idle
