#!/usr/bin/env bash
# tests/gpu/compare_profilers.py on the first GPU run's recordings (tests/fixtures/gpu/): tracegate's
# recording of ResNet-50 eager batch 32 (20 iterations) against torch.profiler's trace of another
# run of the same script (5 iterations): 239 kernels per iteration in both, identical per kernel
# name, 4914.5 vs 4912.9 us of kernel time per iteration (figures computed independently with
# sqlite3 and json in the issue). Also the annotation path (the same trace with "iteration N" user
# annotations added), a mismatch (batch 1's trace), the same-process mode of validate.sh's coexist
# check, and unusable input. Usage: compare_profilers.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
cmp=$repo/tests/gpu/compare_profilers.py
gpu=$fixtures/gpu
gunzip -c "$gpu/resnet50_eager_b32.db.gz" >"$dir/rn.db" || { fail "cannot decompress the recording"; finish compare_profilers; exit; }
gunzip -c "$gpu/known_workload.db.gz" >"$dir/known.db"

expect() {  # expect RC WHAT: the last run's exit code
  if [ "$rc" = "$1" ]; then ok; else fail "$2: exit $rc, want $1: $(tail -5 "$dir/out")"; fi
}
has() {  # has LINE WHAT: an exact line of the last run's output
  if grep -qxF -- "$1" "$dir/out"; then ok; else fail "$2: no line '$1' in: $(cat "$dir/out")"; fi
}

python3 "$cmp" "$dir/rn.db" "$gpu/torch211_resnet50_eager_b32.json.gz" >"$dir/out" 2>&1; rc=$?
expect 0 "eager b32, separate runs"
has "tracegate: 20 iterations (20 NVTX ranges 'iteration N' in 'profiled'), 239.0 kernels/iteration, 4914.5 us kernel time/iteration" "tracegate's iterations"
has "torch.profiler: 5 iterations (5 spans between cudaDeviceSynchronize calls (no 'iteration N' annotations)), 239.0 kernels/iteration, 4912.9 us kernel time/iteration" "torch.profiler's iterations"
has "kernels per iteration: identical (239 kernels, 24 names)" "same kernels per name"
has "kernel time per iteration: 4914.5 vs 4912.9 us (+0.03%, goal within 1%)" "kernel time"
has "compare_profilers: passed" "verdict"

# The same trace with an "iteration N" user annotation (record_function, as a trace with CPU
# activity has) around each iteration: the annotations decide, with the same result.
python3 - "$gpu/torch211_resnet50_eager_b32.json.gz" "$dir/annotated.json" <<'PY'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1], "rt"))
ev = doc["traceEvents"]
syncs = sorted(e["ts"] for e in ev if e.get("cat") == "cuda_runtime" and e.get("name") == "cudaDeviceSynchronize")
launch = sorted(e["ts"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver"))
start = launch[0] - 1
for i, s in enumerate(syncs[:5]):
    ev.append({"ph": "X", "cat": "user_annotation", "name": f"iteration {i}", "ts": start, "dur": s - start + 0.5,
               "pid": 1, "tid": 1})
    start = s + 1
json.dump(doc, open(sys.argv[2], "w"))
PY
python3 "$cmp" "$dir/rn.db" "$dir/annotated.json" >"$dir/out" 2>&1; rc=$?
expect 0 "annotated trace"
has "torch.profiler: 5 iterations (5 user annotations 'iteration N'), 239.0 kernels/iteration, 4912.9 us kernel time/iteration" "iterations from annotations"

# Batch 1's trace against batch 32's recording: other kernels, other time; each difference named.
python3 "$cmp" "$dir/rn.db" "$gpu/torch211_resnet50_eager_b1.json.gz" >"$dir/out" 2>&1; rc=$?
expect 1 "b32 recording vs b1 trace"
grep -q '^FAIL: .*kernels per iteration$' "$dir/out" && ok || fail "no per-name count difference: $(cat "$dir/out")"
grep -q '^FAIL: kernel time per iteration 4914.5 vs 791.1 us' "$dir/out" && ok || fail "no time difference: $(cat "$dir/out")"
has "compare_profilers: FAILED" "verdict of a mismatch"

# One process recorded by both (validate.sh's coexist): true when tracegate has every iteration and
# torch.profiler's trace no kernel; a trace with kernels fails.
printf '{"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": 1, "dur": 2, "args": {"correlation": 1}}]}' >"$dir/nokernels.json"
python3 "$cmp" --same-process --iterations 20 "$dir/rn.db" "$dir/nokernels.json" >"$dir/out" 2>&1; rc=$?
expect 0 "same process, torch.profiler without kernels"
has "torch.profiler: 0 kernels in its trace" "no kernels"
python3 "$cmp" --same-process --iterations 30 "$dir/rn.db" "$dir/nokernels.json" >"$dir/out" 2>&1; rc=$?
expect 1 "same process, wrong iteration count"
has "FAIL: tracegate: 20 iterations in 'profiled', the script ran 30" "iteration count"
python3 "$cmp" --same-process "$dir/rn.db" "$gpu/torch211_resnet50_eager_b32.json.gz" >"$dir/out" 2>&1; rc=$?
expect 1 "same process, torch.profiler with kernels"

# Unusable input: exit 2, one line naming the file.
python3 "$cmp" "$dir/known.db" "$gpu/torch211_resnet50_eager_b32.json.gz" >"$dir/out" 2>&1; rc=$?
expect 2 "a recording without 'profiled'"
has "compare_profilers: $dir/known.db: no NVTX range 'profiled' (resnet50_infer.py wraps its timed iterations in one)" "names the file"
python3 "$cmp" "$dir/rn.db" "$dir/nokernels.json" >"$dir/out" 2>&1; rc=$?
expect 2 "a trace without kernels"
finish compare_profilers
