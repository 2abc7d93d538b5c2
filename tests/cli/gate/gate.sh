#!/usr/bin/env bash
# tracegate gate and compare end to end: exit 0 pass, 1 regression, 2 cannot judge, the verdict
# line first, --junit / --md outputs, the history row, and a real trace slowed on purpose.
# Usage: gate.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
trace=$fixtures/real/kineto_sampled_rank0.json.gz
gate() {  # gate RC PATTERN ARGS...: exit RC and a first stdout line matching PATTERN
  local want=$1 pattern=$2 rc; shift 2
  "$tg" gate "$@" >"$dir/out" 2>"$dir/err"; rc=$?
  if [ $rc = "$want" ] && head -1 "$dir/out" | grep -qE -- "$pattern"; then ok;
  else fail "gate $* -> rc $rc (want $want), first line: $(head -1 "$dir/out"), stderr: $(cat "$dir/err")"; fi
}
# variant NAME PYTHON: $dir/NAME.json = the base report after PYTHON edits `r`.
variant() {
  python3 - "$dir/base.json" "$dir/$1.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
EOF
}
# scale(f): every latency sample and the average times f (the known change of the tests).
scale='
def scale(f):
    r["latency_samples_ms"] = [x * f for x in r["latency_samples_ms"]]
    r["avg_latency_ms"] *= f
'

"$tg" analyze "$trace" -o "$dir/base.json" -q || fail "analyze"
variant up49 "$scale
scale(1.049)"
variant up51 "$scale
scale(1.051)"
variant gpu_a "r['devices'][0]['name'] = 'NVIDIA A100'"
variant gpu_h "r['devices'][0]['name'] = 'NVIDIA H100'"
variant dropped "
c = next(c for c in r['data_quality']['counters'] if c['key'] == 'source_dropped_records')
c['count'] = 7; r['data_quality']['has_errors'] = True"
variant no_avg "r['avg_latency_ms'] = None; r['avg_latency_ms_reason'] = 'no iterations'"
variant other_schema "r['schema'] = 'tracegate.report/v0'"
# Ten distinct samples around 100 ms, and the same 6% slower: separated, so significant (exact
# p = 2 / C(20, 10) = 1.08e-05).
variant ten "r['latency_samples_ms'] = [100 + i * 0.1 for i in range(10)]; r['avg_latency_ms'] = 100.45"
variant ten_up "r['latency_samples_ms'] = [(100 + i * 0.1) * 1.06 for i in range(10)]
r['avg_latency_ms'] = 100.45 * 1.06"
# Alternating 40 / 160 ms against 38 / 174 ms: the mean is 6% up, the samples do not differ.
variant noisy "r['latency_samples_ms'] = [40, 160] * 5; r['avg_latency_ms'] = 100"
variant noisy_up "r['latency_samples_ms'] = [38, 174] * 5; r['avg_latency_ms'] = 106"

# The threshold: +4.9% passes, +5.1% fails; the verdict line comes first.
gate 0 '^PASS: avg_latency_ms 615\.120 -> 645\.261 ms \(\+4\.90%, limit \+5%\)$' "$dir/up49.json" \
  --baseline "$dir/base.json"
gate 1 '^REGRESSION: avg_latency_ms 615\.120 -> 646\.491 ms \(\+5\.10%, limit \+5%\)' "$dir/up51.json" \
  --baseline "$dir/base.json"
gate 0 '^PASS' "$dir/up51.json" --baseline "$dir/base.json" --threshold 5.2
# Significance: 2 samples per side can never reach p < 0.05 (exact minimum 2/6), so the +5.1% run
# passes with --require-significance; ten separated samples fail; a noisy +6% passes.
gate 0 '^PASS: .* is over the limit but not significant' "$dir/up51.json" --baseline "$dir/base.json" \
  --require-significance
gate 1 '^REGRESSION: avg_latency_ms 100\.450 -> 106\.477 ms \(\+6\.00%, limit \+5%\), Mann-Whitney p = 1\.08e-05;' \
  "$dir/ten_up.json" --baseline "$dir/ten.json" --require-significance
gate 0 '^PASS: .*not significant \(Mann-Whitney p = ' "$dir/noisy_up.json" --baseline "$dir/noisy.json" \
  --require-significance
gate 1 '^REGRESSION' "$dir/noisy_up.json" --baseline "$dir/noisy.json"
# Cannot judge.
gate 2 '^CANNOT JUDGE: devices differ: .*gpu_a\.json ran on NVIDIA A100, .*gpu_h\.json on NVIDIA H100' \
  "$dir/gpu_h.json" --baseline "$dir/gpu_a.json"
gate 0 '^PASS' "$dir/gpu_h.json" --baseline "$dir/gpu_a.json" --allow-device-mismatch
gate 2 'error-level data-quality counter source_dropped_records = 7' "$dir/dropped.json" --baseline "$dir/base.json"
gate 2 'error-level data-quality counter source_dropped_records = 7' "$dir/base.json" --baseline "$dir/dropped.json"
gate 2 '^CANNOT JUDGE: .*no_avg\.json: avg_latency_ms is null \(no iterations\)$' "$dir/no_avg.json" \
  --baseline "$dir/base.json"
gate 2 '^CANNOT JUDGE: .*other_schema\.json.*tracegate\.report/v0' "$dir/other_schema.json" --baseline "$dir/base.json"
head -c 300 "$dir/base.json" >"$dir/corrupt.json"
gate 2 '^CANNOT JUDGE: .*corrupt\.json' "$dir/up49.json" --baseline "$dir/corrupt.json"
gate 2 '^CANNOT JUDGE: .*missing\.json' "$dir/missing.json" --baseline "$dir/base.json"
gate 2 "^CANNOT JUDGE: .*no baseline named 'nope'" "$dir/base.json" --baseline nope --dir "$dir/none"
"$tg" gate "$dir/base.json" >/dev/null 2>&1; [ $? = 2 ] && ok || fail "gate without --baseline exits 2"
# Fail closed: every report that is not one, or whose numbers cannot be trusted, exits 2 and says
# why on the verdict line, whichever side it is on.
echo '[1, 2]' >"$dir/array.json"
# (not an object: read as a trace, a bare Chrome-trace array with no events)
gate 2 '^CANNOT JUDGE: .*array\.json: no trace events' "$dir/array.json" --baseline "$dir/base.json"
variant no_schema "del r['schema']"
gate 2 '^CANNOT JUDGE: .*no_schema\.json: not a tracegate report \(no "schema" key\)' "$dir/base.json" \
  --baseline "$dir/no_schema.json"
variant zero_avg "r['avg_latency_ms'] = 0"
gate 2 '^CANNOT JUDGE: .*zero_avg\.json: avg_latency_ms is 0\.000, not positive' "$dir/zero_avg.json" --baseline "$dir/base.json"
variant negative_avg "r['avg_latency_ms'] = -3.5"
gate 2 '^CANNOT JUDGE: .*negative_avg\.json: avg_latency_ms is -3\.500, not positive' "$dir/base.json" \
  --baseline "$dir/negative_avg.json"
variant string_avg "r['avg_latency_ms'] = 'fast'"
gate 2 '^CANNOT JUDGE: .*string_avg\.json: "avg_latency_ms" is not a number or null' "$dir/string_avg.json" \
  --baseline "$dir/base.json"
variant no_quality "del r['data_quality']"
gate 2 '^CANNOT JUDGE: .*no_quality\.json: the report has no "data_quality"' \
  "$dir/no_quality.json" --baseline "$dir/base.json"
variant flagged "r['data_quality']['has_errors'] = True"
gate 2 '^CANNOT JUDGE: .*flagged\.json: error-level data-quality counter data_quality\.has_errors = true' \
  "$dir/flagged.json" --baseline "$dir/base.json"
variant one_sample "r['latency_samples_ms'] = [r['avg_latency_ms']]"
variant one_sample_up "r['latency_samples_ms'] = [r['avg_latency_ms'] * 1.2]; r['avg_latency_ms'] *= 1.2"
gate 2 '^CANNOT JUDGE: over the limit, but --require-significance needs at least 2 latency samples per side' \
  "$dir/one_sample_up.json" --baseline "$dir/one_sample.json" --require-significance
: >"$dir/empty.json"
gate 2 '^CANNOT JUDGE: .*empty\.json' "$dir/empty.json" --baseline "$dir/base.json"
"$tg" gate "$dir/base.json" --baseline "$dir/base.json" --threshold -1 >/dev/null 2>&1
[ $? = 2 ] && ok || fail "gate --threshold -1 exits 2"

# --junit and --md, for a regression and for an unreadable baseline.
gate 1 '^REGRESSION' "$dir/up51.json" --baseline "$dir/base.json" --junit "$dir/r.xml" --md "$dir/r.md"
python3 - "$dir/r.xml" <<'EOF' && ok || fail "regression JUnit"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("errors") == "0", suite.attrib
failure = suite.find("testcase[@name='avg_latency_ms']/failure")
assert failure is not None and failure.get("message").startswith("REGRESSION: avg_latency_ms 615.120")
EOF
head -1 "$dir/r.md" | grep -q '^\*\*REGRESSION: avg\\_latency\\_ms 615\.120 -&gt; 646\.491 ms (+5\.10%, limit +5%)\*\*$' \
  && grep -q '^| avg_latency_ms | 615.120 | 646.491 | +31.371 | +5.10% |$' "$dir/r.md" \
  && ok || fail "regression Markdown: $(head -20 "$dir/r.md")"
gate 2 '^CANNOT JUDGE' "$dir/up49.json" --baseline "$dir/corrupt.json" --junit "$dir/c.xml" --md "$dir/c.md"
python3 - "$dir/c.xml" <<'EOF' && ok || fail "cannot-judge JUnit"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert suite.get("errors") == "1" and suite.get("failures") == "0", suite.attrib
assert "corrupt.json" in suite.find("testcase[@name='inputs']/error").get("message")
EOF
head -1 "$dir/c.md" | grep -q '^\*\*CANNOT JUDGE: .*corrupt\.json.*\*\*$' && ok || fail "cannot-judge Markdown: $(head -3 "$dir/c.md")"

# A named baseline: the gate is recorded in the history as a "gated" row with its verdict.
b=$dir/baselines
"$tg" baseline save "$dir/base.json" --name sampled --dir "$b" >/dev/null || fail "baseline save"
gate 1 '^REGRESSION' "$dir/up51.json" --baseline sampled --dir "$b"
gate 0 '^PASS' "$dir/up49.json" --baseline "$b/sampled.json" --dir "$b"
python3 - "$b/history.db" <<'EOF' && ok || fail "history rows"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT kind, verdict, avg_latency_ms FROM history WHERE name = 'sampled' ORDER BY id").fetchall()
assert [r[:2] for r in rows] == [("saved", None), ("gated", "regression"), ("gated", "pass")], rows
assert abs(rows[1][2] - 615.12 * 1.051) < 1e-6, rows
EOF

# compare: prints the verdict first, writes JSON and Markdown, exits 0 whatever the verdict.
"$tg" compare "$dir/base.json" "$dir/up51.json" --json "$dir/cmp.json" --md "$dir/cmp.md" >"$dir/out" \
  && head -1 "$dir/out" | grep -q '^REGRESSION' && ok || fail "compare: $(head -3 "$dir/out")"
python3 -c "import json; c = json.load(open('$dir/cmp.json')); assert c['schema'] == 'tracegate.comparison/v1' \
  and c['verdict']['name'] == 'regression' and c['latency']['over_threshold']" && ok || fail "compare JSON"
"$tg" compare "$dir/base.json" "$dir/missing.json" >/dev/null 2>&1; [ $? = 2 ] && ok || fail "compare missing file"

# The real pair: three kernel families of the real trace made 10% longer. Time is inserted at the
# end of each stretched launch: every later timestamp moves by the added time, CPU ranges that
# span it (ProfilerStep, ops) grow, other GPU activities keep their durations. Integer us.
python3 - "$trace" "$dir/slowed.json.gz" <<'EOF' || fail "making the slowed trace"
import bisect, gzip, json, sys
slow = ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(",
        "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<",
        "void split_embedding_codegen_forward_unweighted_kernel<")
doc = json.load(gzip.open(sys.argv[1]))
events = doc["traceEvents"]
stretched = [e for e in events if e.get("cat") == "kernel" and e["name"].startswith(slow)]
assert len(stretched) == 14, len(stretched)
stretched_ids = {id(e) for e in stretched}
inserts = sorted((e["ts"] + int(e["dur"]), round(e["dur"] * 0.1)) for e in stretched)
ends = [t for t, _ in inserts]
total = [0]
for _, d in inserts:
    total.append(total[-1] + d)
shift = lambda t: t + total[bisect.bisect_right(ends, t)]  # time inserted at or before t
for e in events:
    if "ts" not in e:
        continue
    ts, dur = e["ts"], e.get("dur")
    e["ts"] = shift(ts)
    if dur is None:
        continue
    if id(e) in stretched_ids:
        e["dur"] = dur + round(dur * 0.1)
    elif e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
        e["dur"] = shift(ts + int(dur)) - e["ts"]
with gzip.open(sys.argv[2], "wt") as f:
    json.dump(doc, f)
EOF
# About +3.5% of a 615 ms iteration (half of it is idle): within the default 5%, over 2%.
gate 0 '^PASS: avg_latency_ms 615\.120 -> 63[0-9]\.[0-9]+ ms \(\+3\.[0-9]+%, limit \+5%\)$' "$dir/slowed.json.gz" \
  --baseline "$dir/base.json"
# Over a 2% threshold it fails and names the three, largest contribution first (the NCCL kernel
# has 198 ms per iteration, the embedding kernels 11.7 and 7.6).
ms='\+[0-9.]+ ms/iter'
named="ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t $ms, "
named+="split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1 $ms, "
named+="split_embedding_codegen_forward_unweighted_kernel $ms"
gate 1 "^REGRESSION: avg_latency_ms 615\.120 -> 63[0-9.]+ ms \(\+3\.[0-9]+%, limit \+2%\); slower kernels: $named;" \
  "$dir/slowed.json.gz" --baseline "$dir/base.json" --threshold 2
grep -q 'kernels: 0 added, 0 removed, 3 changed, 191 unchanged' "$dir/out" && ok \
  || fail "only the stretched kernels changed: $(grep 'kernels:' "$dir/out")"


# The real pair from ../shared/traces/: the 2-GPU H100 nsys export with flash_fwd_kernel and
# elementwise_kernel made 10% longer on both GPUs. Time is inserted at the end of each stretched
# kernel: later activity on that GPU moves by the time its stretched kernels added, host-side
# records (API calls, NVTX, syncs) by the larger of the two GPUs' shifts (the ranks run in
# lockstep). Per GPU that is (136.0 + 43.0 ms) x 10% of a 300 ms run: about +6%.
if [ ! -f "$shared/nsys_2gpu_export.sqlite" ]; then
  echo "gate.sh: skipping the nsys real pair: $shared/nsys_2gpu_export.sqlite is absent"
else
  cp "$shared/nsys_2gpu_export.sqlite" "$dir/nsys_base.sqlite"
  cp "$shared/nsys_2gpu_export.sqlite" "$dir/nsys_slowed.sqlite"
  python3 - "$dir/nsys_slowed.sqlite" <<'EOF' || fail "making the slowed nsys export"
import bisect, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
slow = ("flash_fwd_kernel", "elementwise_kernel")
rows = db.execute("""SELECT k.rowid, k.deviceId, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k
                     JOIN StringIds s ON s.id = k.shortName WHERE s.value IN (?, ?)""", slow).fetchall()
assert len(rows) == 68 + 871, len(rows)
inserts = {}  # device -> sorted (end, added ns)
for _, dev, start, end in rows:
    inserts.setdefault(dev, []).append((end, (end - start) // 10))
cum = {}
for dev, ins in inserts.items():
    ins.sort()
    total = [0]
    for _, d in ins:
        total.append(total[-1] + d)
    cum[dev] = ([t for t, _ in ins], total)
def shift(dev, t):
    if t is None:
        return None
    devs = [dev] if dev in cum else list(cum)
    return t + max(cum[d][1][bisect.bisect_right(cum[d][0], t)] for d in devs)
db.create_function("shift", 2, shift, deterministic=True)
# A stretched kernel's end is one of the insertion points, so shift(end) already adds its own 10%.
for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
    cols = {c[1] for c in db.execute(f'PRAGMA table_info("{table}")')}
    if "start" not in cols:
        continue
    dev = "deviceId" if "deviceId" in cols else "NULL"
    end = ", end = shift(%s, end)" % dev if "end" in cols else ""
    db.execute(f'UPDATE "{table}" SET start = shift({dev}, start){end}')
db.commit()
EOF
  "$tg" analyze "$dir/nsys_base.sqlite" -o "$dir/nsys_base.json" -q || fail "analyze the nsys export"
  # Element-wise kernels are named by their operation (the functor): the two largest of the 8.
  gate 1 "^REGRESSION: avg_latency_ms 299\.937 -> 31[0-9.]+ ms \(\+[56]\.[0-9]+%, limit \+5%\); slower kernels: flash::flash_fwd_kernel \+2[0-9.]+ ms/iter, at::native::elementwise_kernel<BinaryFunctor<float, float, float, MulFunctor<float>>> \+[0-9.]+ ms/iter \(2 variants\), at::native::elementwise_kernel<direct_copy_kernel_cuda> \+[0-9.]+ ms/iter \(2 variants\); " \
    "$dir/nsys_slowed.sqlite" --baseline "$dir/nsys_base.json"
  # The kernel table lists flash_fwd_kernel and 8 instantiations of elementwise_kernel as changed.
  grep -qE 'kernels: 0 added, 0 removed, 9 changed, [0-9]+ unchanged' "$dir/out" && ok \
    || fail "only the stretched kernels changed: $(grep 'kernels:' "$dir/out")"
fi
finish gate.sh
