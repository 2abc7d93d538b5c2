#!/usr/bin/env bash
# tests/gpu/predict_pairs.py (issue 31's GPU pairs) on made-up recordings whose answer is known:
# before runs with "iteration" ranges of 12 ms, after runs of 10 ms (measured gain +20%), and
# "warmup" ranges that must not count; a prediction of +19% passes (error 1 point of an allowed 4),
# +10% fails; a host-bound pair (10.05 -> 10 ms, +0.5%) judged against 1% of the step; a
# recording without "iteration" ranges is refused with one line and exit 2.
# Usage: predict_pairs_check.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
py=$repo/tests/gpu/predict_pairs.py
make_db() {  # make_db FILE ITERATION_MS: 3 iterations (inline text) and 2 longer warm-ups (StringIds)
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1]); ms = float(sys.argv[2])
con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
con.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER)")
con.execute("INSERT INTO StringIds VALUES (1, 'warmup'), (2, 'iteration')")
t = 0
for i in range(2):
    con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, NULL, 1)", (t, t + 50_000_000)); t += 60_000_000
for i in range(3):
    con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 'iteration', NULL)", (t, t + int(ms * 1e6))); t += 20_000_000
con.commit()
PY
}
make_db "$dir/b1.db" 12; make_db "$dir/b2.db" 12; make_db "$dir/a1.db" 10; make_db "$dir/a2.db" 10
make_db "$dir/hb.db" 10.05; make_db "$dir/ha.db" 10
pred() { printf '{"base_latency_ms": %s, "predicted_latency_ms": %s, "amdahl_speedup": %s}' "$1" "$2" "$3" >"$dir/p.json"; }

pred 11.9 10 1.25
python3 "$py" --case gpu --speedup 1.5 --prediction "$dir/p.json" --before "$dir/b1.db" "$dir/b2.db" \
  --after "$dir/a1.db" "$dir/a2.db" >"$dir/out" 2>&1; rc=$?
if [ "$rc" = 0 ] && grep -q "measured 12.000 -> 10.000 ms/iteration (gain +20.00%); replay gain +19.00%; Amdahl +25.00%; error 1.00 points, allowed 20% of the measured gain (4.00 points): PASS" "$dir/out"; then ok; else fail "a close prediction: exit $rc: $(cat "$dir/out")"; fi
pred 11 10 1.25
python3 "$py" --case gpu --speedup 1.5 --prediction "$dir/p.json" --before "$dir/b1.db" --after "$dir/a1.db" >"$dir/out" 2>&1; rc=$?
if [ "$rc" = 1 ] && grep -q "error 10.00 points.*FAIL" "$dir/out"; then ok; else fail "a far prediction: exit $rc: $(cat "$dir/out")"; fi
pred 10 10 null
python3 "$py" --case host --speedup 1.5 --prediction "$dir/p.json" --before "$dir/hb.db" --after "$dir/ha.db" >"$dir/out" 2>&1; rc=$?
if [ "$rc" = 0 ] && grep -q "Amdahl n/a; error 0.50 points, allowed 1% of the step (measured gain under 2%): PASS" "$dir/out"; then ok; else fail "a host-bound pair: exit $rc: $(cat "$dir/out")"; fi
sqlite3 "$dir/empty.db" "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER); CREATE TABLE StringIds (id INTEGER, value TEXT);"
python3 "$py" --case x --speedup 1 --prediction "$dir/p.json" --before "$dir/empty.db" --after "$dir/ha.db" >"$dir/out" 2>&1; rc=$?
if [ "$rc" = 2 ] && grep -q "empty.db: no NVTX range named 'iteration'" "$dir/out"; then ok; else fail "no iterations: exit $rc: $(cat "$dir/out")"; fi
finish predict_pairs_check
