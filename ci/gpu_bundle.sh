#!/usr/bin/env bash
# Packs a build of tracegate for a GPU machine that has CUDA but none of our Debian packages (the
# `device` machine: nothing can be installed there). It copies, stripped:
#   - tracegate, libtracegate_inject.so, tracegate-kernel-bench, tracegate-kernel-check and
#     tracegate-model at the top, and known_workload and launch_bound under tests/gpu/, so the
#     folder stands in for a build directory (tests/gpu/*.sh take it as BUILD);
#   - lib/: the shared libraries those programs use that a CUDA image lacks (simdjson, SQLite,
#     zlib, Google Benchmark);
#   - env.sh: sets LD_LIBRARY_PATH to lib/ plus CUDA's own libraries on that machine (cudart,
#     CUPTI, cuBLASLt and cuDNN from /usr/local/cuda, else from python's nvidia-* wheels).
# Usage: ci/gpu_bundle.sh [BUILD_DIR=build] [OUT_DIR=.gpu]
#   then, on the GPU machine:  source .gpu/env.sh && bash tests/gpu/reference_workloads.sh .gpu OUT
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu}
if [ ! -x "$build/tracegate-model" ] || [ ! -f "$build/libtracegate_inject.so" ]; then
  echo "ci/gpu_bundle.sh: $build has no GPU build (tracegate-model, libtracegate_inject.so); build it first:" >&2
  echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build -j" >&2
  exit 2
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp/lib" "$out.tmp/tests/gpu"
for f in tracegate libtracegate_inject.so tracegate-kernel-bench tracegate-kernel-check tracegate-model; do
  strip -o "$out.tmp/$f" "$build/$f"
done
for f in known_workload launch_bound; do
  [ -x "$build/tests/gpu/$f" ] && strip -o "$out.tmp/tests/gpu/$f" "$build/tests/gpu/$f"
done
# Non-CUDA libraries outside glibc and the compiler runtime, as the loader resolves them here.
for f in "$out.tmp"/tracegate* "$out.tmp"/libtracegate_inject.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  case $name in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|libgcc_s.so*|libstdc++.so*) ;;
    libcuda*|libcupti*|libcublas*|libcudnn*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$out.tmp/lib/$name" ;;
  esac
done
cat >"$out.tmp/env.sh" <<'EOF'
# Source this on the GPU machine: the bundle's libraries, then CUDA's own: the toolkit's, then
# those of python's nvidia-* wheels (cuDNN, cuBLAS, CUPTI) for what the toolkit lacks.
_tg_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_tg_wheels=$(python3 -c 'import glob, nvidia; print(":".join(sorted(d for p in nvidia.__path__ for d in glob.glob(p + "/*/lib"))))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$_tg_bundle/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64${_tg_wheels:+:$_tg_wheels}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TRACEGATE_INJECT_LIB="$_tg_bundle/libtracegate_inject.so"
unset _tg_wheels
EOF
rm -rf "$out"
mv "$out.tmp" "$out"
du -sh "$out"
ls -l "$out" "$out/lib"
