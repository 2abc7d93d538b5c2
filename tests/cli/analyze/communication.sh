#!/usr/bin/env bash
# Communication figures against the raw traces (tests/cli/analyze/communication.py): a synthetic trace of
# its own, and the shared NCCL trace (its 21 collective kernels: 15 all-reduce, 6 broadcast),
# skipped with a reason when ../shared/traces is absent.
# Usage: communication.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
if python3 "$here/communication.py" "$tg" --synthetic 14; then ok; else fail "synthetic trace: communication figures"; fi
if [ -f "$shared/kineto_nccl_allreduce_rank0.json.gz" ]; then
  if python3 "$here/communication.py" "$tg" "$shared/kineto_nccl_allreduce_rank0.json.gz" 21; then ok
  else fail "shared NCCL trace: communication figures"; fi
else
  echo "skip ../shared/traces/kineto_nccl_allreduce_rank0.json.gz: absent"
fi
finish communication
