#!/usr/bin/env bash
# The kernels/ programs without a GPU (CI has nvcc but no GPU): --help, bad flags (exit 2, one
# line naming the flag, before any CUDA call), the benchmark list, and a clear exit 1 when no
# device is usable. Skipped where the CUDA toolkit (and so kernels/'s GPU side) is absent.
# Usage: kernels_tools.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
bin=$(dirname "$tg")
model=$bin/tracegate-model bench=$bin/tracegate-kernel-bench check=$bin/tracegate-kernel-check
if [ ! -x "$model" ] || [ ! -x "$bench" ] || [ ! -x "$check" ]; then
  echo "kernels_tools.sh: skipped: kernels/'s GPU programs are not built here (no nvcc, cuBLASLt or cuDNN)"
  finish kernels_tools
  exit
fi

expect() {  # expect RC PATTERN CMD...: exit RC and PATTERN in stdout+stderr
  local want=$1 pattern=$2 rc; shift 2
  "$@" >"$dir/out" 2>&1; rc=$?
  if [ "$rc" = "$want" ] && grep -qE -- "$pattern" "$dir/out"; then ok;
  else fail "$* -> rc $rc (want $want), output: $(head -c 600 "$dir/out")"; fi
}
one_line() {  # one_line CMD...: exit 2 with exactly one line on stderr
  "$@" >/dev/null 2>"$dir/err"; local rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ]; then ok; else fail "$* -> rc $rc, stderr: $(cat "$dir/err")"; fi
}

expect 0 'pattern knobs|--host-gap-us' "$model" --help
expect 0 '--fuse' "$model" --help
expect 2 "^tracegate-model: --fuse: unknown stage 'res7' \(stages: res2, res3, res4, res5, all, none\)" "$model" --fuse res7
expect 2 '^tracegate-model: --streams must be between 1 and 16 and divide --batch' "$model" --batch 30 --streams 4
expect 2 "^tracegate-model: --precision: unknown 'bf16' \(fp32, fp16, int8\)" "$model" --precision bf16
expect 2 '^tracegate-model: --split-h2d must be between 1 and 4096' "$model" --split-h2d 0
one_line "$model" --fuse res7
expect 0 'warm-up \+ 50 timed runs' "$bench" --help
expect 2 '^tracegate-kernel-bench: --device: expected a device index' "$bench" --device x
# 2 copy rows, 4 ops x 3 precisions (fp32, fp16, int8) x 2 versions = 24, 2 GEMM shapes x 3 x 2 =
# 12, 4 conv batches x 2 precisions (fp16, int8) x 2 = 16, 6 copy patterns: 60 benchmarks,
# listed without a GPU.
"$bench" --benchmark_list_tests >"$dir/list" 2>&1 && [ "$(wc -l <"$dir/list")" = 60 ] && ok ||
  fail "benchmark list: $(head -c 400 "$dir/list")"
grep -q '^conv_bn_add_relu/res3/batch2048/fp16/fused/iterations:50/manual_time$' "$dir/list" && ok ||
  fail "no res3 batch 2048 fused benchmark in the list"
for int8 in elementwise/scale_bias_relu/int8/unfused gemm_bias_relu/4096x4096x4096/int8/fused \
    conv_bn_add_relu/res3/batch32/int8/fused; do
  grep -q "^$int8/iterations:50/manual_time\$" "$dir/list" && ok || fail "no $int8 benchmark in the list"
done
expect 2 "^tracegate-kernel-check: --only 'xyz' matches no pair" "$check" --only xyz
expect 0 '--inputs' "$check" --help
# No usable device (no driver here): exit 1 and one line that says what to check.
if ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then
  expect 1 'CUDA device 0 is not usable: .*nvidia-smi tells' "$model" --iterations 1
  expect 1 'CUDA device 0 is not usable' "$model" --iterations 1 --precision int8
  expect 1 'CUDA device 0 is not usable' "$check" --only add_relu
  expect 1 'CUDA device 0 is not usable' "$check" --only int8
  expect 1 'CUDA device 0 is not usable' "$bench" --benchmark_filter=copy
fi
finish kernels_tools
