#!/usr/bin/env bash
# Graphs traced back to their ops (analyze --capture, docs/SERVING.md): tests/cli/analyze/graph_capture.py
# recomputes, in plain Python over the raw JSON, which captured op and Python frame each replayed
# kernel of the shared vLLM pair takes (skipped with a printed reason when ../shared/traces is
# absent), and checks hand-made CUDA-like pairs and the errors; every report it wrote must
# validate against the report schema.
# Usage: graph_capture.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir/reports"
if python3 "$here/graph_capture.py" "$tg" "$shared" "$dir/reports"; then ok; else fail "captured ops disagree with the raw traces"; fi
if python3 -c 'import jsonschema' 2>/dev/null; then
  if out=$(python3 "$here/../validate_report.py" "$dir"/reports/*.json 2>&1); then ok; else fail "schema: $out"; fi
else
  echo "skip schema validation: python3 has no jsonschema module"
fi
finish graph_capture
