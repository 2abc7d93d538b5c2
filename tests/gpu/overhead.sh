#!/usr/bin/env bash
# The collector's overhead, measured inside the programs: each prints its own figure for its timed
# loop, and the process wall time is only a secondary column (a Python process spends ~10 s
# starting, importing torch and initialising CUDA, and a recorded one also writes its trace after
# the loop: wall time says nothing about the cost per launch).
#   launch: tests/gpu/launch_bound.cu (200,000 tiny kernels; "X us/launch"), REPEATS processes each
#           with no tracing, under `tracegate record`, and under `tracegate record --no-driver-api`;
#           the same loop in PyTorch (resnet50_infer.py --tiny 20000, "ms/iter"), one process each
#           with no tracing, tracegate and torch.profiler (CUDA activities only), REPEATS rounds each.
#   resnet: ResNet-50 eager batch 32 (resnet50_infer.py --iters 50), one process each with no
#           tracing, tracegate, tracegate --no-driver-api and torch.profiler, REPEATS rounds each;
#           the first tracegate recording and torch.profiler trace are kept (resnet_b32.db,
#           resnet_b32.torch.json) for tests/gpu/compare_profilers.py.
# Figures are the medians of the runs (launch_bound: processes; PyTorch: rounds in one process).
# Goals: tracegate below torch.profiler on both PyTorch loops. The < 2% goal for ResNet-50 holds
# for a GPU-bound iteration; on the lent H200 VM eager batch 32 is host-bound (4.9 ms of GPU work per
# ~5.4 ms iteration, ~820 runtime + ~360 driver API calls per iteration), so its figure is the
# collector's cost per API call and launch: it is reported beside the goal, not judged by it.
# Usage: tests/gpu/overhead.sh TRACEGATE LAUNCH_BOUND OUT_DIR [REPEATS=3] [SET=all|launch|resnet]
# (from the repository root; writes OUT_DIR/overhead.tsv: label, run, in-process figure, unit, wall
# seconds; OUT_DIR/overhead_medians.txt; exit 1 when a run failed or tracegate is not below
# torch.profiler).
set -u -o pipefail
tg=$1; lb=$2; out=$3; reps=${4:-3}; set_=${5:-all}
mkdir -p "$out"
py=tests/gpu/resnet50_infer.py
failed=""
n=0
# run LABEL CMD...: one process; each in-process figure it prints becomes a row (with its wall time).
run() {
  local label=$1 s e wall log rc=0
  shift
  n=$((n + 1))
  log=$out/run_$n.log
  s=$(date +%s%N)
  "$@" >"$log" 2>&1 || rc=1
  e=$(date +%s%N)
  wall=$(printf '%d.%03d' $(((e - s) / 1000000000)) $(((e - s) / 1000000 % 1000)))
  cat "$log" >>"$out/overhead.log"
  sed -n -e 's/.*, \([0-9.]*\) us\/launch.*/\1 us\/launch/p' -e 's/.*, \([0-9.]*\) ms\/iter.*/\1 ms\/iter/p' "$log" |
    while read -r v unit; do printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$n" "$v" "$unit" "$wall"; done | tee -a "$out/overhead.tsv"
  grep -qE 'us/launch|ms/iter' "$log" || { rc=1; printf '%s\t%s\t-\t-\t%s\n' "$label" "$n" "$wall" | tee -a "$out/overhead.tsv"; }
  [ $rc = 0 ] || failed="$failed [$label]"
  rm -f "$log"
}
[ -f "$out/overhead.tsv" ] || : >"$out/overhead.tsv"
if [ "$set_" != resnet ]; then
  for r in $(seq "$reps"); do  # interleaved, so drift hits each configuration alike
    run "launch_bound/none" "$lb"
    run "launch_bound/tracegate" "$tg" record -o "$out/lb.db" -- "$lb"
    run "launch_bound/tracegate --no-driver-api" "$tg" record --no-driver-api -o "$out/lb.db" -- "$lb"
  done
  rm -f "$out/lb.db"  # 200,000 kernels: the figures are the result
  run "torch_tiny/none" python3 $py --tiny 20000 --rounds "$reps"
  run "torch_tiny/tracegate" "$tg" record -o "$out/tiny.db" -- python3 $py --tiny 20000 --rounds "$reps"
  run "torch_tiny/torch.profiler" python3 $py --tiny 20000 --rounds "$reps" --torch-profiler "$out/tiny.torch.json"
  rm -f "$out/tiny.db" "$out/tiny.torch.json"
fi
if [ "$set_" != launch ]; then
  rn="python3 $py --batch 32 --iters 50 --rounds $reps"
  run "resnet50_b32/none" $rn
  run "resnet50_b32/tracegate" "$tg" record -o "$out/resnet_b32.db" -- $rn
  run "resnet50_b32/tracegate --no-driver-api" "$tg" record --no-driver-api -o "$out/resnet_b32_nodrv.db" -- $rn
  run "resnet50_b32/torch.profiler" $rn --torch-profiler "$out/resnet_b32.torch.json"
  rm -f "$out/resnet_b32_nodrv.db"
fi
python3 - "$out/overhead.tsv" <<'PY' | tee "$out/overhead_medians.txt"
import statistics, sys
from collections import defaultdict
fig, wall, unit = defaultdict(list), defaultdict(dict), {}
for line in open(sys.argv[1]):
    label, run, value, u, w = line.rstrip("\n").split("\t")
    if value != "-":
        fig[label].append(float(value))
        unit[label] = u
    wall[label][run] = float(w)
med = {k: statistics.median(v) for k, v in fig.items()}
bad = False
for k in sorted(set(fig) | set(wall)):
    group = k.split("/")[0]
    base = med.get(group + "/none")
    if k not in med:
        print(f"{k}: no figure (the run failed)")
        continue
    vs = f" ({100 * (med[k] / base - 1):+.1f}% vs none)" if base and not k.endswith("/none") else ""
    w = statistics.median(wall[k].values())
    print(f"{k}: median {med[k]:.3f} {unit[k]} of {len(fig[k])}{vs}; process wall {w:.1f} s (median of {len(wall[k])})")
for group in ("torch_tiny", "resnet50_b32"):
    t, p = med.get(group + "/tracegate"), med.get(group + "/torch.profiler")
    if t is None or p is None:
        continue
    ok = t < p
    bad = bad or not ok
    print(f"{group}: tracegate {t:.3f} vs torch.profiler {p:.3f} ms/iter: tracegate {'below' if ok else 'NOT below'} torch.profiler")
none, t = med.get("resnet50_b32/none"), med.get("resnet50_b32/tracegate")
if none and t:
    over = t / none - 1
    print(f"resnet50_b32 goal < 2% over none: {100 * over:+.1f}%: " + ("met" if over < 0.02 else
          "not met (this iteration is host-bound on the lent VM: the figure is the collector's cost per API call and "
          "launch, not a GPU-bound iteration's)"))
sys.exit(1 if bad else 0)
PY
rc=$?
if [ -n "$failed" ]; then echo "FAIL: runs that failed (see overhead.log):$failed"; exit 1; fi
exit $rc
