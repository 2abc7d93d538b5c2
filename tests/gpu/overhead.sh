#!/usr/bin/env bash
# The collector's overhead, the honest protocol (issue 32): one process per configuration,
# interleaved, each program timing its own loop (the process wall time is only a secondary column:
# a Python process spends ~10 s starting, and a recorded one also writes its trace after the loop).
# Configurations: none, none again (the A/A spread: what two untraced processes differ by), tracegate
# (`tracegate record`, default tier), torch.profiler (PyTorch loops; timed inside profile(), so its
# start and trace processing are not counted) and nsys where it runs (the nsys beside Nsight Compute
# writes a .qdstrm it may not turn into a report: the program's own timing is what counts).
# Workloads (SET):
#   launch  tests/gpu/launch_bound.cu (200,000 launches, "X us/launch"), REPEATS rounds of one
#           process per configuration; and the same loop in PyTorch (resnet50_infer.py --tiny 20000),
#           one process per configuration, REPEATS rounds inside it.
#   resnet  ResNet-50 eager batch 32, host-bound: one process per configuration, 5 rounds of 60
#           iterations after 20 warm-up, every iteration timed (median, p90, outliers). The first
#           tracegate recording and the torch.profiler trace stay (resnet_b32.db,
#           resnet_b32.torch.json) for tests/gpu/compare_profilers.py (validate.sh part 3).
#   b256    ResNet-50 eager batch 256, GPU-bound: 3 rounds of 20 iterations after 5 warm-up.
#   honest  launch_bound, resnet and b256 (issue 32's protocol; tests/gpu/floor_step.sh)
#   all     launch, resnet and b256.
# An effect counts only where it exceeds the A/A spread (overhead_summary.py says which).
# Usage: tests/gpu/overhead.sh TRACEGATE LAUNCH_BOUND OUT_DIR [REPEATS=3] [SET=all|launch|resnet|b256|honest]
# (from the repository root). Environment: OVERHEAD_PYTHON (python3), OVERHEAD_NSYS (a path, or
# "none"; default: nsys on PATH, else the one beside Nsight Compute), OVERHEAD_BUDGET_S (start no run
# after this many seconds; default 900), OVERHEAD_TIMEOUT_S (one run; default 150), OVERHEAD_FLOOR_JSON
# (cupti_floor.json, for the per-launch goal). Writes OUT_DIR/overhead.tsv (workload, configuration,
# run, figure, unit, wall s), OUT_DIR/iterations.tsv (workload, configuration, run, round, ms...),
# OUT_DIR/overhead_summary.txt and .json; exit 1 when a run failed or a goal was not met.
# OVERHEAD_B32_ITERS replaces "--warmup 20 --iters 60 --rounds 5" (validate.sh's shorter check).
set -u -o pipefail
tg=$1; lb=$2; out=$3; reps=${4:-3}; set_=${5:-all}
py=${OVERHEAD_PYTHON:-python3}
budget=${OVERHEAD_BUDGET_S:-900}
run_timeout=${OVERHEAD_TIMEOUT_S:-150}
here=$(cd "$(dirname "$0")" && pwd)
infer=tests/gpu/resnet50_infer.py
mkdir -p "$out"
: >"$out/overhead.tsv"
: >"$out/iterations.tsv"
: >"$out/overhead.log"
nsys=${OVERHEAD_NSYS:-}
if [ -z "$nsys" ]; then
  nsys=$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | tail -1 || true)
fi
[ "$nsys" = none ] && nsys=""
if [ -n "$nsys" ] && [ -x "$nsys" ]; then echo "nsys: $nsys"; else echo "nsys: not found, its configuration is not run"; nsys=""; fi
case $set_ in
  all) sets="lb tiny b32 b256" ;; launch) sets="lb tiny" ;; resnet) sets="b32" ;; b256) sets="b256" ;;
  honest) sets="lb b32 b256" ;; *) echo "overhead.sh: unknown SET $set_"; exit 2 ;;
esac
want() { case " $sets " in *" $1 "*) return 0 ;; esac; return 1; }
failed=""
n=0
start_s=$(date +%s)

# run WORKLOAD CONFIG CMD...: one process; each figure it prints ("us/launch", "ms/iter") becomes a
# row, each "iteration ms:" line a row of iterations.tsv. nsys's own failure is not the program's:
# its figures count, and a missing figure is noted without failing the run.
run() {
  local workload=$1 config=$2 s e wall log rc=0 k=0
  shift 2
  if [ $(($(date +%s) - start_s)) -ge "$budget" ]; then
    printf '%s\t%s\t-\t-\tskipped\t-\n' "$workload" "$config" >>"$out/overhead.tsv"
    echo "$workload/$config: not run, the budget of $budget s is spent"
    return
  fi
  n=$((n + 1))
  log=$out/run_$n.log
  s=$(date +%s%N)
  timeout "$run_timeout" "$@" >"$log" 2>&1 || rc=$?
  e=$(date +%s%N)
  wall=$(printf '%d.%03d' $(((e - s) / 1000000000)) $(((e - s) / 1000000 % 1000)))
  { echo "### $workload/$config run $n: $* (exit $rc, $wall s)"; cat "$log"; } >>"$out/overhead.log"
  sed -n -e 's/.*, \([0-9.]*\) us\/launch.*/\1 us\/launch/p' -e 's/.*, \([0-9.]*\) ms\/iter.*/\1 ms\/iter/p' "$log" |
    while read -r v unit; do printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$workload" "$config" "$n" "$v" "$unit" "$wall"; done \
      >>"$out/overhead.tsv"
  while IFS= read -r line; do
    k=$((k + 1))
    printf '%s\t%s\t%s\t%s\t%s\n' "$workload" "$config" "$n" "$k" "$(echo "${line#*iteration ms: }" | tr ' ' '\t')" \
      >>"$out/iterations.tsv"
  done < <(grep 'iteration ms: ' "$log")
  if ! grep -qE 'us/launch|ms/iter' "$log"; then
    printf '%s\t%s\t%s\t-\tfailed\t%s\n' "$workload" "$config" "$n" "$wall" >>"$out/overhead.tsv"
    [ "$config" = nsys ] || failed="$failed [$workload/$config run $n, exit $rc]"
    echo "$workload/$config run $n: no figure (exit $rc): $(tail -2 "$log" | tr '\n' ' ')"
  else
    echo "$workload/$config run $n: $(grep -hoE '[0-9.]+ (us/launch|ms/iter)' "$log" | tr '\n' ' ')(exit $rc, $wall s)"
  fi
  rm -f "$log"
}
nsys_run() {  # nsys_run WORKLOAD CMD...
  local w=$1
  shift
  [ -n "$nsys" ] || return 0
  run "$w" nsys "$nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
    -o "$out/nsys_$w" "$@"
  rm -f "$out"/nsys_"$w".*
}

if want lb; then
  for r in $(seq "$reps"); do  # interleaved, so drift hits each configuration alike
    run launch_bound none "$lb"
    run launch_bound tracegate "$tg" record -o "$out/lb.db" -- "$lb"
    nsys_run launch_bound "$lb"
    run launch_bound "none again" "$lb"
  done
  rm -f "$out/lb.db"  # 200,000 kernels: the figures are the result
fi
if want tiny; then
  tiny="$py $infer --tiny 20000 --rounds $reps"
  run torch_tiny none $tiny
  run torch_tiny tracegate "$tg" record -o "$out/tiny.db" -- $tiny
  run torch_tiny torch.profiler $tiny --torch-profiler "$out/tiny.torch.json"
  nsys_run torch_tiny $tiny
  run torch_tiny "none again" $tiny
  rm -f "$out/tiny.db" "$out/tiny.torch.json"
fi
if want b32; then
  b32="$py $infer --batch 32 ${OVERHEAD_B32_ITERS:---warmup 20 --iters 60 --rounds 5} --iter-times"
  run resnet50_b32 none $b32
  run resnet50_b32 tracegate "$tg" record -o "$out/resnet_b32.db" -- $b32
  run resnet50_b32 torch.profiler $b32 --torch-profiler "$out/resnet_b32.torch.json"
  nsys_run resnet50_b32 $b32
  run resnet50_b32 "none again" $b32
fi
if want b256; then
  b256="$py $infer --batch 256 --warmup 5 --iters 20 --rounds 3 --iter-times"
  run resnet50_b256 none $b256
  run resnet50_b256 tracegate "$tg" record -o "$out/resnet_b256.db" -- $b256
  run resnet50_b256 torch.profiler $b256 --torch-profiler "$out/resnet_b256.torch.json"
  nsys_run resnet50_b256 $b256
  run resnet50_b256 "none again" $b256
  rm -f "$out/resnet_b256.db" "$out/resnet_b256.torch.json"
fi
floor=()
[ -n "${OVERHEAD_FLOOR_JSON:-}" ] && floor=(--floor "$OVERHEAD_FLOOR_JSON")
python3 "$here/overhead_summary.py" "$out" "${floor[@]}" | tee "$out/overhead_summary.txt"
rc=$?
if [ -n "$failed" ]; then echo "FAIL: runs that failed (see overhead.log):$failed"; exit 1; fi
exit $rc
