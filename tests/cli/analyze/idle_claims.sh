#!/usr/bin/env bash
# Idle judgments against the raw traces (tests/cli/analyze/idle_claims.py): every real trace of
# tests/fixtures/real, tests/fixtures/gpu (the recordings) and ../shared/traces (skipped with a
# reason when that folder is absent).
# Usage: idle_claims.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../../shared/traces
traces=("$fixtures"/real/*.json.gz)
# The recordings of the first GPU run (tracegate .db files, gzip'd: decompressed here).
for f in "$fixtures"/gpu/*.db.gz; do
  gunzip -c "$f" > "$dir/$(basename "$f" .gz)"
  traces+=("$dir/$(basename "$f" .gz)")
done
if [ -d "$shared" ]; then
  traces+=("$shared"/*.json.gz "$shared"/*.sqlite)
else
  echo "skip ../shared/traces: folder absent"
fi
if python3 "$here/idle_claims.py" "$tg" "${traces[@]}"; then ok; else fail "idle claims exceed the raw traces' idle time"; fi
finish idle_claims
