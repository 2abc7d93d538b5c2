#!/usr/bin/env bash
# LLM serving steps (docs/SERVING.md): tests/cli/analyze/serving.py recomputes, in plain Python over the raw
# JSON, the shared vLLM traces' step and graph-replay share (skipped with a printed reason when
# ../shared/traces is absent) and checks a hand-made SGLang trace; every report it wrote must
# validate against the report schema.
# Usage: serving.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$shared" ] || echo "skip ../shared/traces: folder absent (the synthetic SGLang trace still runs)"
mkdir -p "$dir/reports"
if python3 "$here/serving.py" "$tg" "$shared" "$dir/reports"; then ok; else fail "serving steps disagree with the raw traces"; fi
if python3 -c 'import jsonschema' 2>/dev/null; then
  if out=$(python3 "$here/../validate_report.py" "$dir"/reports/*.json 2>&1); then ok; else fail "schema: $out"; fi
else
  echo "skip schema validation: python3 has no jsonschema module"
fi
finish serving
