#!/usr/bin/env bash
# Packs a build of tracegate for a GPU machine that has CUDA but none of our Debian packages (the
# `device` machine: nothing can be installed there). The layout stands in for a build directory
# (tests/gpu/*.sh take it as BUILD):
#   bin/             the stripped programs: tracegate, tracegate-kernel-bench, -check, tracegate-model
#   tracegate, tracegate-kernel-bench, tracegate-kernel-check, tracegate-model
#                    wrappers that give each program its libraries for itself alone (see below)
#   libtracegate_inject.so   the collector; RUNPATH $ORIGIN/lib, then the CUDA toolkit's CUPTI
#   tests/gpu/known_workload, launch_bound   (static cudart: no wrapper needed)
#   tests/gpu/cupti_floor    wrapper of bin/cupti_floor (it links libcupti: TG_CUDA_LIBS, as the
#                            kernel programs' wrappers), run by tests/gpu/cupti_floor.py
#   lib/             the libraries those programs use that a CUDA image lacks (simdjson, SQLite,
#                    zlib, Google Benchmark); env.sh links the machine's libcupti in here
#   env.sh           source it on the GPU machine
#
# Why wrappers, not LD_LIBRARY_PATH: everything `tracegate record` runs inherits its environment,
# and a PyTorch process must load its own wheels' cudart, cuBLAS and nvJitLink and its own SQLite,
# not the toolkit's or Debian's. So env.sh exports no LD_LIBRARY_PATH: `tracegate` runs through
# the dynamic loader with --library-path lib/ (which its children do not inherit), and the kernel
# programs, which start no other program, set LD_LIBRARY_PATH for themselves only.
# Usage: ci/gpu_bundle.sh [BUILD_DIR=build] [OUT_DIR=.gpu]
#   then, on the GPU machine:  source .gpu/env.sh && bash tests/gpu/validate.sh .gpu $OUT 1
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu}
if [ ! -x "$build/tracegate-model" ] || [ ! -f "$build/libtracegate_inject.so" ]; then
  echo "ci/gpu_bundle.sh: $build has no GPU build (tracegate-model, libtracegate_inject.so); build it first:" >&2
  echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build -j2" >&2
  exit 2
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp/bin" "$out.tmp/lib" "$out.tmp/tests/gpu"
for f in tracegate tracegate-kernel-bench tracegate-kernel-check tracegate-model; do
  strip -o "$out.tmp/bin/$f" "$build/$f"
done
strip -o "$out.tmp/libtracegate_inject.so" "$build/libtracegate_inject.so"  # keeps its RUNPATH
for f in known_workload launch_bound; do
  if [ -x "$build/tests/gpu/$f" ]; then strip -o "$out.tmp/tests/gpu/$f" "$build/tests/gpu/$f"; fi
done
if [ -x "$build/tests/gpu/cupti_floor" ]; then
  strip -o "$out.tmp/bin/cupti_floor" "$build/tests/gpu/cupti_floor"
  cat >"$out.tmp/tests/gpu/cupti_floor" <<'EOF2'
#!/bin/sh
# cupti_floor starts no other program: libcupti (and what else lib/ holds) from LD_LIBRARY_PATH,
# set here for it alone (TG_CUDA_LIBS: env.sh). Under `tracegate record` the injected collector
# then finds the same libcupti.
b=$(cd "$(dirname "$0")/../.." && pwd)
LD_LIBRARY_PATH="$b/lib${TG_CUDA_LIBS:+:$TG_CUDA_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$b/bin/cupti_floor" "$@"
EOF2
  chmod +x "$out.tmp/tests/gpu/cupti_floor"
else
  echo "ci/gpu_bundle.sh: warning: $build/tests/gpu/cupti_floor is not built; the bundle has no cupti_floor" >&2
fi
# Non-CUDA libraries outside glibc and the compiler runtime, as the loader resolves them here.
for f in "$out.tmp"/bin/* "$out.tmp"/libtracegate_inject.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  case $name in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|libgcc_s.so*|libstdc++.so*) ;;
    libcuda*|libcupti*|libcublas*|libcudnn*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$out.tmp/lib/$name" ;;
  esac
done
cat >"$out.tmp/tracegate" <<'EOF2'
#!/bin/sh
# tracegate with the bundle's libraries for this process only: the loader's --library-path is not
# inherited by the commands `tracegate record` runs, as LD_LIBRARY_PATH would be.
b=$(cd "$(dirname "$0")" && pwd)
export TRACEGATE_INJECT_LIB="${TRACEGATE_INJECT_LIB:-$b/libtracegate_inject.so}"
exec /lib64/ld-linux-x86-64.so.2 --library-path "$b/lib" --argv0 "$0" "$b/bin/tracegate" "$@"
EOF2
for f in tracegate-kernel-bench tracegate-kernel-check tracegate-model; do
  cat >"$out.tmp/$f" <<EOF2
#!/bin/sh
# $f starts no other program: its libraries (cudart, cuBLASLt, cuDNN, Google Benchmark) may come
# from LD_LIBRARY_PATH, set here for it alone (TG_CUDA_LIBS: env.sh).
b=\$(cd "\$(dirname "\$0")" && pwd)
LD_LIBRARY_PATH="\$b/lib\${TG_CUDA_LIBS:+:\$TG_CUDA_LIBS}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$b/bin/$f" "\$@"
EOF2
done
chmod +x "$out.tmp"/tracegate*
cat >"$out.tmp/env.sh" <<'EOF2'
# Source this on the GPU machine. It exports no LD_LIBRARY_PATH (see ci/gpu_bundle.sh), only:
#   TRACEGATE_INJECT_LIB  the bundle's collector
#   TG_CUDA_LIBS          where this machine keeps cudart, cuBLASLt, cuDNN and CUPTI: the toolkit's
#                         folders, then python's nvidia-* wheels (the kernel programs' wrappers use it)
# and links the machine's libcupti into lib/, where the collector's RUNPATH ($ORIGIN/lib) finds it
# in every recorded process, PyTorch's wheel's first (a PyTorch process then has one libcupti).
# What it chose goes to env.log, which validate.sh reports.
_tg_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_tg_wheels=$(python3 -c 'import glob, nvidia; print(":".join(sorted(d for p in nvidia.__path__ for d in glob.glob(p + "/*/lib"))))' 2>/dev/null || true)
TG_CUDA_LIBS=""
for _tg_d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib; do
  [ -d "$_tg_d" ] && TG_CUDA_LIBS="${TG_CUDA_LIBS:+$TG_CUDA_LIBS:}$_tg_d"
done
TG_CUDA_LIBS="$TG_CUDA_LIBS${_tg_wheels:+:$_tg_wheels}"
export TG_CUDA_LIBS TRACEGATE_INJECT_LIB="$_tg_bundle/libtracegate_inject.so"
_tg_cupti=""
for _tg_d in $(echo "${_tg_wheels}" | tr ':' ' ') /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  if [ -z "$_tg_cupti" ] && [ -e "$_tg_d/libcupti.so.13" ]; then _tg_cupti=$_tg_d/libcupti.so.13; fi
done
if [ -n "$_tg_cupti" ]; then ln -sf "$_tg_cupti" "$_tg_bundle/lib/libcupti.so.13"; fi
{ echo "libcupti for the collector: ${_tg_cupti:-none found (recording will fail its preflight)}"
  echo "TG_CUDA_LIBS=$TG_CUDA_LIBS"; } >"$_tg_bundle/env.log"
unset _tg_wheels _tg_d _tg_cupti
EOF2
rm -rf "$out"
mv "$out.tmp" "$out"
du -sh "$out"
ls -l "$out" "$out/lib"
