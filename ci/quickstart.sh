#!/usr/bin/env bash
# The main job on a fresh machine: build tracegate, then analyze shipped GPU recordings, write
# the JSON / Markdown / HTML reports and gate them against their stored baselines in baselines/:
# the ResNet-50 recordings of the first GPU run (tests/fixtures/gpu/, eager and torch.compile,
# compared), and a PyTorch profiler trace of an A100 (tests/fixtures/real/).
# On a machine with an NVIDIA GPU (nvidia-smi works) and the CUDA toolkit it first records
# tests/gpu/known_workload and the mini model (kernels/, unfused and with res3 fused) with
# `tracegate record`, analyzes them, predicts the fusion's gain from the unfused recording and
# gates the fused run against the unfused one.
# Usage: ci/quickstart.sh [build-dir]
# TRACEGATE_OUT=DIR: where the reports go (default build-dir/quickstart). TRACEGATE_BINARY=PATH:
# use this tracegate and build nothing (the GPU recordings, which need the build's CUDA targets,
# are then skipped); the test cli.quickstart runs it so.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/deps.sh
tracegate_install_deps

build=${1:-build}
if [ -z "${TRACEGATE_BINARY:-}" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "${TRACEGATE_JOBS:-2}" --target tracegate
fi
tg=${TRACEGATE_BINARY:-$build/tracegate}

out=${TRACEGATE_OUT:-$build/quickstart}
mkdir -p "$out"
if [ -z "${TRACEGATE_BINARY:-}" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  cmake --build "$build" -j "${TRACEGATE_JOBS:-2}" --target tracegate_inject known_workload tracegate-model
  echo "== tracegate record (GPU): tests/gpu/known_workload"
  "$tg" record -o "$out/known.db" -- "$build/tests/gpu/known_workload"
  "$tg" analyze "$out/known.db" --top 5 -o "$out/known.json" --md "$out/known.md"
  model="$build/tracegate-model --batch 32 --iterations 20 --warmup 3"
  echo "== tracegate record (GPU): the mini model, unfused and with res3 fused"
  "$tg" record -o "$out/model_unfused.db" -- $model
  "$tg" record -o "$out/model_res3_fused.db" -- $model --fuse res3
  "$tg" analyze "$out/model_unfused.db" --batch 32 -o "$out/model_unfused.json" --html "$out/model_unfused.html"
  "$tg" analyze "$out/model_res3_fused.db" --batch 32 -q -o "$out/model_res3_fused.json"
  echo "== tracegate predict: res3's share P measured on the unfused run, the seed's S = 1.146"
  "$tg" predict "$out/model_unfused.db" --launched-in '^res3( |$)' --speedup 1.146
  echo "== tracegate gate: res3 fused against unfused (must not be slower)"
  "$tg" gate "$out/model_res3_fused.json" --baseline "$out/model_unfused.json" --md "$out/model_gate.md"
elif [ -n "${TRACEGATE_BINARY:-}" ]; then
  echo "== TRACEGATE_BINARY=$tg: nothing built, no GPU recording; analyzing the shipped GPU recordings"
else
  echo "== no GPU here (nvidia-smi -L failed): analyzing the shipped GPU recordings instead"
fi
# ResNet-50 (torchvision, batch 32) recorded with `tracegate record` on an H200 (docs/gpu/2026-11-27-h200/),
# eager and torch.compile: 30 iterations each, the first one cuDNN's autotuning or the 16 s compile.
for run in eager compile; do
  gunzip -c "tests/fixtures/gpu/resnet50_${run}_b32.db.gz" > "$out/resnet50_${run}_b32.db"
done
echo "== tracegate analyze $out/resnet50_eager_b32.db (recorded on an H200; warm-up dropped by --skip auto)"
"$tg" analyze "$out/resnet50_eager_b32.db" --batch 32 --model resnet50_eager --precision fp32 \
  --commit 865cc60 --top 5 -o "$out/resnet50_eager_b32.json" --md "$out/resnet50_eager_b32.md" \
  --html "$out/resnet50_eager_b32.html"
"$tg" analyze "$out/resnet50_compile_b32.db" --batch 32 --model resnet50_compile --precision fp32 \
  --commit 865cc60 -q -o "$out/resnet50_compile_b32.json"
echo "== tracegate compare: eager against torch.compile (what compilation fused, and what it cost)"
"$tg" compare "$out/resnet50_eager_b32.json" "$out/resnet50_compile_b32.json" \
  --md "$out/resnet50_compare.md" --html "$out/resnet50_compare.html"
for run in eager compile; do
  echo "== tracegate gate: the $run recording against its stored baseline baselines/resnet50_${run}_b32_h200.json"
  "$tg" gate "$out/resnet50_${run}_b32.json" --baseline "resnet50_${run}_b32_h200" --dir baselines \
    --junit "$out/gate_resnet50_${run}.xml" --md "$out/gate_resnet50_${run}.md"
done
trace=tests/fixtures/real/kineto_alexnet_train_step.json.gz
echo "== tracegate analyze $trace"
"$tg" analyze "$trace" --top 5 -o "$out/report.json"
trace2=tests/fixtures/real/kineto_sampled_rank0.json.gz
echo "== tracegate analyze $trace2 (ProfilerStep iterations, findings)"
"$tg" analyze "$trace2" --top 5 -o "$out/report_rank0.json" --md "$out/report_rank0.md" \
  --html "$out/report_rank0.html"
echo "== tracegate gate: the same trace against the stored baseline baselines/hta_sampled_rank0.json"
"$tg" gate "$out/report_rank0.json" --baseline hta_sampled_rank0 --dir baselines \
  --junit "$out/gate.xml" --md "$out/gate.md"
echo "== tracegate predict: the seed's fused Conv+BN+Add+ReLU (141/123 TOPS) on 10% of the run"
"$tg" predict --fraction 0.1 --speedup 1.146
echo "== tracegate predict: the same speedup on the rank-0 trace's cutlass GEMMs, replayed (Amdahl beside it)"
"$tg" predict "$trace2" --kernels cutlass --speedup 1.146
echo "== tracegate convert / export"
"$tg" convert "$trace" -o "$out/alexnet.db"
"$tg" export "$out/alexnet.db" --chrome "$out/alexnet.chrome.json"
echo "quickstart: reports in $out (resnet50_eager_b32.json / .md / .html, report_rank0.json / .md / .html)," \
  "comparison $out/resnet50_compare.md / .html, gate summaries $out/gate*.md, Perfetto trace $out/alexnet.chrome.json"
