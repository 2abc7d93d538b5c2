#!/usr/bin/env bash
# The ranks of one job: `analyze DIR | FILE...`, `merge` of per-rank reports (the same job report
# apart from provenance), ranks from distributedInfo / file names / file order, duplicate ranks,
# mixed formats, --jobs, and gate/compare naming the ranks that regressed. Traces from
# tests/gen/gen_ranks.py, whose known answers the job report must give.
source "$(dirname "$0")/../testlib.bash"
gen="$fixtures/../gen/gen_ranks.py"
validate="$(dirname "$0")/../validate_report.py"
cd "$dir"

python3 "$gen" job --ranks 4 --straggler 2 --late-us 300 || fail "generator"
"$tg" analyze job -q -o job.json && ok || fail "analyze DIR"
python3 "$validate" job.json && ok || fail "job report against the schema"
python3 - job.json job.expected.json <<'EOF_PY' && ok || fail "job report: ranks, job latency, rank source"
import json, sys
job, exp = (json.load(open(p)) for p in sys.argv[1:])
assert job["job"]["ranks"] == 4 and job["job"]["built_from"] == "traces", job["job"]
ranks = job["ranks"]
assert [r["rank"] for r in ranks] == [0, 1, 2, 3], ranks
assert all(r["rank_source"] == "distributed_info" for r in ranks), ranks
assert all(r["file"].endswith(e["file"]) for r, e in zip(ranks, exp["ranks"])), ranks
assert job["avg_latency_ms"] == exp["job_latency_ms"] == max(r["avg_latency_ms"] for r in ranks), job["avg_latency_ms"]
assert job["slowest_rank"] == 0, job["slowest_rank"]  # equal latencies: the first rank
assert job["iteration_table"] == [], "a job report leaves the rows to the ranks' reports"
# The generator's answers, to the nanosecond where the arithmetic is (offsets, counts) and to
# 1e-12 for the per-iteration means.
for r, e in zip(ranks, exp["ranks"]):
    assert r["collectives"] == e["collectives"] == 5, (r, e)
    assert r["clock_offset_ns"] == e["clock_offset_ns"], (r, e)
    assert r["last_arrivals"] == e["last_arrivals"], (r, e)
    for key in ("wait_ms", "comm_ms", "compute_ms", "overlap_ratio"):
        assert abs(r[key] - e[key]) < 1e-12, (key, r, e)
assert max(abs(e["clock_offset_ns"]) for e in exp["ranks"]) <= 100_000  # offsets of up to 100 us
straggler = [f for f in job["findings"] if f["id"] == "straggler"]
assert len(straggler) == 1 and [(v["kind"], v["name"]) for v in straggler[0]["involved"]] == [("rank", str(exp["straggler"]))], straggler
EOF_PY

# The job's per-collective table and comm_exposed, recomputed here from the generator's
# construction (compute C = 2 ms, C + 300 us on rank 2; the all-reduce ends max C + D after the
# step starts, D = 1 ms; 400 us of compute beside it; 5 ms steps; 2^20 floats; 4 ranks, 5 steps).
python3 - job.json job.expected.json <<'EOF_PY' && ok || fail "job collectives and comm_exposed: known answers"
import json, sys
job, exp = (json.load(open(p)) for p in sys.argv[1:])
ranks, steps, C, L, D, O, P = 4, 5, 2_000_000, 300_000, 1_000_000, 400_000, 5_000_000
compute = [C + (L if r == 2 else 0) for r in range(ranks)]
comm = [max(compute) + D - c for c in compute]          # each rank's all-reduce per step, ns
total = steps * sum(comm)
bytes_ = 4 << 20
algbw = bytes_ * ranks * steps / total                   # bytes/ns = GB/s, of the mean call
rows = job["job"]["collectives"]
assert len(rows) == 1, rows
row = rows[0]
assert {k: row[k] for k in ("collective", "dtype", "message_bytes", "group_size", "ranks", "count", "count_per_rank",
                            "count_min", "count_max")} == {
    "collective": "allreduce", "dtype": "Float", "message_bytes": bytes_, "group_size": ranks, "ranks": ranks,
    "count": ranks * steps, "count_per_rank": steps, "count_min": steps, "count_max": steps}, row
assert round(row["total_ms"] * 1e6) == total and abs(row["mean_ms"] * 1e6 - total / (ranks * steps)) < 1e-6, row
assert abs(row["algbw_gbs"] - algbw) < 1e-12 and abs(row["busbw_gbs"] - algbw * 2 * (ranks - 1) / ranks) < 1e-12, row
assert row["total_ms"] * 1e6 == exp["collectives"][0]["total_ns"], (row, exp["collectives"])
# comm_exposed: rank 0 is the slowest (equal latencies: the lower rank); its exposed all-reduce is
# comm - O, at most its compute C + O; P over the 5 ms step.
exposed = [c - min(O, c) for c in comm]
share = min(exposed[0], compute[0] + O) / P
f = [f for f in job["findings"] if f["id"] == "comm_exposed"]
assert len(f) == 1, [x["id"] for x in job["findings"]]
f = f[0]
assert abs(f["amdahl"]["share"] - share) < 1e-12 and f["amdahl"]["speedup"] is None, f["amdahl"]
assert share == exp["comm_exposed_share"], (share, exp["comm_exposed_share"])
# Involved: the three ranks with the most exposed communication (0.9 ms each; rank 2 has 0.6),
# then the all-reduce.
ranked = sorted(range(ranks), key=lambda r: -exposed[r])[:3]
inv = f["involved"]
assert [(v["kind"], v["name"]) for v in inv] == [("rank", str(r)) for r in ranked] + [("collective", "allreduce")], inv
assert all(round(v["time_ms"] * 1e6) == exposed[int(v["name"])] and v["count"] == steps for v in inv[:3]), inv
# The slowest rank's communication finding claims the same time: each names the other, and the
# combined estimate (that rank's) counts it once.
own = [x for x in job["findings"] if x["id"] == "communication"]
assert own and "communication" in f["overlaps"] and "comm_exposed" in own[0]["overlaps"], (f["overlaps"], own)
assert "comm_exposed" not in [p["finding"] for p in job["combined_estimate"]["parts"]], job["combined_estimate"]
assert f["claim"] == [{"space": "gpu", "share": f["amdahl"]["share"], "located": False}], f["claim"]
EOF_PY
out=$("$tg" analyze job --md job.md --html job.html -o job.md.json 2>&1)
[[ $out == *"Job collectives"* && $out == *"allreduce  Float 4194304 B     4     4          5   24.500   1.225 3.42 GB/s 5.14 GB/s"* ]] \
  && grep -q '| `allreduce` | Float | 4194304 B | 4 | 4 | 5 | 24.500 | 1.225 | 3.42 GB/s | 5.14 GB/s |' job.md \
  && grep -q '<td class="name">allreduce</td><td class="num">Float</td><td class="num">4194304 B</td>' job.html \
  && ok || fail "job collectives in the summary, Markdown and HTML: $out"
# The job's Markdown leads with one bold line: ranks, the slowest rank's figures, the straggler.
first=$(head -n 1 job.md)
[[ $first == '**Job of 4 ranks, slowest rank 0: 5.000 ms per iteration'*'; straggler: rank 2 (last at 5 of 5 shared collectives)**' ]] \
  && grep -q '^### The slowest rank (rank 0)$' job.md && [ "$(grep -c '^\*\*' job.md)" -ge 1 ] \
  && ok || fail "job Markdown's first line: $first"
# --replay-findings: the slowest rank's findings carry its own trace's replay (as its own report
# has them); the findings across ranks say why they have none; without the flag, no replay keys.
"$tg" analyze job -q --replay-findings -o replayed.json && "$tg" analyze job/rank-0.json -q --replay-findings -o rank0.json &&
  python3 "$validate" replayed.json && ok || fail "analyze DIR --replay-findings"
python3 - replayed.json rank0.json job.json <<'EOF_PY' && ok || fail "job findings with --replay-findings"
import json, sys
job, rank0, plain = (json.load(open(p)) for p in sys.argv[1:])
assert job["slowest_rank"] == 0
cross = [f for f in job["findings"] if f["id"] in ("straggler", "comm_exposed", "rank_imbalance")]
assert cross and all(f["replay"] is None and "across the job's ranks" in f["replay_reason"] for f in cross), cross
own = [f for f in job["findings"] if f not in cross]
assert [(f["id"], f["replay"]) for f in own] == [(f["id"], f["replay"]) for f in rank0["findings"]], own
assert job["combined_estimate"]["replay"] == rank0["combined_estimate"]["replay"]
assert not any("replay" in f for f in plain["findings"]) and "replay" not in plain["combined_estimate"]
EOF_PY
"$tg" analyze job -q --model llama_tp4 --md job_model.md && first=$(head -n 1 job_model.md)
[[ $first == '**llama\_tp4, job of 4 ranks, slowest rank 0: 5.000 ms per iteration'* ]] && ok || fail "job Markdown with --model: $first"
# Communication fully hidden: no straggler, 1 ms of compute beside each 1 ms all-reduce.
python3 "$gen" hidden --ranks 2 --late-us 0 --overlap-us 1000 && "$tg" analyze hidden -q -o hidden.json || fail "hidden job"
python3 - hidden.json <<'EOF_PY' && ok || fail "fully hidden communication: no comm_exposed"
import json, sys
job = json.load(open(sys.argv[1]))
assert all(r["overlap_ratio"] == 1 for r in job["ranks"]), job["ranks"]
assert "comm_exposed" not in [f["id"] for f in job["findings"]], [f["id"] for f in job["findings"]]
assert job["job"]["collectives"][0]["count_per_rank"] == 5, job["job"]["collectives"]
EOF_PY

# The map step per rank, with xargs -P as docs/SCALE.md shows it, then the reduce.
mkdir reports
ls job/*.json | xargs -P 4 -I{} sh -c '"$1" analyze "$2" -q -o "reports/$(basename "$2" .json).report.json"' _ "$tg" {} \
  && ok || fail "map step with xargs -P"
"$tg" merge reports/*.report.json -q -o merged.json && ok || fail "merge"
python3 - job.json merged.json reports/rank-0.report.json <<'EOF_PY' && ok || fail "merge gives analyze DIR's job report"
import json, sys
a, b, one = (json.load(open(p)) for p in sys.argv[1:])
assert (a["job"].pop("built_from"), b["job"].pop("built_from")) == ("traces", "reports")
# A rank's report names its rank (ranks[0].rank, from distributedInfo) and carries its collective
# calls, steps included: the reduce needs nothing else of the trace.
assert one["ranks"][0]["rank"] == 0 and len(one["ranks"][0]["collective_calls"]) == 5, one["ranks"]
assert [c["step"] for c in one["ranks"][0]["collective_calls"]] == [0, 1, 2, 3, 4]
assert a == b, [k for k in a if a[k] != b.get(k)]
EOF_PY
# The rules across ranks are rules of the table: --rules sets their thresholds, in analyze DIR and
# in merge. Rank 2's lateness is 0.3 ms of the 5 ms iteration (0.06): under a min_share of 0.1 it is
# no straggler, and nothing else changes.
echo '{"rules": {"straggler": {"min_share": 0.1}}}' > straggler.rules.json
"$tg" analyze job -q --rules straggler.rules.json -o tuned.json \
  && "$tg" merge reports/*.report.json -q --rules straggler.rules.json -o tuned_merged.json \
  && ok || fail "--rules on a job"
python3 - job.json tuned.json tuned_merged.json <<'EOF_PY' && ok || fail "--rules changes the findings across ranks"
import json, sys
job, tuned, merged = (json.load(open(p)) for p in sys.argv[1:])
ids = lambda d: [f["id"] for f in d["findings"]]
assert "straggler" in ids(job), ids(job)
assert ids(tuned) == ids(merged) == [i for i in ids(job) if i != "straggler"], (ids(tuned), ids(merged))
EOF_PY
echo '{"rules": {"straggler": {"min_lateness": 0.1}}}' > typo.rules.json
out=$("$tg" merge reports/*.report.json --rules typo.rules.json 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"typo.rules.json: rule 'straggler' has no parameter 'min_lateness'"* ]] && ok \
  || fail "merge --rules with a typo ($rc): $out"
"$tg" analyze job/rank-3.json job/rank-1.json job/rank-0.json job/rank-2.json --jobs 1 -q -o files.json && ok || fail "analyze FILE FILE..."
python3 -c "
import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); assert a==b, [k for k in a if a[k]!=b.get(k)]" job.json files.json \
  && ok || fail "the files' order and --jobs do not change the report"

# Known answers across ranks, to the nanosecond: each rank's report given the collective_calls
# its trace's all-reduce kernels carry (PyTorch's metadata: process group, Seq; ts/dur in us with
# three decimals), as the single-trace report writes them, then merged.
mkdir calls && python3 - reports calls job <<'EOF_PY' || fail "reports with collective_calls"
import glob, json, os, sys
src, dst, traces = sys.argv[1:]
def ns(text):
    whole, _, frac = text.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])
for p in sorted(glob.glob(os.path.join(src, "*.report.json"))):
    d = json.load(open(p))
    raw = open(os.path.join(traces, os.path.basename(p).replace(".report.json", ".json"))).read()
    calls = []
    for line in raw.splitlines():
        if '"Collective name"' not in line:
            continue
        e = json.loads(line.rstrip(","))
        # ts and dur from their text: a double would lose the nanoseconds of an epoch time.
        ts = ns(line.split('"ts": ')[1].split(",")[0]); dur = ns(line.split('"dur": ')[1].split(",")[0])
        a = e["args"]
        calls.append({"name": a["Collective name"], "group": a["Process Group Name"], "seq": a["Seq"],
                      "start_ns": ts, "end_ns": ts + dur, "bytes": a["In msg nelems"] * 4})
    d["ranks"] = [{"rank": json.load(open(os.path.join(traces, os.path.basename(p).replace(".report.json", ".json"))))["distributedInfo"]["rank"],
                   "file": d["source"]["path"], "avg_latency_ms": d["avg_latency_ms"], "idle_ratio": d["idle_ratio"],
                   "collective_calls": calls}]
    json.dump(d, open(os.path.join(dst, os.path.basename(p)), "w"))
EOF_PY
"$tg" merge calls/*.report.json -q -o calls.json --html calls.html && python3 "$validate" calls.json && ok || fail "merge of reports with collective_calls"
grep -q '<h2 id="ranks">Ranks (4)</h2>' calls.html && grep -q 'rank 2 (straggler)' calls.html && ok || fail "job HTML: ranks and straggler chart"
python3 - calls.json job.expected.json <<'EOF_PY' && ok || fail "known answers across ranks"
import json, sys
job, exp = (json.load(open(p)) for p in sys.argv[1:])
assert job["job"]["shared_collectives"] == exp["shared_collectives"] and job["job"]["matched_by"] == "seq", job["job"]
for r, e in zip(job["ranks"], exp["ranks"]):
    assert r["rank_source"] == "distributed_info", r
    assert r["clock_offset_ns"] == e["clock_offset_ns"], (r, e)
    assert abs(r["wait_ms"] - e["wait_ms"]) < 1e-12, (r, e)
    assert r["last_arrivals"] == e["last_arrivals"] and r["collectives"] == e["collectives"], (r, e)
s = [f for f in job["findings"] if f["id"] == "straggler"]
assert len(s) == 1 and len(s[0]["involved"]) == 1, job["findings"]
v = s[0]["involved"][0]
assert (v["kind"], v["name"], v["count"]) == ("rank", str(exp["straggler"]), exp["ranks"][exp["straggler"]]["last_arrivals"]), v
assert round(v["time_ms"] * 1e6) == exp["ranks"][exp["straggler"]]["lateness_ns"], v
# P: the lateness per iteration over the job's latency.
late_ms = exp["ranks"][exp["straggler"]]["lateness_ns"] / 1e6 / exp["shared_collectives"]
assert abs(s[0]["amdahl"]["share"] - late_ms / exp["job_latency_ms"]) < 1e-12, s[0]["amdahl"]
EOF_PY

# Duplicate ranks: exit 2, naming both files.
mkdir dup && cp job/rank-0.json job/rank-1.json dup/ && cp job/rank-1.json dup/rank-1b.json
out=$("$tg" analyze dup -q 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"dup/rank-1.json and dup/rank-1b.json: both are rank 1"* ]] && ok || fail "duplicate ranks ($rc): $out"
# Found before loading: the second rank-1 file is broken after its header, and is never read
# that far (the error names the duplicate, not the broken JSON). Files whose rank only loading
# tells (a store) are still checked after loading.
mkdir early && cp job/rank-1.json early/ && head -c 3000 job/rank-1.json > early/rank-1c.json && echo '{{{ broken' >> early/rank-1c.json
out=$("$tg" analyze early -q 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"early/rank-1.json and early/rank-1c.json: both are rank 1 (distributed_info, distributed_info); a job takes one trace per rank"* ]] \
  && ok || fail "duplicate ranks before loading ($rc): $out"
gzip -c job/rank-1.json > early/rank-1c.json.gz && rm early/rank-1c.json && head -c 3000 job/rank-1.json > early/worker1.json
out=$("$tg" analyze early -q 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"early/rank-1.json and early/rank-1c.json.gz: both are rank 1"* ]] && ok || fail "gzip prefix ($rc): $out"
mkdir late && cp job/rank-1.json late/ && "$tg" convert job/rank-1.json -o late/rank-1.db >/dev/null
out=$("$tg" analyze late -q 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"both are rank 1"* ]] && ok || fail "duplicate rank of a store, after loading ($rc): $out"
out=$("$tg" merge reports/rank-1.report.json reports/rank-1.report.json 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"reports/rank-1.report.json: given twice (rank 1)"* ]] && ok || fail "merge of one report twice ($rc): $out"
cp reports/rank-1.report.json rank-1.again.report.json
out=$("$tg" merge reports/rank-1.report.json rank-1.again.report.json 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"both are rank 1"* ]] && ok || fail "merge of duplicate ranks ($rc): $out"
out=$("$tg" analyze job/rank-0.json job/rank-0.json -q 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"job/rank-0.json: given twice (rank 0)"* ]] && ok || fail "analyze of one trace twice ($rc): $out"
out=$("$tg" merge job.json 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"a job report"* ]] && ok || fail "merge of a job report ($rc): $out"

# Ranks from file names, else file order (a data-quality counter); mixed formats.
python3 "$gen" named --ranks 3 --no-rank-info --name 'host_worker{r}.pt.trace.json' && \
python3 "$gen" plain --ranks 2 --no-rank-info --name 'trace_{r}.json' || fail "generator"
"$tg" analyze named -q -o named.json && "$tg" analyze plain -q -o plain.json && ok || fail "analyze without rank info"
python3 - named.json plain.json <<'EOF_PY' && ok || fail "ranks from file names and file order"
import json, sys
named, plain = (json.load(open(p)) for p in sys.argv[1:])
assert [(r["rank"], r["rank_source"]) for r in named["ranks"]] == [(0, "file_name"), (1, "file_name"), (2, "file_name")]
assert [(r["rank"], r["rank_source"]) for r in plain["ranks"]] == [(0, "file_order"), (1, "file_order")]
c = {c["key"]: c for c in plain["data_quality"]["counters"]}
assert c["rank_from_file_order"]["count"] == 2 and c["rank_from_file_order"]["severity"] == "warning", c
assert "rank_from_file_order" not in {c["key"] for c in named["data_quality"]["counters"]}
EOF_PY
mkdir mixed && cp job/rank-0.json job/rank-1.json mixed/ && "$tg" convert job/rank-2.json -o mixed/rank-2.db >/dev/null \
  && "$tg" analyze mixed -q -o mixed.json && ok || fail "a Kineto and tracegate-store job"
python3 -c "
import json; j=json.load(open('mixed.json')); assert [r['rank'] for r in j['ranks']]==[0,1,2], j['ranks']" && ok || fail "mixed formats' ranks"
out=$("$tg" analyze job -o job.txt.json 2>&1)
[[ $out == *"Job: 4 ranks"* && $out == *"5 collectives shared across ranks (matched by process group and sequence number)"* && $out == *"rank-2.json"* ]] && ok || fail "the summary's per-rank table: $out"

# gate/compare: the job's latency is its slowest rank's, and the verdict names the ranks over the limit.
mkdir slower && cp reports/*.json slower/
python3 - slower/rank-2.report.json <<'EOF_PY' || fail "slower rank"
import json, sys
p = sys.argv[1]; d = json.load(open(p))
d["avg_latency_ms"] *= 1.2
d["latency_samples_ms"] = [x * 1.2 for x in d["latency_samples_ms"]]
json.dump(d, open(p, "w"))
EOF_PY
"$tg" merge slower/*.report.json -q -o slower.json || fail "merge slower"
out=$("$tg" gate slower.json --baseline merged.json --md gate.md 2>&1); rc=$?
[ $rc = 1 ] && [[ $(head -1 <<<"$out") == *"ranks over the limit: 2 5.000 -> 6.000 ms (+20.00%)"* ]] && ok || fail "gate names rank 2 ($rc): $out"
grep -q "### Ranks" gate.md && grep -q "| 2 | 5.000 | 6.000 | +20.00% | yes |" gate.md && ok || fail "gate Markdown per-rank table"
"$tg" compare merged.json slower.json --json cmp.json >/dev/null
python3 -c "
import json; c=json.load(open('cmp.json')); r={x['rank']: x for x in c['ranks']}; assert r[2]['over_threshold'] and not r[0]['over_threshold'], r" \
  && ok || fail "compare --json ranks"
finish job
