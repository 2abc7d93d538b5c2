#!/usr/bin/env bash
# Issue 31's GPU pairs as one device call: before/after recordings of the mini model with a known
# change, the replay's prediction from the "before" recording, and the change measured between
# the two, in wall time per iteration. Cases (each pair recorded twice, before and after
# alternating, 30 iterations after 5 of warm-up):
#   gpu_slow   fp16 batch 256 (GPU-bound): before --slow res4=1.5, after plain; the change: res4's
#              block kernels 1.5x faster (--launched-in '^res4 blocks$' --speedup 1.5)
#   host_slow  fp16 batch 8 with --host-gap-us 400 (host-bound): the same pair and change; the
#              replay should predict ~0 where Amdahl promises the kernels' share
#   fuse_res3  fp16 batch 256: before unfused, after --fuse res3; the change: res3's block kernels
#              S times faster, S from the benchmark's fp16 res3 pair at batch 256
# The prediction: `tracegate predict BEFORE --launched-in R --speedup S --method replay --json`
# (predicted over base: the replay's ratio), Amdahl's from the same JSON. The measurement, read
# with plain SQL from the recordings (tests/gpu/predict_pairs.py, not tracegate's code): the mean
# duration of the NVTX ranges "iteration" of each run; measured speedup = mean(before runs) /
# mean(after runs). Goal (issue 31): |predicted gain - measured gain| <= 20% of the measured gain,
# gain = speedup - 1; where the measured gain is under 2% (host_slow) the error is judged
# against 1% of the step instead, and said so.
# Leaves in OUT: env.txt, pairs.txt (the run lines and the table), summary.txt, raw.tar.gz (the
# recordings gzip'd, the predictions' JSON, the model's output).
# Usage (repository root): bash tests/gpu/predict_pairs.sh BUNDLE OUT [CASES]
#   BUNDLE: ci/gpu_bundle.sh's .gpu (or a build directory); CASES: default "gpu_slow host_slow fuse_res3"
# Expected on an H100/H200 (not yet measured): ~2-3 minutes.
set -u -o pipefail
b=$1; out=$2; cases=${3:-gpu_slow host_slow fuse_res3}
here=$(cd "$(dirname "$0")" && pwd)
tg=$b/tracegate
raw=$out/raw
mkdir -p "$raw"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi: not found"
} >"$out/env.txt"

rc=0
rows=()
for c in $cases; do
  case $c in
    gpu_slow) common="--batch 256 --precision fp16"; before="--slow res4=1.5"; after=""; range='^res4 blocks$'; S=1.5 ;;
    host_slow) common="--batch 8 --precision fp16 --host-gap-us 400"; before="--slow res4=1.5"; after=""; range='^res4 blocks$'; S=1.5 ;;
    fuse_res3)
      common="--batch 256 --precision fp16"; before=""; after="--fuse res3"; range='^res3 blocks$'
      "$b/tracegate-kernel-bench" --benchmark_filter='conv_bn_add_relu/res3/batch256/fp16/' --benchmark_format=json \
        --benchmark_out="$raw/bench_res3.json" >"$raw/bench_res3.txt" 2>&1
      S=$(python3 -c '
import json, sys
m = {b["name"].split("/")[4]: b["mean_us"] for b in json.load(open(sys.argv[1]))["benchmarks"]
     if b["name"].startswith("conv_bn_add_relu/res3/batch256/fp16/") and not b.get("error_occurred")}
print(f"{m[\"unfused\"] / m[\"fused\"]:.4f}")' "$raw/bench_res3.json" 2>/dev/null)
      if [ -z "$S" ]; then echo "$c: no S from the benchmark (see raw/bench_res3.txt)"; rc=1; continue; fi ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  dbs_before=() dbs_after=()
  for k in 1 2; do
    for v in before after; do
      flags=$before; [ "$v" = after ] && flags=$after
      db=$raw/${c}_${v}_$k.db
      # shellcheck disable=SC2086
      if ! "$tg" record -o "$db" -- "$b/tracegate-model" $common $flags --iterations 30 --warmup 5 \
        >"$raw/${c}_${v}_$k.txt" 2>&1; then
        echo "$c: record $v $k failed (raw/${c}_${v}_$k.txt)"; rc=1; continue
      fi
      if [ "$v" = before ]; then dbs_before+=("$db"); else dbs_after+=("$db"); fi
    done
  done
  [ "${#dbs_before[@]}" -gt 0 ] && [ "${#dbs_after[@]}" -gt 0 ] || continue
  "$tg" predict "${dbs_before[0]}" --launched-in "$range" --speedup "$S" --method replay \
    --json "$raw/${c}_predict.json" >"$raw/${c}_predict.txt" 2>&1 || { echo "$c: predict failed"; rc=1; continue; }
  if python3 "$here/predict_pairs.py" --case "$c" --speedup "$S" --prediction "$raw/${c}_predict.json" \
    --before "${dbs_before[@]}" --after "${dbs_after[@]}" >>"$out/pairs.txt" 2>&1; then :; else rc=1; fi
done
for f in "$raw"/*.db; do [ -f "$f" ] && gzip -f "$f"; done
tar -czf "$out/raw.tar.gz" -C "$out" raw && rm -rf "$raw"
{ cat "$out/env.txt"; echo; cat "$out/pairs.txt" 2>/dev/null; echo "exit $rc"; } >"$out/summary.txt"
cat "$out/summary.txt"
exit "$rc"
