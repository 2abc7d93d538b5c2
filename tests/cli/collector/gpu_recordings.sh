#!/usr/bin/env bash
# The ResNet-50 recordings of the first GPU run (tests/fixtures/gpu/resnet50_*_b32.db.gz) against a
# recomputation in plain Python / SQL (gpu_recordings.py): warm-up detection, the kept iterations'
# latencies, the warm-up line of every report, and what compare says torch.compile fused.
# Usage: gpu_recordings.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
for f in "$fixtures"/gpu/resnet50_eager_b32.db.gz "$fixtures"/gpu/resnet50_compile_b32.db.gz; do
  gunzip -c "$f" > "$dir/$(basename "$f" .gz)"
done
if python3 "$here/gpu_recordings.py" "$tg" "$dir"; then ok; else fail "the GPU recordings differ from the recomputation"; fi
# compare and gate take --skip for a trace: --skip 0 keeps the compilation in the mean again.
out=$("$tg" compare "$dir/resnet50_eager_b32.db" "$dir/resnet50_compile_b32.db" --skip 0 2>&1)
if grep -q '^REGRESSION: avg_latency_ms 20.672 -> 556.105 ms' <<<"$out" && ! grep -q 'warm-up' <<<"$out"; then ok
else fail "compare --skip 0: $(head -1 <<<"$out")"; fi
out=$("$tg" compare "$dir/resnet50_eager_b32.db" "$dir/resnet50_compile_b32.db" --skip x 2>&1)
if [ $? = 2 ] && grep -q "skip 'x': expected auto or a number" <<<"$out"; then ok; else fail "compare --skip x: $out"; fi
# predict (Amdahl's law) measures P on the kept iterations and says what was dropped.
out=$("$tg" predict "$dir/resnet50_eager_b32.db" --kernels bn_fw_inf --speedup 2 --method amdahl 2>&1)
if grep -q ' of [0-9.]* ms in 29 iteration(s) -> P = ' <<<"$out" \
  && grep -q '^  (the first 1 of 30 iterations dropped as warm-up by --skip auto; --skip 0 keeps them)$' <<<"$out"; then ok
else fail "predict: $out"; fi
finish gpu_recordings
