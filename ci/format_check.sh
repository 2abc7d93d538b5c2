#!/usr/bin/env bash
# Checks that the C/C++/CUDA lines changed since a base revision are formatted as .clang-format
# says (clang-format on the changed lines only: the rest of the tree is left as it is).
# Usage: ci/format_check.sh [BASE]
#   BASE: a revision; default $TRACEGATE_FORMAT_BASE, else HEAD~1 (the last commit's changes,
#   for a merge commit those of the merged branch). Uncommitted changes in the working tree are
#   checked too. On a branch, check all of it with TRACEGATE_FORMAT_BASE=$(git merge-base main HEAD).
# Exit 0: formatted (or nothing to check: no base commit, e.g. a clone of depth 1, is said and
# passes); 1: the lines to change are printed as a diff (apply them with `git clang-format BASE`);
# 2: clang-format cannot be had, or BASE is not a revision.
# Installs clang-format (git clang-format) with apt-get when missing (ci/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/deps.sh
if ! command -v git-clang-format >/dev/null 2>&1 || ! command -v clang-format >/dev/null 2>&1; then
  tracegate_install_deps format
fi
command -v git-clang-format >/dev/null 2>&1 || { echo "format_check: git-clang-format not found (Debian: clang-format)"; exit 2; }

base=${1:-${TRACEGATE_FORMAT_BASE:-HEAD~1}}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  if [ -z "${1:-}" ] && [ -z "${TRACEGATE_FORMAT_BASE:-}" ]; then
    echo "format_check: no $base (a shallow clone or the first commit): nothing to compare with, not checked"
    exit 0
  fi
  echo "format_check: $base: not a revision"
  exit 2
fi
set +e
out=$(git clang-format --diff --extensions c,cc,cpp,cxx,h,hh,hpp,cu,cuh "$base" 2>&1)
rc=$?
set -e
case "$out" in
  "no modified files to format"*|"clang-format did not modify any files"*|"")
    echo "format_check: the lines changed since $(git rev-parse --short "$base") are formatted"
    exit 0 ;;
esac
if [ $rc -gt 1 ]; then
  echo "$out"
  echo "format_check: git clang-format failed (exit $rc)"
  exit 2
fi
echo "$out"
echo "format_check: lines changed since $(git rev-parse --short "$base") differ from .clang-format's layout (above);" \
  "'git clang-format $base' applies it"
exit 1
