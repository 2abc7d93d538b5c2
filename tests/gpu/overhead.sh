#!/usr/bin/env bash
# Issue 5's overhead point, side by side in one run: wall time of a launch-bound loop
# (tests/gpu/launch_bound.cu, 200,000 tiny kernels, and the same in PyTorch: resnet50_infer.py
# --tiny) and of the ResNet-50 script (batch 32, GPU-bound) with no
# tracing, under `tracegate record`, and under torch.profiler (CUDA activities only).
# Goal: under 2% on the GPU-bound run, below torch.profiler on both.
# Usage: tests/gpu/overhead.sh build/tracegate build/tests/gpu/launch_bound OUT_DIR [REPEATS]
# (from the repository root; prints and writes OUT_DIR/overhead.tsv: label, wall seconds)
set -u
tg=$1; lb=$2; out=$3; reps=${4:-3}
mkdir -p "$out"
py=tests/gpu/resnet50_infer.py
t() {  # t LABEL CMD...: wall seconds of CMD, appended to the table
  local label=$1 s e; shift
  s=$(date +%s%N); "$@" >>"$out/overhead.log" 2>&1; e=$(date +%s%N)
  printf '%s\t%d.%03d\n' "$label" $(((e - s) / 1000000000)) $(((e - s) / 1000000 % 1000)) | tee -a "$out/overhead.tsv"
}
: >"$out/overhead.tsv"
for r in $(seq "$reps"); do
  t "launch_bound/none"        "$lb"
  t "launch_bound/tracegate"   "$tg" record -o "$out/lb_$r.db" -- "$lb"
  t "torch_tiny/none"          python3 $py --tiny 20000
  t "torch_tiny/tracegate"     "$tg" record -o "$out/tiny_$r.db" -- python3 $py --tiny 20000
  t "torch_tiny/torch.profiler" python3 $py --tiny 20000 --torch-profiler "$out/tiny_$r.torch.json"
  t "resnet50_b32/none"        python3 $py --batch 32
  t "resnet50_b32/tracegate"   "$tg" record -o "$out/rn_$r.db" -- python3 $py --batch 32
  t "resnet50_b32/torch.profiler" python3 $py --batch 32 --torch-profiler "$out/rn_$r.torch.json"
done
