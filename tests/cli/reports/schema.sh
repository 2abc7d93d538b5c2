#!/usr/bin/env bash
# Every report the CLI writes validates against the schema `tracegate schema` prints:
# analyze on each real, Kineto and nsys fixture (with and without tags, costs, a converted store,
# a saved baseline), and the golden report. Broken reports must fail: a missing required key,
# a null without its _reason, a priority or severity outside the enum.
# Usage: schema.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
validate="python3 $(cd "$(dirname "$0")/.." && pwd)/validate_report.py"

if ! python3 -c 'import jsonschema' 2>/dev/null; then
  echo "FAIL: python3 has no jsonschema module; install python3-jsonschema (ci/deps.sh does)"
  exit 1
fi

reports=()
analyze() {  # analyze NAME TRACE [OPTIONS...]: writes $dir/NAME.json
  local name=$1 trace=$2; shift 2
  if "$tg" analyze "$trace" -o "$dir/$name.json" -q "$@" 2>"$dir/err"; then
    reports+=("$dir/$name.json"); ok
  else
    fail "analyze $trace $*: $(cat "$dir/err")"
  fi
}

for f in "$fixtures"/real/*.json.gz "$fixtures"/kineto/*.json; do
  analyze "$(basename "$f" | tr . _)" "$f"
done
sqlite3 "$dir/nsys.sqlite" <"$fixtures/nsys/small_export.sql" && analyze nsys "$dir/nsys.sqlite"
alexnet=$fixtures/real/kineto_alexnet_train_step.json.gz
printf '[{"kernel": "gemm", "bytes": 1000000, "flops": 2000000000}]' >"$dir/costs.json"
analyze tagged "$alexnet" --model alexnet --precision fp32 --batch 32 --commit abc123 --costs "$dir/costs.json" \
  --iteration 'forward\]$'
analyze no_peak "$fixtures/kineto/new_generation.json" --costs "$dir/costs.json" --top 1 --gaps 0
"$tg" convert "$alexnet" -o "$dir/alexnet.db" >/dev/null && analyze store "$dir/alexnet.db"
# --critical-path adds its section (and only then: reports without it have no such key).
analyze critical_path "$alexnet" --critical-path
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert isinstance(a["critical_path"], dict) and "critical_path" not in b
k=a["critical_path"]; assert sum(v["total_ns"] for v in k["kinds"].values()) == k["step_total_ns"]' \
  "$dir/critical_path.json" "$dir/store.json" && ok || fail "critical_path section: present with --critical-path, absent without, kinds summing to the steps"
# The timeline keeps the drawn iteration's whole path: its segments in time order, not
# overlapping, summing to the iteration's span (recomputed here from the rows); the page marks it.
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["timeline"]; cp=t["critical_path"]
rows=cp["segments"]; assert rows and cp["segments_dropped"] == 0 and cp["segments_total"] == len(rows)
assert sum(x[1] for x in rows) == t["duration_ns"], (sum(x[1] for x in rows), t["duration_ns"])
assert rows[0][0] == 0 and all(a[0] + a[1] <= b[0] for a, b in zip(rows, rows[1:]))
assert "critical_path" not in json.load(open(sys.argv[2]))["timeline"]' \
  "$dir/critical_path.json" "$dir/store.json" && ok || fail "timeline.critical_path: the drawn iteration's path, summing to its span"
# With --replay-findings every finding carries the replay's estimate, or null and why (alexnet: none
# is replayable); the sampled rank's communication is: its replayed gain stays within its Amdahl
# figure, and the combined estimate replayed (one finding: the same figures) too.
analyze replay_alexnet "$alexnet" --replay-findings
analyze replay_sampled "$fixtures/real/kineto_sampled_rank0.json.gz" --replay-findings
python3 -c 'import json,sys
for path in sys.argv[1:3]:
    r = json.load(open(path))
    for f in r["findings"]:
        assert "replay" in f, (path, f["id"])
        assert f["replay"] is not None or f["replay_reason"], (path, f["id"])
        if f["replay"]:
            g = f["replay"]; assert g["overall_speedup"] == g["base_total_ns"] / g["predicted_total_ns"], g
            assert g["overall_speedup"] <= f["amdahl"]["overall_speedup"] + 1e-9, (f["id"], g)
a = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert all(f["replay"] is None for f in a["findings"]) and a["combined_estimate"]["replay"] is None
assert [f["id"] for f in s["findings"] if f["replay"]] == ["communication"], s["findings"]
c = dict(s["combined_estimate"]["replay"]); assert c.pop("findings") == ["communication"], c
held = c.pop("assumptions"); assert any(h.startswith("located GPU speedup") for h in held), held
assert c == [f for f in s["findings"] if f["replay"]][0]["replay"]
for path in sys.argv[3:]:
    b = json.load(open(path))
    assert all("replay" not in f for f in b["findings"]) and "replay" not in b["combined_estimate"], path' \
  "$dir/replay_alexnet.json" "$dir/replay_sampled.json" "$dir/store.json" "$dir/critical_path.json" && ok ||
  fail "findings replayed with --replay-findings: each with the replay's estimate or why not; none without"
if "$tg" analyze "$alexnet" --critical-path -q --html "$dir/cp.html" 2>"$dir/err" &&
  [ "$(grep -o 'class="cp-mark"' "$dir/cp.html" | wc -l)" -gt 0 ] && grep -q '>critical path</text>' "$dir/cp.html"; then
  ok
else
  fail "the page marks the critical path: $(cat "$dir/err")"
fi
if "$tg" baseline save "$alexnet" --name alexnet --dir "$dir/baselines" >/dev/null; then
  reports+=("$dir/baselines/alexnet.json"); ok
else
  fail "baseline save of a trace"
fi
reports+=("$fixtures/summary/expected_report.json")

if out=$($validate "${reports[@]}" 2>&1); then ok; else fail "schema validation: $out"; fi
echo "validated ${#reports[@]} reports"

# The schema is not vacuous: each broken copy of a valid report must be rejected.
broken() {  # broken NAME PYTHON_STATEMENT: applies the statement to report r, expects rejection
  python3 -c "import json; r=json.load(open('$dir/tagged.json')); $2; json.dump(r, open('$dir/broken_$1.json', 'w'))"
  if $validate "$dir/broken_$1.json" 2>/dev/null; then fail "broken report '$1' passed validation"; else ok; fi
}
broken missing_avg 'del r["avg_latency_ms"]'
broken missing_commit 'del r["commit"]'
broken null_without_reason 'r["avg_latency_ms"] = None; r.pop("avg_latency_ms_reason", None)'
broken string_number 'r["p95_latency_ms"] = "12.5"'
broken priority 'r["findings"][0]["priority"] = "urgent"'
broken severity 'r["data_quality"]["counters"][0]["severity"] = "fatal"'
broken schema_name 'r["schema"] = "tracegate.report/v2"'
broken ratio_above_one 'r["idle_ratio"] = 1.5'
broken unknown_device_key 'r["devices"][0]["colour"] = "red"'
broken bad_date 'r["profiling_date"] = "yesterday"'
broken kernel_table_row 'del r["kernel_table"][0]["count"]'
broken timeline_kind 'r["timeline"]["lanes"][0]["items"][0][2] = "fence"'
broken timeline_without_reason 'r["timeline"]["iteration"] = None'
brokencp() {  # brokencp NAME PYTHON_STATEMENT: as broken, on the --replay-findings report of the sampled rank
  python3 -c "import json; r=json.load(open('$dir/replay_sampled.json')); $2; json.dump(r, open('$dir/broken_$1.json', 'w'))"
  if $validate "$dir/broken_$1.json" 2>/dev/null; then fail "broken report '$1' passed validation"; else ok; fi
}
brokencp replay_without_reason 'f = [f for f in r["findings"] if not f["replay"]][0]; f.pop("replay_reason")'
brokencp replay_missing_total 'del [f for f in r["findings"] if f["replay"]][0]["replay"]["predicted_total_ns"]'

finish schema
