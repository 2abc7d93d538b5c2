#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and UndefinedBehaviorSanitizer, and
# runs each for SECONDS (default 30) from a seed corpus made of the test fixtures. A crash, a
# sanitizer report, a leak, a timeout (10 s per input) or memory over 2 GiB fails the run and
# leaves the input in BUILD/fuzz/artifacts. Usage: ci/fuzz.sh [SECONDS] [BUILD_DIR]
# (called by ci/sanitize.sh; long runs for docs/ROBUSTNESS.md: ci/fuzz.sh 1800)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=${2:-build-asan}
command -v clang++ >/dev/null || { echo "ci/fuzz.sh: clang++ is missing (apt-get install clang)"; exit 2; }
# A build directory ci/sanitize.sh configured keeps its tests; a new one builds the fuzz targets only.
tests=(-DTRACEGATE_BUILD_TESTS=OFF)
if [ -f "$build/CMakeCache.txt" ]; then tests=(); fi
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" "${tests[@]}" \
  -DTRACEGATE_FUZZ=ON -DTRACEGATE_SANITIZE=address,undefined -DTRACEGATE_WERROR=ON >/dev/null
cmake --build "$build" -j "${TRACEGATE_JOBS:-2}" --target fuzz_trace fuzz_sqlite fuzz_report

seeds=$build/fuzz/seeds
rm -rf "$seeds"; mkdir -p "$seeds"/{trace,sqlite,report} "$build/fuzz/artifacts"
cp tests/fixtures/kineto/*.json tests/fixtures/real/*.json.gz "$seeds/trace/"
# Inputs that once failed (tests/fixtures/fuzz/<target>/): every run replays them first.
for t in trace sqlite report; do
  if [ -d "tests/fixtures/fuzz/$t" ]; then cp tests/fixtures/fuzz/$t/* "$seeds/$t/"; fi
done
cp tests/fixtures/nsys/*.sql "$seeds/sqlite/"
cp tests/fixtures/summary/expected_report.json baselines/*.json "$seeds/report/"
# A store file as a trace seed, and its SQL as a SQLite seed, written by the fixture itself.
if command -v sqlite3 >/dev/null; then
  sqlite3 "$seeds/trace/nsys_small.sqlite" <tests/fixtures/nsys/small_export.sql
fi

status=0
for target in trace sqlite report; do
  corpus=$build/fuzz/corpus/$target
  mkdir -p "$corpus"
  echo "== fuzz_$target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
      -print_final_stats=1 -artifact_prefix="$build/fuzz/artifacts/${target}-" "$corpus" "$seeds/$target" \
      >"$build/fuzz/$target.log" 2>&1; then
    echo "FAIL: fuzz_$target found a problem; the input is in $build/fuzz/artifacts/:"
    grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$build/fuzz/$target.log" | head -20
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$build/fuzz/$target.log" | tail -3
done
exit $status
