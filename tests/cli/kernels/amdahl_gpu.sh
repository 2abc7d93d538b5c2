#!/usr/bin/env bash
# tests/gpu/amdahl_gpu.py (reference_workloads.sh step 3) on synthetic recordings whose numbers
# are known (amdahl_gpu_cases.py): P, S in the model, the measured GPU-time speedup and the
# prediction; warm-up iterations, kernels launched between iterations and duplicated ranges left
# out; pairs that disagree are inconclusive (exit 1); unreadable input exits 2 with one line.
# Usage: amdahl_gpu.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../gpu/amdahl_gpu.py
want=$(python3 "$here/amdahl_gpu_cases.py" "$dir") || { fail "amdahl_gpu_cases.py"; finish amdahl_gpu; exit; }

python3 "$script" --unfused "$dir/u1.db" "$dir/u2.db" --fused "$dir/f1.db" "$dir/f2.db" --s-bench 1.6 \
  --json "$dir/out.json" >"$dir/out.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && ok || fail "amdahl_gpu.py exit $rc: $(cat "$dir/out.txt")"
python3 - "$dir/out.json" "$want" <<'PY' && ok || fail "numbers differ from the hand computation: $(cat "$dir/out.txt")"
import json, sys
got = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
for k in ("P", "S_model", "measured", "predicted_bench"):
    assert abs(got[k] - want[k]) < 1e-12, (k, got[k], want[k])
assert all(abs(a - b) < 1e-12 for a, b in zip(got["pair_ratios"], want["ratios"]))
assert abs(got["error_bench"] - want["error_bench"]) < 1e-9
assert got["valid"] and got["met"]
runs = got["runs"]["unfused"] + got["runs"]["fused"]
assert all(r["n"] == 5 for r in runs), [r["n"] for r in runs]  # warm-up left out, duplicates once
assert abs(runs[0]["gpu_ms"] - 1000e-6) < 1e-12 and abs(runs[0]["part_ms"] - 400e-6) < 1e-12
PY
grep -q "goal (|error| <= 20% of the measured gain): met" "$dir/out.txt" && ok || fail "no goal line: $(cat "$dir/out.txt")"

# A far-off S from the benchmark misses the goal (exit 1).
python3 "$script" --unfused "$dir/u1.db" --fused "$dir/f1.db" --s-bench 3 >"$dir/out.txt" 2>&1
[ $? = 1 ] && grep -q "MISSED" "$dir/out.txt" && ok || fail "S 3 should miss: $(cat "$dir/out.txt")"
# Pairs that disagree: inconclusive (exit 1).
python3 "$script" --unfused "$dir/u1.db" "$dir/u2.db" --fused "$dir/f1.db" "$dir/f3.db" --s-bench 1.6 >"$dir/out.txt" 2>&1
[ $? = 1 ] && grep -q "INCONCLUSIVE" "$dir/out.txt" && ok || fail "disagreeing pairs: $(cat "$dir/out.txt")"
# Bad input: exit 2, one line naming the file.
echo "not a db" >"$dir/bad.db"
err=$(python3 "$script" --unfused "$dir/bad.db" --fused "$dir/f1.db" --s-bench 1.6 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && grep -q "bad.db" <<<"$err" && ok ||
  fail "bad input -> rc $rc: $err"
err=$(python3 "$script" --unfused "$dir/u1.db" --fused "$dir/f1.db" --s-bench 1.6 --part '^res9 blocks$' 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && grep -q "res9" <<<"$err" && ok || fail "no part -> rc $rc: $err"
finish amdahl_gpu
