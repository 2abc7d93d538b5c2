#!/usr/bin/env bash
# tracegate predict: the seed's Amdahl numbers, several parts, P measured from a trace, and
# usage errors (exit 2, one line).
# Usage: predict.sh TRACEGATE FIXTURES_DIR
set -u
tg=$1
fixtures=$2
fails=0; passes=0
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
check() {  # check DESCRIPTION PATTERN CMD... : stdout must contain PATTERN and exit 0
  local what=$1 pattern=$2; shift 2
  local out rc
  out=$("$tg" "$@" 2>&1); rc=$?
  if [ $rc = 0 ] && grep -qF -- "$pattern" <<<"$out"; then passes=$((passes+1));
  else fails=$((fails+1)); echo "FAIL: $what: tracegate $* -> rc $rc:"; echo "$out"; fi
}
bad() {  # bad CMD... : exit 2 and one line on stderr
  local err rc
  err=$("$tg" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -le 2 ]; then passes=$((passes+1));
  else fails=$((fails+1)); echo "FAIL: tracegate $* -> rc $rc, stderr: $err"; fi
}

check "seed P=0.10" "overall speedup: 1.013" predict --fraction 0.1 --speedup 1.146
check "seed P=0.15" "overall speedup: 1.019" predict --fraction 0.15 --speedup 1.146
check "gain" "(+1.3%)" predict --fraction 0.1 --speedup 1.146
check "bound" "upper bound (every S -> infinity): 1.111" predict --fraction 0.1 --speedup 1.146
# 1 / (0.85 + 0.1/1.146 + 0.05/2) = 1.0388...
check "two parts" "overall speedup: 1.039" predict --part 0.1:1.146 --part 0.05:2
check "infinite part" "overall speedup: 2.000" predict --part 0.5:inf
check "measured kernels" "P = " predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels 'gemm' --speedup 1.5
check "measured range" "ranges take" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --range 'forward' --speedup 1.2
check "measured launched-in" "kernels take" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --launched-in 'forward' --speedup 1.2 --method amdahl
# --launched-in is a replayed kernel selection too (a stage's kernels whatever their names): the
# replay speeds up the same kernels whose GPU time Amdahl's P counts.
"$tg" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --launched-in 'forward' --speedup 1.2 --json "$dir/li.json" >"$dir/li.txt" 2>&1
"$tg" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --launched-in 'forward' --speedup 1.2 --method amdahl --json "$dir/la.json" >/dev/null 2>&1
if python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2]))
k = r["changes"]["kernels"]
assert r["method"] == "replay" and k["launched_in"] == "forward" and k["regex"] is None, k
assert k["matched"] == a["changes"]["measured"]["matched"] > 0, (k, a["changes"]["measured"])
assert abs(k["recorded_ms"] - a["changes"]["measured"]["part_ms"]) < 1e-6
# Recounted from the JSON: kernels whose runtime call lies inside a range named like forward on its thread.
import gzip, re
ev = [e for e in json.load(gzip.open(sys.argv[3]))["traceEvents"] if e.get("ph") == "X"]
rng = [e for e in ev if e.get("cat") in ("cpu_op", "user_annotation", "python_function") and re.search("forward", e["name"], re.I)]
kern = {e["args"].get("correlation"): e for e in ev if e.get("cat") == "kernel"}
hit = {}
for c in (e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")):
    if any(r["pid"] == c["pid"] and r["tid"] == c["tid"] and r["ts"] <= c["ts"] and c["ts"] + c["dur"] <= r["ts"] + r["dur"] for r in rng):
        g = kern.get(c["args"].get("correlation"))
        if g: hit[id(g)] = g["dur"]
assert k["matched"] == len(hit) == 78 and abs(k["recorded_ms"] - sum(hit.values()) / 1e3) < 1e-9, (k, len(hit))' \
  "$dir/li.json" "$dir/la.json" "$fixtures/real/kineto_alexnet_train_step.json.gz"; then
  passes=$((passes+1))
else
  fails=$((fails+1)); echo "FAIL: predict --launched-in replayed: $(cat "$dir/li.txt")"
fi
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --launched-in 'no such range' --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --range forward --launched-in forward --speedup 2
# The replay (issue 31): the default with a trace; re-timed under the change, Amdahl beside it;
# its own changes need no P; --method amdahl forces Amdahl's law.
alexnet="$fixtures/real/kineto_alexnet_train_step.json.gz"
check "replay by default" "replay: 1 iteration(s)" predict "$alexnet" --kernels gemm --speedup 1.5
check "replay beside amdahl" "amdahl: speedup " predict "$alexnet" --kernels gemm --speedup 1.5
check "replay held fixed" "held fixed: host time between calls" predict "$alexnet" --kernels gemm --speedup 1.5
check "replay explicit" "replay: 1 iteration(s)" predict "$alexnet" --kernels gemm --speedup 1.5 --method replay
check "amdahl forced" "measured: " predict "$alexnet" --kernels gemm --speedup 1.5 --method amdahl
check "replay launches" "launch calls take 2 us each" predict "$alexnet" --launch-us 2
check "replay host" "of host time inside ranges matching" predict "$alexnet" --host 'forward' --speedup 2
check "replay class" "kernels (" predict "$alexnet" --class conv --speedup 2
check "replay class and kernels" "kernels (" predict "$alexnet" --class conv --kernels 'cudnn|implicit' --speedup 2
check "replay graph" "graph launches replace" predict "$alexnet" --graph
check "replay graph range" "2 graph launches replace 78 launch calls" predict "$alexnet" --graph 'forward'
check "graph not amdahl" "amdahl: cannot express this change" predict "$alexnet" --graph
check "combined" "graph launches replace" predict "$alexnet" --class gemm --speedup 1.2 --launch-us 2 --graph
# Each --speedup speeds up the selections given since the previous one.
check "paired speedups" "run 2x faster" predict "$alexnet" --class gemm --speedup 1.2 --class conv --speedup 2
check "paired host" "matching 'forward' run 3x faster" predict "$alexnet" --class conv --speedup 2 --host forward --speedup 3
bad predict "$alexnet" --class gemm --speedup 1.5 --class conv
bad predict "$alexnet" --speedup 1.5 --speedup 2 --class gemm
bad predict "$alexnet" --class gemm --class conv --speedup 2
bad predict "$alexnet" --kernels . --speedup 2 --class conv --speedup 3
bad predict "$alexnet" --host forward
bad predict "$alexnet" --host forward --speedup 2 --method amdahl
bad predict "$alexnet" --launch-us 2 --method amdahl
bad predict "$alexnet" --class gemm --speedup 2 --range forward
bad predict "$alexnet" --class matmul --speedup 2
bad predict "$alexnet" --graph no_such_range_xyz
bad predict "$alexnet" --graph --speedup 2
bad predict --fraction 0.1 --speedup 2 --method replay
bad predict "$alexnet" --range forward --speedup 2 --method replay
bad predict "$alexnet" --method replay
bad predict "$alexnet" --kernels gemm --speedup 2 --method guess
bad predict "$alexnet" --remove-syncs 'no_such_sync'

# --json: the prediction, valid against reports/schema/tracegate.prediction.v1.schema.json.
tmp=$dir/json; mkdir -p "$tmp"
root=$(cd "$fixtures/../.." && pwd)
json_check() {  # json_check DESCRIPTION PYTHON_ASSERTION ARGS... : writes --json, validates, asserts on `p`
  local what=$1 assertion=$2; shift 2
  local out rc
  rm -f "$tmp/p.json"
  out=$("$tg" "$@" --json "$tmp/p.json" 2>&1); rc=$?
  if [ $rc = 0 ] && python3 - "$root/reports/schema/tracegate.prediction.v1.schema.json" "$tmp/p.json" "$assertion" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.Draft202012Validator(schema).validate(p)
assert eval(sys.argv[3]), (sys.argv[3], p)
PY
  then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: $what: tracegate $* --json -> rc $rc: $out"; fi
}
json_check "json replay" "p['method'] == 'replay' and p['amdahl_speedup'] is not None and p['changes']['kernels']['matched'] > 0 and len(p['iterations']) == 1" \
  predict "$alexnet" --kernels gemm --speedup 1.5
json_check "json replay speedup" "abs(p['overall_speedup'] - p['base_latency_ms'] / p['predicted_latency_ms']) < 1e-9" \
  predict "$alexnet" --kernels gemm --speedup 1.5
json_check "json graph" "p['amdahl_speedup'] is None and p['changes']['graph']['graph_launches'] >= 1 and any('--graph' in a for a in p['assumptions'])" \
  predict "$alexnet" --class gemm --speedup 1.2 --launch-us 2 --graph
json_check "json paired" "[k['speedup'] for k in [p['changes']['kernels']] + p['changes']['more_kernels']] == [1.2, 2] and p['amdahl_speedup'] is not None and len(p['changes']['parts']) == 2" \
  predict "$alexnet" --class gemm --speedup 1.2 --class conv --speedup 2
json_check "json amdahl" "p['method'] == 'amdahl' and p['changes']['measured']['by'] == 'kernels' and p['amdahl_speedup'] == p['overall_speedup']" \
  predict "$alexnet" --kernels gemm --speedup 1.5 --method amdahl
json_check "json fraction" "p['method'] == 'amdahl' and p['trace'] is None and p['base_latency_ms'] is None and abs(p['overall_speedup'] - 1.0129) < 1e-3" \
  predict --fraction 0.1 --speedup 1.146
# A bad --json path: exit 2, one line naming the file, nothing left behind.
err=$("$tg" predict "$alexnet" --kernels gemm --speedup 1.5 --json "$tmp/no/such/dir/p.json" 2>&1 >/dev/null); rc=$?
if [ $rc = 2 ] && [ "$(grep -c . <<<"$err")" = 1 ] && grep -qF "$tmp/no/such/dir/p.json" <<<"$err"; then passes=$((passes+1))
else fails=$((fails+1)); echo "FAIL: bad --json path -> rc $rc: $err"; fi
cp "$alexnet" "$tmp/copy.json.gz"
err=$("$tg" predict "$tmp/copy.json.gz" --kernels gemm --speedup 1.5 --json "$tmp/copy.json.gz" 2>&1 >/dev/null); rc=$?
if [ $rc = 2 ] && grep -qF "would overwrite the input trace" <<<"$err"; then passes=$((passes+1))
else fails=$((fails+1)); echo "FAIL: --json onto the trace -> rc $rc: $err"; fi

# --finding: a finding's claim replayed as located speedups (docs/PREDICTION.md, "Findings replayed").
# kineto_sampled_rank0 has communication (gpu, located, S unbounded) and idle_gaps (idle, located at
# the idle phase's pieces); replaying idle_gaps moves the main thread's second iteration earlier than
# its end (work on other threads stays), which the prediction says.
rank0=$fixtures/real/kineto_sampled_rank0.json.gz
check "finding" "changed: the claimed instants of finding communication take no time (its S is unbounded)" \
  predict "$rank0" --finding communication
check "finding all" "changed: the claimed instants of findings communication, idle_gaps run their S times faster" \
  predict "$rank0" --finding all
check "finding amdahl beside" "part 1: P = 0.1710, S = unbounded (communication)" predict "$rank0" --finding all
check "finding caution" "caution: 1 of 2 iterations come out longer than recorded under a change that only removes time" \
  predict "$rank0" --finding idle_gaps
json_check "json finding" "p['method'] == 'replay' and p['changes']['findings']['replayed'] == ['communication'] and p['changes']['findings']['left_out'] == [] and p['amdahl_speedup'] is not None and p['overall_speedup'] <= p['amdahl_speedup'] <= p['amdahl_bound'] and any('--finding' in a for a in p['assumptions'])" \
  predict "$rank0" --finding communication
json_check "json finding all" "p['changes']['findings']['replayed'] == ['communication', 'idle_gaps'] and p['changes']['findings']['left_out'] == [] and p['changes']['findings']['gpu_activities'] > 0 and p['changes']['findings']['host_recorded_ms'] > 0 and p['changes']['kernels'] is None and p['caution'].startswith('1 of 2 iterations')" \
  predict "$rank0" --finding all
json_check "json no caution" "p['caution'] is None" predict "$rank0" --finding communication
json_check "json no finding" "p['changes']['findings'] is None" predict "$alexnet" --kernels gemm --speedup 1.5
# The covered GPU time, recomputed from the trace JSON and the claim's intervals (the Chrome export's
# findings track): exactly the replay's.
covered() {  # covered TRACE REF
  "$tg" analyze "$1" -o "$dir/fr.json" -q && "$tg" export "$1" --chrome "$dir/fc.json" >/dev/null &&
    "$tg" predict "$1" --finding "$2" --json "$dir/ff.json" >/dev/null &&
    python3 "$(dirname "$0")/finding_covered.py" "$1" "$dir/fr.json" "$dir/fc.json" "$dir/ff.json" "$2" >/dev/null
}
if covered "$rank0" communication; then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: covered GPU time of communication"; fi
shared=$root/../shared/traces
if [ -d "$shared" ]; then
  for f in memory_bound 'fusion_candidate#1'; do
    if covered "$shared/kineto_hf_qwen_0.5b_mi300.json.gz" "$f"; then passes=$((passes+1))
    else fails=$((fails+1)); echo "FAIL: covered GPU time of $f on kineto_hf_qwen_0.5b_mi300"; fi
  done
fi
# An unknown ref: one line listing the refs that exist.
err=$("$tg" predict "$rank0" --finding no_such_finding 2>&1 >/dev/null); rc=$?
if [ $rc = 2 ] && [ "$(grep -c . <<<"$err")" = 1 ] && grep -qF "the findings are: communication, idle_gaps" <<<"$err"; then
  passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: --finding unknown ref -> rc $rc: $err"; fi
bad predict "$alexnet" --finding all                # idle_gaps and host_bound: their instants hold nothing to re-time
bad predict "$rank0" --finding communication --kernels gemm --speedup 2
bad predict "$rank0" --finding communication --graph
bad predict "$rank0" --finding communication --method amdahl
bad predict "$rank0" --finding communication --finding communication
bad predict --finding all

bad predict
bad predict --fraction 0.1
bad predict --fraction 1.5 --speedup 2
bad predict --fraction 0.1 --speedup 0
bad predict --part 0.1
bad predict --part 0.7:2 --part 0.6:2
bad predict --kernels gemm --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels 'no_such_kernel_xyz' --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels '(' --speedup 2
bad predict /nonexistent.json --kernels gemm --speedup 2

echo "$passes passed, $fails failed"
[ $fails = 0 ]
