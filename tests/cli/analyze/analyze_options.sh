#!/usr/bin/env bash
# tracegate analyze: iteration, phase, rules, costs and reference options end to end. Bad values
# exit 2 with one line and leave no report behind; good ones land in the report.
# Usage: analyze_options.sh TRACEGATE FIXTURES_DIR
set -u
tg=$1
fixtures=$2
trace=$fixtures/real/kineto_alexnet_train_step.json.gz
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
fail() { fails=$((fails+1)); echo "FAIL: $*"; }
bad() {  # bad CMD... : exit 2, at most one line on stderr, no report file
  local err rc
  rm -f "$dir/r.json"
  err=$("$tg" analyze "$trace" -o "$dir/r.json" -q "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] && [ ! -e "$dir/r.json" ] \
     && [ -z "$(ls "$dir" | grep -v -e '^rules' -e '^costs' -e '^ref')" ]; then ok;
  else fail "analyze $* -> rc $rc, stderr: $err"; fi
}
json() {  # json EXPR : evaluates a Python expression on the report `r`
  python3 -c "import json,sys; r=json.load(open('$dir/r.json')); sys.exit(0 if ($1) else 1)"
}

printf '{"rules": {"idle_gap": {"threshold": 0.2}}}' >"$dir/rules_typo.json"
printf '{"rules": {"idle_gaps": {"threshold": 1.0}, "fusion_candidate": {"enabled": false}}}' >"$dir/rules_ok.json"
printf '[{"kernel": "(", "bytes": 1}]' >"$dir/costs_bad.json"
printf '[{"kernel": "gemm", "bytes": 1000000, "flops": 2000000000}]' >"$dir/costs_ok.json"
printf '{"schema": "something/else"}' >"$dir/ref_other.json"

bad --iteration '('
bad --phase 'pre=('
bad --phase 'middle=x'
bad --skip 1
bad --rules "$dir/rules_typo.json"
bad --rules "$dir/missing_rules.json"
bad --costs "$dir/costs_bad.json"
bad --reference "$dir/ref_other.json"

# Defaults: alexnet has no iteration markers, so the whole trace is one iteration.
"$tg" analyze "$trace" -o "$dir/r.json" -q || fail "analyze default"
json 'r["iterations"] == 1 and r["iteration_source"]["from_markers"] is False' && ok || fail "one iteration"
json 'abs(sum(r[k] for k in ("pre_ms_ratio","h2d_ms_ratio","infer_ms_ratio","d2h_ms_ratio","post_ms_ratio","idle_ratio")) - 1) < 1e-9' \
  && ok || fail "phase ratios sum to 1"
json 'r["latency_cv"] is None and r["latency_cv_reason"]' && ok || fail "cv null with one iteration"
json 'isinstance(r["findings"], list) and all("amdahl" in f and "evidence" in f for f in r["findings"])' \
  && ok || fail "findings shape"

# Iterations named by the user: the alexnet forward annotations (a warm-up and a measured one
# are outermost; each has a nested repeat), tagged and with a batch.
"$tg" analyze "$trace" -o "$dir/r.json" -q --iteration 'forward\]$' --batch 32 --model alexnet --precision fp32 \
  --rules "$dir/rules_ok.json" --costs "$dir/costs_ok.json" || fail "analyze with options"
json 'r["iterations"] == 2 and r["batch"] == 32 and r["model"] == "alexnet" and r["precision"] == "fp32"' \
  && ok || fail "iterations from --iteration, tags"
json 'len(r["latency_samples_ms"]) == 2 and r["throughput_fps"] > 0' && ok || fail "samples and throughput"
json 'r["rules"]["idle_gaps"]["threshold"] == 1.0 and r["rules"]["fusion_candidate"]["enabled"] is False' \
  && ok || fail "rules echoed"
json 'not any(f["id"] in ("idle_gaps", "fusion_candidate") for f in r["findings"])' && ok || fail "rules applied"
json 'len(r["roofline"]) == 1 and r["roofline"][0]["source"] == "costs"' && ok || fail "costs in the roofline"
"$tg" analyze "$trace" -o "$dir/r.json" -q --iteration 'forward\]$' --skip 1 || fail "skip"
json 'r["iterations"] == 1 and r["iteration_source"]["skipped"] == 1' && ok || fail "skip 1 of 2"
bad --iteration 'forward\]$' --skip 2

# The INT8 rule with a reference report written by analyze itself.
"$tg" analyze "$trace" -o "$dir/ref_fp16.json" -q --precision fp16 || fail "reference report"
"$tg" analyze "$trace" -o "$dir/r.json" -q --precision int8 --reference "$dir/ref_fp16.json" || fail "int8 run"
json 'any(f["id"] == "int8_no_gain" for f in r["findings"])' && ok || fail "int8_no_gain fires on equal latency"

echo "$passes passed, $fails failed"
[ $fails = 0 ]
