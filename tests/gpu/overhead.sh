#!/usr/bin/env bash
# Issue 5's overhead point, side by side in one run: wall time of a launch-bound loop
# (tests/gpu/launch_bound.cu, 200,000 tiny kernels, and the same in PyTorch: resnet50_infer.py
# --tiny) and of the ResNet-50 script (batch 32, GPU-bound) with no tracing, under `tracegate
# record`, and under torch.profiler (CUDA activities only); the median of REPEATS runs of each.
# Goal: under 2% on the GPU-bound run, below torch.profiler on both.
# Usage: tests/gpu/overhead.sh TRACEGATE LAUNCH_BOUND OUT_DIR [REPEATS=5] [SET=all|launch|resnet]
# (from the repository root; writes OUT_DIR/overhead.tsv: label, wall seconds, one line per run,
# and OUT_DIR/overhead_medians.txt; exit 1 when the ResNet-50 overhead is 2% or more)
set -u -o pipefail
tg=$1; lb=$2; out=$3; reps=${4:-5}; set_=${5:-all}
mkdir -p "$out"
py=tests/gpu/resnet50_infer.py
failed=""
t() {  # t LABEL CMD...: wall seconds of CMD, appended to the table (a failed run fails the script)
  local label=$1 s e; shift
  s=$(date +%s%N); "$@" >>"$out/overhead.log" 2>&1 || failed="$failed $label"; e=$(date +%s%N)
  printf '%s\t%d.%03d\n' "$label" $(((e - s) / 1000000000)) $(((e - s) / 1000000 % 1000)) | tee -a "$out/overhead.tsv"
}
[ -f "$out/overhead.tsv" ] || : >"$out/overhead.tsv"
for r in $(seq "$reps"); do
  if [ "$set_" != resnet ]; then
    t "launch_bound/none"        "$lb"
    t "launch_bound/tracegate"   "$tg" record -o "$out/lb_$r.db" -- "$lb"
    t "torch_tiny/none"          python3 $py --tiny 20000
    t "torch_tiny/tracegate"     "$tg" record -o "$out/tiny_$r.db" -- python3 $py --tiny 20000
    t "torch_tiny/torch.profiler" python3 $py --tiny 20000 --torch-profiler "$out/tiny_$r.torch.json"
  fi
  if [ "$set_" != launch ]; then
    t "resnet50_b32/none"        python3 $py --batch 32
    t "resnet50_b32/tracegate"   "$tg" record -o "$out/rn_$r.db" -- python3 $py --batch 32
    t "resnet50_b32/torch.profiler" python3 $py --batch 32 --torch-profiler "$out/rn_$r.torch.json"
  fi
  rm -f "$out"/*_"$r".db "$out"/*_"$r".torch.json  # the timings are the result; keep $OUT small
done
python3 - "$out/overhead.tsv" <<'PY' | tee "$out/overhead_medians.txt"
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    label, s = line.split()
    runs[label].append(float(s))
med = {k: statistics.median(v) for k, v in runs.items()}
bad = False
for k in sorted(med):
    group = k.split("/")[0]
    base = med.get(group + "/none")
    extra = f"  {100 * (med[k] / base - 1):+.2f}% vs none" if base and not k.endswith("/none") else ""
    print(f"{k}: median {med[k]:.3f} s of {len(runs[k])}{extra}")
if "resnet50_b32/none" in med and "resnet50_b32/tracegate" in med:
    over = med["resnet50_b32/tracegate"] / med["resnet50_b32/none"] - 1
    bad = over >= 0.02
    print(f"resnet50_b32 tracegate overhead {100 * over:+.2f}% (goal < 2%): {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
rc=$?
if [ -n "$failed" ]; then echo "FAIL: runs that failed (see overhead.log):$failed"; exit 1; fi
exit $rc
