#!/usr/bin/env bash
# Builds tracegate and runs every test that needs no GPU. Works on a fresh Debian machine:
# missing packages are installed with apt-get. Usage: ci/test.sh [build-dir]
# The Python module is built for Debian's /usr/bin/python3, where the Debian packages it is tested
# with live (a python3 earlier on PATH may be another interpreter without them); its pytest suite
# (tests/python) is the CTest test python.pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/deps.sh
tracegate_install_deps test
# The lines changed since TRACEGATE_FORMAT_BASE (default HEAD~1) are formatted (.clang-format).
bash ci/format_check.sh

build=${1:-build}
jobs=${TRACEGATE_JOBS:-2}
python=()
if [ -x /usr/bin/python3 ]; then python=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
# Line tables only (-g1): backtraces keep file:line and CI's cold build is a quarter faster than with
# full debug info (gcc: replay.cpp 15.5 s with -g, 11.2 s with -g1). A developer's own build keeps -g.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DTRACEGATE_WERROR=ON "${python[@]}"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 300 -LE gpu
# The parsers' fuzzing (ci/fuzz.sh) runs in ci/sanitize.sh, in the ASan + UBSan build it shares: built
# here it was a second build of the analyzer and the reports (7 of this script's 22 minutes on 2 cores).
