#!/usr/bin/env bash
# Each kernel's launching op (kernel_table / top_kernels `op`) against the raw traces
# (tests/cli/analyze/kernel_ops.py): every real trace of tests/fixtures/real and ../shared/traces with
# cpu_op events (the folder skipped with a reason when absent).
# Usage: kernel_ops.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
traces=("$fixtures"/real/*.json.gz)
if [ -d "$shared" ]; then
  traces+=("$shared"/*.json.gz)
else
  echo "skip ../shared/traces: folder absent"
fi
if python3 "$here/kernel_ops.py" "$tg" "${traces[@]}"; then ok; else fail "kernel ops differ from the raw traces"; fi
finish kernel_ops
