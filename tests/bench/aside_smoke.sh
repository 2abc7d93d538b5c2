#!/usr/bin/env bash
# CTest bench.aside_smoke: scale_trace.py and compare_tools.sh --shapes --file on a shipped trace,
# so that neither rots (its numbers mean nothing). Usage: aside_smoke.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
in=$here/../fixtures/real/kineto_sampled_rank0.json.gz
python3 "$here/scale_trace.py" "$in" "$out/x3.json" --copies 3
python3 "$here/scale_trace.py" "$in" "$out/again.json" --copies 3
cmp -s "$out/x3.json" "$out/again.json" || { echo "aside_smoke: scale_trace.py is not deterministic" >&2; exit 1; }
"$build/tracegate" analyze "$in" -q -o "$out/one.json" --commit x
"$build/tracegate" analyze "$out/x3.json" -q -o "$out/three.json" --commit x
python3 - "$in" "$out/x3.json" "$out/one.json" "$out/three.json" <<'PY'
import gzip, json, sys
src = json.load(gzip.open(sys.argv[1], "rt"))
big = json.load(open(sys.argv[2]))
assert len(big["traceEvents"]) == 3 * len(src["traceEvents"]), "3 copies of every event"
ids = [e["args"]["correlation"] for e in big["traceEvents"] if isinstance(e.get("args"), dict) and "correlation" in e["args"] and e.get("cat") == "kernel"]
assert len(ids) == len(set(ids)), "no correlation id shared between copies"
one, three = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
for k in ("kernels", "memcpys", "runtime_calls", "ranges"):
    assert three["counts"][k] == 3 * one["counts"][k], (k, one["counts"][k], three["counts"][k])
print("aside_smoke: 3 copies,", three["counts"]["kernels"], "kernels")
PY
bash "$here/compare_tools.sh" "$build" --shapes --runs 1 --file "$out/x3.json" --file "$in" > "$out/table"
grep -q '^| aside1 | x3.json |' "$out/table" && grep -q '^| aside2 | kineto_sampled_rank0.json.gz |' "$out/table" ||
  { echo "aside_smoke: the table misses a row:" >&2; cat "$out/table" >&2; exit 1; }
