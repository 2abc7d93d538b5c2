#!/usr/bin/env bash
# Byte-identity of two builds' outputs, for changes that must not change a number (speed and
# memory work): tests/bench/compare_outputs.sh OLD_TRACEGATE NEW_TRACEGATE [traces-dir]
# Runs both binaries on every trace of ../shared/traces (or traces-dir), tests/fixtures/real,
# tests/fixtures/gpu (its recordings unzipped), tests/fixtures/nsys (the export built from its SQL),
# each shared trace converted to a tracegate store (by OLD, so both read the same file), and the
# generated shapes when present ($TRACEGATE_BENCH_DIR/gen2/shapes1):
#   analyze -o (JSON), --format md, export (Chrome JSON), analyze --critical-path, and predict under
#   eight changes (--json and its text), each with its exit status;
# then diffs the two output trees and exits 1 when anything differs. --commit x keeps git out.
set -uo pipefail
if (($# < 2)); then
  echo "usage: $0 OLD_TRACEGATE NEW_TRACEGATE [traces-dir]" >&2
  exit 2
fi
old=$1 new=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
traces_dir=${3:-$here/../shared/traces}
shapes=${TRACEGATE_BENCH_DIR:-/tmp/tracegate-bench}/gen2/shapes1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# SQLite inputs: recordings, an export, and stores of the shared JSON traces.
prep=$out/inputs
mkdir -p "$prep"
for z in "$here"/tests/fixtures/gpu/*.db.gz; do
  [[ -f $z ]] && gunzip -c "$z" > "$prep/$(basename "$z" .gz)"
done
for q in "$here"/tests/fixtures/nsys/*.sql; do
  [[ -f $q ]] && sqlite3 "$prep/$(basename "$q" .sql).sqlite" < "$q"
done
for t in "$traces_dir"/*.json.gz; do
  [[ -f $t ]] && "$old" convert "$t" -o "$prep/$(basename "$t" .json.gz).store.db" > /dev/null 2>&1
done

changes=("--kernels . --speedup 1.5" "--class gemm --speedup 1.3" "--launch-us 2" "--graph" "--finding all"
         "--remove-syncs Synchronize" "--host . --speedup 2" "--kernels . --speedup 1.2 --launch-us 1 --graph")

run() {  # run BIN DIR
  local bin=$1 dir=$2 t b k
  mkdir -p "$dir"
  for t in "$traces_dir"/*.json.gz "$traces_dir"/*.sqlite "$here"/tests/fixtures/real/*.json.gz "$prep"/*.db "$prep"/*.sqlite; do
    [[ -f $t ]] || continue
    b=$(basename "$t")
    { "$bin" analyze "$t" -q -o "$dir/$b.a.json" --commit x; echo "rc=$?"; } > "$dir/$b.a.txt" 2>&1
    "$bin" analyze "$t" --format md --commit x > "$dir/$b.md" 2>&1
    { "$bin" export "$t" -o "$dir/$b.chrome.json"; echo "rc=$?"; } > "$dir/$b.export.txt" 2>&1
    { "$bin" analyze "$t" --critical-path -q -o "$dir/$b.cp.json" --commit x; echo "rc=$?"; } > "$dir/$b.cp.txt" 2>&1
    k=0
    for c in "${changes[@]}"; do
      k=$((k + 1))
      # shellcheck disable=SC2086
      { "$bin" predict "$t" $c --json "$dir/$b.p$k.json"; echo "rc=$?"; } > "$dir/$b.p$k.txt" 2>&1
    done
  done
  for t in "$shapes"/*.json "$shapes"/*.sqlite; do
    [[ -f $t ]] || continue
    b=$(basename "$t")
    { "$bin" analyze "$t" -q -o "$dir/$b.a.json" --commit x; echo "rc=$?"; } > "$dir/$b.a.txt" 2>&1
    { "$bin" analyze "$t" --critical-path -q -o "$dir/$b.cp.json" --commit x; echo "rc=$?"; } > "$dir/$b.cp.txt" 2>&1
    { "$bin" predict "$t" --finding all --json "$dir/$b.pf.json"; echo "rc=$?"; } > "$dir/$b.pf.txt" 2>&1
  done
}

run "$old" "$out/old"
run "$new" "$out/new"
files=$(find "$out/old" -type f | wc -l)
echo "compare_outputs: $(find "$prep" -type f | wc -l) SQLite inputs prepared"
if diff -rq "$out/old" "$out/new"; then
  echo "compare_outputs: $files files, all identical"
else
  echo "compare_outputs: $files files, the ones above differ"
  exit 1
fi
