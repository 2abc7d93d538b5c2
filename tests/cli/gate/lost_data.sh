#!/usr/bin/env bash
# The gate fails closed on lost data, and kernel-level changes are never invisible.
# - Broken variants of the real 2-GPU nsys export (a dropped kernel table, REAL-typed kernel times)
#   exit 2 naming the counter or table with its numbers; whole-number REAL times read exactly.
# - Report variants around the malformed_event limit (--max-malformed-pct).
# - A Kineto pair whose kernels are 7% slower while the latency is unchanged: compare lists the
#   family, gate passes by default, --kernel-threshold 5 fails naming it.
# Every expected number is computed here with SQL or Python, not by tracegate.
# Usage: lost_data.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
gate() {  # gate RC PATTERN ARGS...: exit RC and a first stdout line matching PATTERN
  local want=$1 pattern=$2 rc; shift 2
  "$tg" gate "$@" >"$dir/out" 2>"$dir/err"; rc=$?
  if [ $rc = "$want" ] && head -1 "$dir/out" | grep -qE -- "$pattern"; then ok;
  else fail "gate $* -> rc $rc (want $want), first line: $(head -1 "$dir/out"), stderr: $(cat "$dir/err")"; fi
}
json_get() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# --- Synthetic Kineto pair: ten 10 ms ProfilerSteps; foo_kernel 1.000 ms -> 1.070 ms, bar_kernel
# 2 ms both; the iterations keep their length, so the latency does not move.
make_kineto() {  # make_kineto OUT FOO_US
  python3 - "$1" "$2" <<'PY'
import json, sys
out, foo = sys.argv[1], float(sys.argv[2])
ev, corr = [], 100
for i in range(10):
    t0 = 1_000_000 + i * 10_000
    ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1, "ts": t0, "dur": 10_000})
    at = t0 + 100
    for name, dur in (("void foo_kernel<float>(float*)", foo), ("void bar_kernel(int)", 2000.0)):
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": at, "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": at + 10, "dur": dur,
                   "args": {"correlation": corr, "device": 0, "stream": 7}})
        at += 3000
json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": ev}, open(out, "w"))
PY
}
make_kineto "$dir/k_base.json" 1000
make_kineto "$dir/k_new.json" 1070
"$tg" analyze "$dir/k_base.json" -o "$dir/kb.json" -q || fail "analyze k_base"
"$tg" analyze "$dir/k_new.json" -o "$dir/kn.json" -q || fail "analyze k_new"
# foo: 10 x 1.070 ms / 10 iterations - 1.000 = +0.070 ms per iteration, +7.00% of its base.
gate 0 '^PASS: avg_latency_ms 10\.000 -> 10\.000 ms \(\+0\.00%, limit \+5%\)$' "$dir/kn.json" --baseline "$dir/kb.json"
grep -qE '^    +\+0\.070 +\+7\.00% +1\.000 -> 1\.070 +1\.0 -> 1\.0 +foo_kernel$' "$dir/out" && ok || fail "gate lists foo_kernel: $(cat "$dir/out")"
grep -q 'bar_kernel' "$dir/out" && fail "bar_kernel did not change: $(cat "$dir/out")" || ok
gate 1 '^REGRESSION: kernel GPU time per iteration over the \+5% limit: foo_kernel \+7\.00% \(\+0\.070 ms/iter\); avg_latency_ms 10\.000 -> 10\.000 ms' \
  "$dir/kn.json" --baseline "$dir/kb.json" --kernel-threshold 5 --junit "$dir/k.xml"
grep -q '<testcase classname="tracegate.gate" name="kernel_gpu_time">' "$dir/k.xml" && grep -q '<failure' "$dir/k.xml" \
  && ok || fail "JUnit kernel_gpu_time failure: $(cat "$dir/k.xml")"
gate 0 '^PASS' "$dir/kn.json" --baseline "$dir/kb.json" --kernel-threshold 7.5
"$tg" compare "$dir/kb.json" "$dir/kn.json" --json "$dir/k_cmp.json" --md "$dir/k_cmp.md" >"$dir/out" 2>&1 || fail "compare"
grep -q 'kernel families changed' "$dir/out" && ok || fail "compare lists families: $(cat "$dir/out")"
[ "$(json_get "$dir/k_cmp.json" "[(f['name'], f['variants'], round(f['delta_ms_per_iteration'], 6), round(f['delta_pct_of_base'], 6)) for f in r['kernel_families']]")" \
  = "[('foo_kernel', 1, 0.07, 7.0)]" ] && ok || fail "kernel_families: $(json_get "$dir/k_cmp.json" "r['kernel_families']")"
# The latency did not move significantly: no share of it is claimed.
[ "$(json_get "$dir/k_cmp.json" "sorted(set(str(k['share_of_change']) for k in r['kernels']))")" = "['None']" ] \
  && ok || fail "share_of_change must be null: $(json_get "$dir/k_cmp.json" "r['kernels']")"
grep -q '^| `foo_kernel` | changed | 1.000 → 1.070 | +0.070 (+7.0%) | 1.0 → 1.0 |$' "$dir/k_cmp.md" && ok || fail "Markdown families: $(cat "$dir/k_cmp.md")"

# --- malformed_event share: counts{} rows S kept; m malformed -> m / (S + m).
variant_malformed() {  # variant_malformed OUT M
  python3 - "$dir/kb.json" "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
next(c for c in r["data_quality"]["counters"] if c["key"] == "malformed_event")["count"] = int(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PY
}
rows=$(json_get "$dir/kb.json" "sum(r['counts'].values())")
[ "$rows" = 50 ] && ok || fail "the Kineto base keeps 10 steps + 20 launches + 20 kernels = 50 rows, got $rows"
# 50 kept + 1 malformed: 1.96% > 1%; with --max-malformed-pct 2 it passes.
variant_malformed "$dir/m1.json" 1
gate 2 '^CANNOT JUDGE: .*m1\.json: malformed_event = 1 of 51 rows read \(1\.96%\) were dropped, over the 1% limit$' \
  "$dir/m1.json" --baseline "$dir/kb.json"
gate 0 '^PASS' "$dir/m1.json" --baseline "$dir/kb.json" --max-malformed-pct 2
gate 2 "m1\\.json: malformed_event = 1 of 51" "$dir/kb.json" --baseline "$dir/m1.json"

# --- The real 2-GPU nsys export, broken on purpose.
src=$shared/nsys_2gpu_export.sqlite
if [ ! -f "$src" ]; then
  echo "skip: $src absent (the real traces are beside the checkout only)"
  finish lost_data; exit
fi
"$tg" analyze "$src" -o "$dir/n_base.json" -q || fail "analyze nsys"
[ "$(json_get "$dir/n_base.json" "[c['count'] for c in r['data_quality']['counters'] if c['key'] in ('unmatched_launch', 'inexact_timestamp')]")" = "[0, 0]" ] \
  && ok || fail "the intact export has no lost launches (its 20 unmatched launches are the capture's tail)"
K=CUPTI_ACTIVITY_KIND_KERNEL
sql() { sqlite3 "$@"; }
# The launches with no GPU record after the kernel table is gone: the memcpy/memset records
# remain, so a launch counts when its process has one with a later correlation id.
cp "$src" "$dir/no_kernels.sqlite"; chmod u+w "$dir/no_kernels.sqlite"
sql "$dir/no_kernels.sqlite" "DROP TABLE $K"
lost=$(sql "$dir/no_kernels.sqlite" "
  WITH l AS (SELECT r.correlationId c, (r.globalTid >> 24) & 16777215 p FROM CUPTI_ACTIVITY_KIND_RUNTIME r
             JOIN StringIds s ON s.id = r.nameId
             WHERE (s.value LIKE 'cudaLaunchKernel%' OR s.value LIKE 'cuLaunchKernel%') AND r.returnValue = 0),
       d AS (SELECT correlationId c, (globalPid >> 24) & 16777215 p FROM CUPTI_ACTIVITY_KIND_MEMCPY
             UNION ALL SELECT correlationId, (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_MEMSET)
  SELECT count(*) FROM l WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.c = l.c AND d.p = l.p)
                           AND EXISTS (SELECT 1 FROM d WHERE d.p = l.p AND d.c > l.c)")
kernels=$(sql "$src" "SELECT count(*) FROM $K")
[ "$kernels" = 4010 ] && ok || fail "kernel rows: $kernels"
"$tg" analyze "$dir/no_kernels.sqlite" -o "$dir/n_nokernels.json" -q
gate 2 "^CANNOT JUDGE: .*n_nokernels\.json: error-level data-quality counter unmatched_launch = $lost; .*n_nokernels\.json: no kernel records \(counts\.kernels\) where .*n_base\.json has $kernels: the table is missing or empty" \
  "$dir/n_nokernels.json" --baseline "$dir/n_base.json"
"$tg" compare "$dir/n_base.json" "$dir/n_nokernels.json" >"$dir/out" 2>&1
head -1 "$dir/out" | grep -q '^CANNOT JUDGE: .*unmatched_launch' && ok || fail "compare's caveat first: $(head -1 "$dir/out")"
# Whole-number REAL times are read exactly: the kernel table rebuilt with REAL start/end columns
# gives the same kernel count and total as the INTEGER one (SQL: sum of end - start).
cp "$src" "$dir/real_whole.sqlite"; chmod u+w "$dir/real_whole.sqlite"
cols=$(sql "$src" "SELECT group_concat(name, ', ') FROM pragma_table_info('$K') WHERE name NOT IN ('start', 'end')")
sql "$dir/real_whole.sqlite" "ALTER TABLE $K RENAME TO k_old;
  CREATE TABLE $K AS SELECT CAST(start AS REAL) AS start, CAST(end AS REAL) AS end, $cols FROM k_old; DROP TABLE k_old"
[ "$(sql "$dir/real_whole.sqlite" "SELECT typeof(start) || typeof(end), count(*) FROM $K GROUP BY 1")" = "realreal|4010" ] \
  && ok || fail "the rebuilt table holds REALs"
total=$(sql "$src" "SELECT sum(end - start) FROM $K")
"$tg" analyze "$dir/real_whole.sqlite" -o "$dir/n_real_whole.json" -q
[ "$(json_get "$dir/n_real_whole.json" "(r['counts']['kernels'], r['kernels']['total_ns'])")" = "($kernels, $total)" ] \
  && ok || fail "REAL whole-number times: $(json_get "$dir/n_real_whole.json" "(r['counts']['kernels'], r['kernels']['total_ns'])"), want ($kernels, $total)"
gate 0 '^PASS: avg_latency_ms' "$dir/n_real_whole.json" --baseline "$dir/n_base.json"
# A fraction of a nanosecond cannot be an exact int64: counted, the gate refuses.
cp "$dir/real_whole.sqlite" "$dir/real_frac.sqlite"
sql "$dir/real_frac.sqlite" "UPDATE $K SET start = start + 0.5
  WHERE shortName = (SELECT id FROM StringIds WHERE value = 'flash_fwd_kernel')"
frac=$(sql "$dir/real_frac.sqlite" "SELECT count(*) FROM $K WHERE start <> CAST(start AS INTEGER)")
[ "$frac" = 68 ] && ok || fail "flash_fwd_kernel rows moved by half a ns: $frac"
"$tg" analyze "$dir/real_frac.sqlite" -o "$dir/n_real_frac.json" -q
gate 2 "^CANNOT JUDGE: .*n_real_frac\.json: error-level data-quality counter inexact_timestamp = $frac" \
  "$dir/n_real_frac.json" --baseline "$dir/n_base.json"
# Beyond 2^53 a REAL is a whole number but not the nanosecond that was written: inexact too.
cp "$dir/real_whole.sqlite" "$dir/real_big.sqlite"
sql "$dir/real_big.sqlite" "UPDATE $K SET start = start + 9007199254740992.0, end = end + 9007199254740992.0 WHERE rowid <= 3"
"$tg" analyze "$dir/real_big.sqlite" -o "$dir/n_real_big.json" -q
[ "$(json_get "$dir/n_real_big.json" "[c['count'] for c in r['data_quality']['counters'] if c['key'] == 'inexact_timestamp']")" = "[3]" ] \
  && ok || fail "times beyond 2^53 are inexact"
finish lost_data
