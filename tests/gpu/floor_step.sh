#!/usr/bin/env bash
# Issue 32's GPU step 1 as one device call: tests/gpu/cupti_floor.py (every CUPTI configuration,
# 3 rounds, one process each, interleaved; it stops starting processes after FLOOR_BUDGET_S), then
# tests/gpu/overhead.sh's honest protocol (launch loop, ResNet-50 eager batch 32 and 256: none, none
# again, tracegate, torch.profiler, nsys where it runs; it stops after OVH_BUDGET_S), judged against
# the floor just measured. Leaves in OUT exactly what comes back from the device (5 files):
#   env.txt       the GPU, driver, torch and nsys seen
#   floor.txt     cupti_floor's table (us per call, min/median) and its verdict
#   overhead.txt  overhead.sh's run lines and summary (A/A spread, effects, per-iteration, goals)
#   summary.txt   the two summaries together
#   raw.tar.gz    cupti_floor.json/.log, overhead.tsv, iterations.tsv, overhead_summary.json,
#                 overhead.log, the ResNet-50 batch 32 recording gzip'd (left out when over 12 MB)
# Usage (repository root): bash tests/gpu/floor_step.sh BUNDLE OUT   (BUNDLE: ci/gpu_bundle.sh's .gpu)
# Expected on an H100/H200 (not yet measured): cupti_floor ~150 s at scale 0.5, overhead ~300 s.
set -u -o pipefail
b=$1; out=$2
mkdir -p "$out/raw/floor" "$out/raw/ovh"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi: not found"
  ${OVERHEAD_PYTHON:-python3} -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' 2>&1 | tail -1
  command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | tail -1 || echo "nsys: none"
} >"$out/env.txt"
python3 tests/gpu/cupti_floor.py "$b/tests/gpu/cupti_floor" "$b/tracegate" "$out/raw/floor" --rounds 3 \
  --scale "${FLOOR_SCALE:-0.5}" --budget-s "${FLOOR_BUDGET_S:-150}" >"$out/floor.txt" 2>&1
frc=$?
OVERHEAD_FLOOR_JSON=$out/raw/floor/cupti_floor.json OVERHEAD_BUDGET_S=${OVH_BUDGET_S:-300} \
  bash tests/gpu/overhead.sh "$b/tracegate" "$b/tests/gpu/launch_bound" "$out/raw/ovh" 3 honest >"$out/overhead.txt" 2>&1
orc=$?
rm -f "$out"/raw/ovh/*.torch.json
if [ -f "$out/raw/ovh/resnet_b32.db" ]; then
  gzip -f "$out/raw/ovh/resnet_b32.db"
  [ "$(stat -c %s "$out/raw/ovh/resnet_b32.db.gz")" -le $((12 << 20)) ] || rm -f "$out/raw/ovh/resnet_b32.db.gz"
fi
tar -czf "$out/raw.tar.gz" -C "$out" raw && rm -rf "$out/raw"
{
  echo "cupti_floor (exit $frc):"
  sed -n '/^us per call/,$p' "$out/floor.txt"
  echo
  echo "overhead.sh (exit $orc):"
  sed -n '/^launch_bound: untraced\|^resnet50_b32: untraced\|^resnet50_b256: untraced/,$p' "$out/overhead.txt"
} >"$out/summary.txt"
cat "$out/summary.txt"
[ "$frc" = 0 ] && [ "$orc" = 0 ]
