#!/usr/bin/env bash
# tracegate predict: the seed's Amdahl numbers, several parts, P measured from a trace, and
# usage errors (exit 2, one line).
# Usage: predict.sh TRACEGATE FIXTURES_DIR
set -u
tg=$1
fixtures=$2
fails=0; passes=0
check() {  # check DESCRIPTION PATTERN CMD... : stdout must contain PATTERN and exit 0
  local what=$1 pattern=$2; shift 2
  local out rc
  out=$("$tg" "$@" 2>&1); rc=$?
  if [ $rc = 0 ] && grep -qF -- "$pattern" <<<"$out"; then passes=$((passes+1));
  else fails=$((fails+1)); echo "FAIL: $what: tracegate $* -> rc $rc:"; echo "$out"; fi
}
bad() {  # bad CMD... : exit 2 and one line on stderr
  local err rc
  err=$("$tg" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -le 2 ]; then passes=$((passes+1));
  else fails=$((fails+1)); echo "FAIL: tracegate $* -> rc $rc, stderr: $err"; fi
}

check "seed P=0.10" "overall speedup: 1.013" predict --fraction 0.1 --speedup 1.146
check "seed P=0.15" "overall speedup: 1.019" predict --fraction 0.15 --speedup 1.146
check "gain" "(+1.3%)" predict --fraction 0.1 --speedup 1.146
check "bound" "upper bound (every S -> infinity): 1.111" predict --fraction 0.1 --speedup 1.146
# 1 / (0.85 + 0.1/1.146 + 0.05/2) = 1.0388...
check "two parts" "overall speedup: 1.039" predict --part 0.1:1.146 --part 0.05:2
check "infinite part" "overall speedup: 2.000" predict --part 0.5:inf
check "measured kernels" "P = " predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels 'gemm' --speedup 1.5
check "measured range" "ranges take" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --range 'forward' --speedup 1.2
check "measured launched-in" "kernels take" predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --launched-in 'forward' --speedup 1.2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --range forward --launched-in forward --speedup 2
# The replay (issue 31): re-timed under the change, Amdahl beside it; its own changes need no P.
alexnet="$fixtures/real/kineto_alexnet_train_step.json.gz"
check "replay kernels" "replay: 1 iteration(s)" predict "$alexnet" --kernels gemm --speedup 1.5 --method replay
check "replay beside amdahl" "Amdahl's law for the same change" predict "$alexnet" --kernels gemm --speedup 1.5 --method replay
check "replay held fixed" "held fixed: host time between calls" predict "$alexnet" --kernels gemm --speedup 1.5 --method replay
check "replay launches" "launch calls take 2 us each" predict "$alexnet" --launch-us 2 --method replay
check "replay host" "of host time inside ranges matching" predict "$alexnet" --host 'forward' --speedup 2 --method replay
bad predict "$alexnet" --host forward --method replay
bad predict "$alexnet" --host forward --speedup 2
bad predict "$alexnet" --launch-us 2
bad predict --fraction 0.1 --speedup 2 --method replay
bad predict "$alexnet" --range forward --speedup 2 --method replay
bad predict "$alexnet" --method replay
bad predict "$alexnet" --kernels gemm --speedup 2 --method guess
bad predict "$alexnet" --remove-syncs 'no_such_sync' --method replay

bad predict
bad predict --fraction 0.1
bad predict --fraction 1.5 --speedup 2
bad predict --fraction 0.1 --speedup 0
bad predict --part 0.1
bad predict --part 0.7:2 --part 0.6:2
bad predict --kernels gemm --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels 'no_such_kernel_xyz' --speedup 2
bad predict "$fixtures/real/kineto_alexnet_train_step.json.gz" --kernels '(' --speedup 2
bad predict /nonexistent.json --kernels gemm --speedup 2

echo "$passes passed, $fails failed"
[ $fails = 0 ]
