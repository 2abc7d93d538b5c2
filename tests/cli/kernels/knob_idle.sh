#!/usr/bin/env bash
# tests/gpu/knob_idle.py (reference_workloads.sh step 4, the host_gap knob) on hand-made reports:
# 19 gaps of 200 us inject 3.8 ms per iteration; an idle increase of 2.9 ms (76%) passes, 1.0 ms
# (26%) and 4.5 ms (118%) fail, idle_gaps absent with the knob on fails, bad input exits 2.
# Usage: knob_idle.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
script=$(cd "$(dirname "$0")" && pwd)/../../gpu/knob_idle.py
report() {  # report FILE IDLE_MS FINDING
  printf '{"avg_latency_ms": 5.0, "phases": {"idle": {"mean_ms": %s, "ratio": 0.5}}, "findings": [%s]}\n' "$2" \
    "$([ -n "$3" ] && echo "{\"id\": \"$3\", \"evidence\": []}")" >"$1"
}
echo "host gap: 200 us before each of 19 launches per iteration (3.800 ms of host time per iteration)" >"$dir/model.txt"
report "$dir/off.json" 3.0 idle_gaps
for case in "5.9 idle_gaps 0" "4.0 idle_gaps 1" "7.5 idle_gaps 1" "5.9 '' 1"; do
  eval "set -- $case"
  report "$dir/on.json" "$1" "$2"
  python3 "$script" "$dir/on.json" "$dir/off.json" "$dir/model.txt" >"$dir/out" 2>&1
  rc=$?
  [ "$rc" = "$3" ] && ok || fail "idle $1, finding '$2': rc $rc, want $3: $(cat "$dir/out")"
done
report "$dir/on.json" 5.9 idle_gaps
grep -q "+2.900 ms) for 19 x 200 us = 3.800 ms of host gaps: 76%" <(python3 "$script" "$dir/on.json" "$dir/off.json" "$dir/model.txt") &&
  ok || fail "output line: $(python3 "$script" "$dir/on.json" "$dir/off.json" "$dir/model.txt")"
echo "no gap line" >"$dir/bad.txt"
err=$(python3 "$script" "$dir/on.json" "$dir/off.json" "$dir/bad.txt" 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && grep -q "bad.txt" <<<"$err" && ok || fail "bad model output -> rc $rc: $err"
finish knob_idle
