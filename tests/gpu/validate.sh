#!/usr/bin/env bash
# Every GPU check of the project in two device calls, within a session's 15 minutes of device time
# (machine start included); see docs/gpu/README.md for the procedure.
#   validate.sh BUNDLE OUT [PARTS]   PARTS: "1" (call 1), "2 3" (call 2); default all three
#   1 (<= 320 s): environment, the injection preflight, record_known.sh (also under
#      CUDA_VISIBLE_DEVICES), torch.profiler inside a recorded process (what is true: tracegate's
#      recording complete with NVTX through the injection, torch.profiler's trace without kernels,
#      record's summary saying so), kernel-check (with cuDNN and cuBLASLt logs), kernel-bench, the
#      Conv+BN+Add+ReLU TOPS table, the launch-bound overhead (in-process figures)
#   2 (<= 80 s): Amdahl prediction vs the measured --fuse res3 gain, the pattern knobs
#   3 (<= 270 s): the ResNet-50 eager batch 32 overhead (in-process figures); ResNet-50 batch 1 and
#      32, eager and torch.compile, recorded by `tracegate record` and by torch.profiler in two
#      separate runs and compared per iteration (compare_profilers.py); `tracegate compare eager
#      compile`
# Writes OUT/summary.md (check, goal, measured, pass/fail; appended per part) and the raw outputs
# as OUT/raw_part<N>.tar.gz, recordings and traces gzip'd inside, under 15 MiB (the device tool
# brings back at most 8 files of 16 MiB from $OUT; when over, the largest recordings are left out
# first and summary.md says which). Fail soft: each check runs under its own timeout inside the
# part's budget, its exit code is recorded, and the next one runs. Exit 0 when every check passed.
#
# TRACEGATE_VALIDATE_DRY_RUN=1 (tests/cli/collector/gpu_validate_dry_run.sh, no GPU): BUNDLE may be a build
# directory; tests/tools' fakes stand in (fake_known_workload for known_workload, fake_nvml for
# libnvidia-ml), every check is still attempted, and a missing GPU program fails its row only.
# TRACEGATE_VALIDATE_BUDGET_S: seconds per part (default 320, 80, 270); TRACEGATE_VALIDATE_REPEATS:
# runs per overhead median (default 3); TRACEGATE_VALIDATE_KEEP_RAW=1 keeps OUT/raw beside the
# archive; TRACEGATE_VALIDATE_ARCHIVE_KB: the archive's limit (default 15360).
set -u -o pipefail
if [ $# -lt 2 ]; then
  echo "usage: validate.sh BUNDLE OUT [PARTS: 1, 2 and/or 3, e.g. \"2 3\"]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bundle=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
parts=${3:-1 2 3}
dry=${TRACEGATE_VALIDATE_DRY_RUN:-0}
budget_of() {  # seconds for part $1
  local d
  case $1 in 1) d=320 ;; 2) d=80 ;; *) d=270 ;; esac
  echo "${TRACEGATE_VALIDATE_BUDGET_S:-$d}"
}
cd "$repo" || exit 2
# shellcheck disable=SC1091
[ -f "$bundle/env.sh" ] && . "$bundle/env.sh"
tg=$bundle/tracegate
known=$bundle/tests/gpu/known_workload
lb=$bundle/tests/gpu/launch_bound
py=tests/gpu/resnet50_infer.py
if [ "$dry" = 1 ]; then
  find_tool() { find "$bundle" -maxdepth 3 -name "$1" -type f 2>/dev/null | head -1; }
  known=$(find_tool fake_known_workload)
  nvml=$(find_tool libfake_nvml.so)
  mkdir -p "$out/.nvml" && ln -sf "$nvml" "$out/.nvml/libnvidia-ml.so.1"
  export LD_LIBRARY_PATH=$out/.nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export TRACEGATE_INJECT_LIB=${TRACEGATE_INJECT_LIB:-$(find_tool libtracegate_inject.so)}
  [ -n "$TRACEGATE_INJECT_LIB" ] || TRACEGATE_INJECT_LIB=$nvml  # a loadable library stands in
fi

failures=0
row() {  # row ID GOAL MEASURED RESULT
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$(printf '%s' "$3" | tr '\n|' '; ' | cut -c1-400)" "$4" >>"$out/summary.md"
}
# check ID "GOAL" TIMEOUT_S MEASURE_REGEX CMD...: runs CMD (log in raw/ID.log) under the smaller of
# TIMEOUT_S and what is left of the part's budget; MEASURED is the log's lines matching the regex.
check() {
  local id=$1 goal=$2 limit=$3 pattern=$4 rc left measured result
  shift 4
  left=$((budget - ($(date +%s) - part_start) - 10))
  [ "$limit" -gt "$left" ] && limit=$left
  if [ "$limit" -le 5 ]; then
    row "$id" "$goal" "not run: the part's ${budget} s were used up" "SKIPPED"
    failures=$((failures + 1))
    return
  fi
  echo "== $id (at most ${limit} s): $*"
  # Through bash, so CMD may be one of the functions below (exported with the variables they read).
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" >"$raw/$id.log" 2>&1
  rc=$?
  tail -n 15 "$raw/$id.log"
  measured=$(grep -E -- "$pattern" "$raw/$id.log" | tail -n 12)
  [ -n "$measured" ] || measured=$(grep -v '^[[:space:]]*$' "$raw/$id.log" | tail -n 2)
  case $rc in
    0) result=pass ;;
    124|137) result="FAIL (timeout after ${limit} s)"; failures=$((failures + 1)) ;;
    *) result="FAIL (exit $rc)"; failures=$((failures + 1)) ;;
  esac
  row "$id" "$goal" "$measured" "$result"
}

environment() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L && nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' 2>&1
  echo "TRACEGATE_INJECT_LIB=${TRACEGATE_INJECT_LIB:-}"
  readelf -d "${TRACEGATE_INJECT_LIB:-$bundle/libtracegate_inject.so}" 2>/dev/null | grep -E 'RUNPATH|RPATH|FLAGS_1'
  cat "$bundle/env.log" 2>/dev/null
  "$tg" --version
}

conv_tops() {  # the TOPS table from part 1's bench.json, beside the seed's A100 figures
  python3 - "$raw/rw/bench.json" <<'PY'
import json, sys
tops = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    p = b["name"].split("/")
    if p[0] == "conv_bn_add_relu" and not b.get("error_occurred"):
        tops[(p[2], p[3], p[4])] = b.get("conv_TOPS", 0)
ok = bool(tops)
for batch in ("batch32", "batch256", "batch1024", "batch2048"):
    for prec in ("fp16", "int8"):
        u, f = tops.get((batch, prec, "unfused")), tops.get((batch, prec, "fused"))
        if u is None or f is None:
            print(f"{batch} {prec}: missing"); ok = False; continue
        print(f"{batch} {prec}: unfused {u:.1f} -> fused {f:.1f} TOPS ({100 * (f / u - 1):+.1f}%; seed A100 123 -> 141, +14.6%)")
sys.exit(0 if ok else 1)
PY
}

amdahl_error() {  # |prediction error| <= 20% of the measured gain
  python3 - "$raw/rw/amdahl.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"measured speedup ([0-9.]+), predicted ([0-9.]+)", t)
measured, pred = float(m.group(1)), float(m.group(2))
gain = measured - 1
err = abs(pred - measured) / abs(gain) if gain else float("inf")
print(f"measured gain {100 * gain:+.2f}%, predicted {100 * (pred - 1):+.2f}%: error {100 * err:.1f}% of the gain (goal <= 20%)")
sys.exit(0 if err <= 0.20 else 1)
PY
}

# torch.profiler inside a recorded process. CUPTI serves one subscriber, and tracegate's came first,
# so what is true is asserted: tracegate's recording complete (every NVTX iteration with its
# kernel), torch.profiler's trace without kernels, and record's summary line for the process.
coexist() {
  local rc=0
  "$tg" record -o "$raw/coexist.db" -- python3 $py --tiny 2000 --torch-profiler "$raw/coexist.torch.json" \
    >"$raw/coexist.record.txt" 2>&1 || rc=1
  cat "$raw/coexist.record.txt"
  python3 tests/gpu/compare_profilers.py --same-process --iterations 2000 "$raw/coexist.db" "$raw/coexist.torch.json" ||
    rc=1
  local line
  line=$(grep -E "^  profiler:  pid [0-9]+: PyTorch's profiler " "$raw/coexist.record.txt")
  if [ -z "$line" ]; then
    echo "FAIL: record's summary has no profiler line for PyTorch's profiler"
    rc=1
  elif echo "$line" | grep -q "tried to start and CUPTI refused it"; then
    echo "summary: says CUPTI refused torch.profiler (the refusal was seen)"
  else
    echo "summary: says torch.profiler is loaded and got no CUDA activity if it profiled (the refusal was not seen)"
  fi
  return $rc
}

resnet() {  # resnet MODE BATCH: recorded by tracegate and by torch.profiler in two separate runs
  local mode=$1 batch=$2 flags="" name=rn_${1}_b$2
  [ "$mode" = compile ] && flags=--compile
  if [ "$mode $batch" = "eager 32" ] && [ -s "$raw/overhead/resnet_b32.db" ] && [ -s "$raw/overhead/resnet_b32.torch.json" ]; then
    mv "$raw/overhead/resnet_b32.db" "$raw/$name.db"  # overhead_resnet's runs of this script
    mv "$raw/overhead/resnet_b32.torch.json" "$raw/$name.torch.json"
    echo "the overhead check's runs: tracegate 3 rounds of 50 iterations, torch.profiler its last round"
  else
    "$tg" record -o "$raw/$name.db" -- python3 $py --batch "$batch" $flags --iters 20 || return 1
    python3 $py --batch "$batch" $flags --iters 5 --torch-profiler "$raw/$name.torch.json" || return 1
  fi
  python3 tests/gpu/compare_profilers.py "$raw/$name.db" "$raw/$name.torch.json"
}

compare_modes() {  # tracegate compare eager compile, per batch
  local rc=0
  for b in 1 32; do
    "$tg" compare "$raw/rn_eager_b$b.db" "$raw/rn_compile_b$b.db" --md "$raw/compare_b$b.md" || rc=1
    echo "batch $b: $(grep -m1 -iE 'latency|speedup' "$raw/compare_b$b.md" 2>/dev/null)"
  done
  return $rc
}

pack() {  # the part's raw outputs as one archive under 15 MiB, each recording and trace gzip'd
  local arc=$out/raw_part$1.tar.gz dropped="" big max=$((${TRACEGATE_VALIDATE_ARCHIVE_KB:-15360} << 10))
  find "$out/raw" -type f \( -name '*.db' -o -name '*.json' \) -exec gzip -f {} + 2>/dev/null
  for _ in $(seq 100); do
    tar -C "$out" -czf "$arc" raw 2>/dev/null
    [ "$(stat -c %s "$arc" 2>/dev/null || echo 0)" -le "$max" ] && break
    big=$(find "$out/raw" -type f -name '*.gz' -printf '%s %p\n' | sort -rn | head -1 | cut -d' ' -f2-)
    [ -n "$big" ] || break
    dropped="$dropped ${big#"$out"/raw/} ($(( $(stat -c %s "$big") >> 10 )) KiB)"
    rm -f "$big"
  done
  [ -z "$dropped" ] || echo "raw_part$1.tar.gz: left out to stay under $((max >> 10)) KiB, largest first:$dropped" >>"$out/summary.md"
  [ "${TRACEGATE_VALIDATE_KEEP_RAW:-0}" = 1 ] || rm -rf "$out/raw"
}

export -f environment conv_tops amdahl_error coexist resnet compare_modes
export tg py bundle dry
reps=${TRACEGATE_VALIDATE_REPEATS:-3}
[ -f "$out/summary.md" ] || printf '| check | goal | measured | result |\n| --- | --- | --- | --- |\n' >"$out/summary.md"
total_failures=0
for part in $parts; do
  part_start=$(date +%s)
  budget=$(budget_of "$part")
  failures=0
  raw=$out/raw/part$part
  mkdir -p "$raw"
  export raw
  echo "| **part $part** | $(date -u +%FT%TZ)$([ "$dry" = 1 ] && echo ', dry run with CPU fakes') | | |" >>"$out/summary.md"
  case $part in
    1)
      check environment "GPU, driver, torch, the injection library's RUNPATH" 60 'NVIDIA|torch|RUNPATH|libcupti' environment
      check preflight "record loads the injection library (no dlerror)" 60 'error|wrote' "$tg" record -o "$raw/true.db" -- /bin/true
      check record_known "exact counts, durations within 3% + 5 us, syncs, NVTX, graph ids, memory peak, devices, samples on one clock" \
        120 '^FAIL|passed|differ|samples|UUID' bash tests/gpu/record_known.sh "$tg" "$known" "$raw/record_known"
      gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
      check record_known_visible "the same under CUDA_VISIBLE_DEVICES=$((gpus > 1 ? gpus - 1 : 0)): NVML samples on the CUDA device" \
        120 '^FAIL|passed|samples|UUID' env CUDA_VISIBLE_DEVICES=$((gpus > 1 ? gpus - 1 : 0)) \
        bash tests/gpu/record_known.sh "$tg" "$known" "$raw/record_known_visible"
      check coexist "torch.profiler inside a recorded process: tracegate's recording complete (NVTX through the injection), torch.profiler's trace without kernels (CUPTI: one subscriber), record's summary says so" \
        90 'tracegate:|torch.profiler:|summary:|FAIL|passed' coexist
      check kernel_check "every fused kernel = unfused = CPU reference (fp32, fp16, int8)" 150 'FAIL|ERROR|pairs checked' \
        env CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG="$raw/cudnn_check.log" CUBLASLT_LOG_LEVEL=3 \
        CUBLASLT_LOG_FILE="$raw/cublaslt_check.log" bash tests/gpu/reference_workloads.sh "$bundle" "$raw/rw" 32 1
      check kernel_bench "fused element-wise >= 85% of the D2D copy bandwidth (means)" 150 'GB/s|SKIPPED|^FAIL' \
        env CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG="$raw/cudnn_bench.log" \
        bash tests/gpu/reference_workloads.sh "$bundle" "$raw/rw" 32 2
      check conv_tops "Conv+BN+Add+ReLU TOPS at batch 32/256/1024/2048, fused vs unfused (seed A100 123 -> 141)" 30 'batch' conv_tops
      check overhead_launch "launch-bound, in-process medians: tracegate below torch.profiler on the PyTorch loop; launch_bound us/launch untraced twice (the A/A spread) and under tracegate (reported; the full protocol is tests/gpu/floor_step.sh)" \
        110 'median|below|spread|FAIL' env OVERHEAD_NSYS=none bash tests/gpu/overhead.sh "$tg" "$lb" "$raw/overhead" "$reps" launch
      ;;
    2)
      check amdahl_run "record unfused and --fuse res3, predict from P and S" 50 'speedup|FAIL' \
        bash tests/gpu/reference_workloads.sh "$bundle" "$raw/rw" 32 3
      check amdahl "prediction error <= 20% of the measured --fuse res3 gain" 15 'error' amdahl_error
      check knobs "each knob's finding exactly when the knob is on" 50 'reported|FAIL' \
        bash tests/gpu/reference_workloads.sh "$bundle" "$raw/rw" 32 4
      ;;
    3)
      check overhead_resnet "ResNet-50 eager batch 32, in-process medians: tracegate below torch.profiler; the < 2% goal is for a GPU-bound iteration, this one is host-bound on the lent VM (4.9 ms of GPU work per ~5.4 ms, ~1180 API calls): reported" \
        100 'median|below|goal|FAIL' env OVERHEAD_NSYS=none OVERHEAD_B32_ITERS="--warmup 10 --iters 50 --rounds $reps" \
        bash tests/gpu/overhead.sh "$tg" "$lb" "$raw/overhead" "$reps" resnet
      for mode in eager compile; do
        for b in 1 32; do
          check "resnet_${mode}_b$b" "ResNet-50 $mode batch $b, separate runs: same kernels per iteration (per name), kernel time per iteration within 1%" \
            $([ $mode = compile ] && echo 100 || echo 45) 'iterations|identical|kernel time|FAIL|passed' resnet $mode $b
        done
      done
      check compare_eager_compile "tracegate compare eager compile (batch 1 and 32)" 30 'batch' compare_modes
      ;;
    *) echo "validate.sh: PART must be 1, 2 or 3, not '$part'" >&2; exit 2 ;;
  esac
  echo "| part $part | | $failures check(s) failed, $(($(date +%s) - part_start)) s | $([ $failures = 0 ] && echo pass || echo FAIL) |" >>"$out/summary.md"
  total_failures=$((total_failures + failures))
  pack "$part"
done
echo
cat "$out/summary.md"
[ "$total_failures" -eq 0 ]
