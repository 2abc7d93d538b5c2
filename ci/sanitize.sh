#!/usr/bin/env bash
# The sanitizer builds CI runs after ci/test.sh:
#  1. clang with AddressSanitizer + UndefinedBehaviorSanitizer (and libFuzzer coverage, so it
#     shares its build directory with ci/fuzz.sh): the whole non-GPU test suite, then the parsers
#     fuzzed for 30 s each (TRACEGATE_FUZZ_SECONDS) from the same build.
#  2. clang with ThreadSanitizer: the collector's writer, part merge, buffer pool and recorder
#     tests, the two-thread import and analysis, the findings' replays on two threads
#     (FindingReplay*), a job's ranks replayed together, a thread each (JobReplay*), the job's
#     worker pool (JobPool*), and the SQLite import's two cores with FinalizeTrace's
#     (NsysDirectReads*, NsysRealExport*), where threads share data.
# Any sanitizer report fails the run. Usage: ci/sanitize.sh (builds in build-asan, build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/deps.sh
tracegate_install_deps test
jobs=${TRACEGATE_JOBS:-2}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

echo "== ASan + UBSan: every non-GPU test but the Slurm cluster's (label slurm: ci/test.sh runs it)"
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DTRACEGATE_FUZZ=ON -DTRACEGATE_BUILD_TESTS=ON \
  -DTRACEGATE_SANITIZE=address,undefined -DTRACEGATE_WERROR=ON >/dev/null
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 600 -LE 'gpu|slurm' --no-tests=error

echo "== libFuzzer: the trace, SQLite and report parsers, ${TRACEGATE_FUZZ_SECONDS:-30} s each (ci/fuzz.sh)"
TRACEGATE_JOBS=$jobs bash ci/fuzz.sh "${TRACEGATE_FUZZ_SECONDS:-30}" build-asan

echo "== TSan: collector writer, merge, buffers, recorder; the two-thread import, analysis, findings' replays, a job's ranks replayed together and bootstrap; the job's worker pool"
CC=clang CXX=clang++ cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEGATE_BUILD_TESTS=ON \
  -DTRACEGATE_SANITIZE=thread -DTRACEGATE_WERROR=ON >/dev/null
targets=(tracegate tracegate_tests fake_recorder)
help=$(cmake --build build-tsan --target help)
if grep -q tracegate_cupti_tests <<<"$help"; then  # built with CUPTI
  targets+=(tracegate_cupti_tests)
fi
cmake --build build-tsan -j "$jobs" --target "${targets[@]}"
build-tsan/tracegate_tests --gtest_filter='PartWriter*:Parts*:NvmlSampler*:RecordOutput*:Store*:KinetoParallel*:AnalysisReport*:Rules*:RealFindings*:FindingReplay*:JobReplay*:BootstrapThreads*:JobPool*:IterationIdleSplit*:HelpBoard*:NsysDirectReads*:NsysRealExport*'
if [ -x build-tsan/tracegate_cupti_tests ]; then
  build-tsan/tracegate_cupti_tests --gtest_filter='CuptiBufferPool*:CuptiRecorder*:CuptiInjection*'
fi
echo "sanitize: ASan/UBSan suite and TSan tests (collector, parallel import, analysis) passed"
