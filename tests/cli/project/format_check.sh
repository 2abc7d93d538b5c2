#!/usr/bin/env bash
# ci/format_check.sh checks the changed lines only: in a scratch repository with the project's
# .clang-format, an unformatted old line passes, a formatted change passes, an unformatted
# change (committed since the base, or left in the working tree) fails with exit 1 and a diff,
# a missing default base (the first commit) passes with a notice, and an unknown base is exit 2.
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
if ! command -v git-clang-format >/dev/null 2>&1; then
  echo "format_check: skipped: no git-clang-format here (Debian: clang-format; ci/format_check.sh installs it)"
  finish format_check; exit
fi
cd "$dir"
git init -q repo && cd repo
git config user.email t@example.com && git config user.name t
mkdir ci && cp "$root/ci/format_check.sh" "$root/ci/deps.sh" ci/ && cp "$root/.clang-format" .
printf 'int  old( int a ){return a;}\n\nint kept() { return 1; }\n' > a.cpp   # an old unformatted line
git add -A && git commit -qm base
bash ci/format_check.sh > out.txt; rc=$?
[ $rc = 0 ] && grep -q 'nothing to compare with' out.txt && ok || fail "first commit, default base: $rc $(cat out.txt)"
printf 'int  old( int a ){return a;}\n\nint kept() { return 1; }\nint added(int b) { return b + 1; }\n' > a.cpp
git commit -qam formatted
bash ci/format_check.sh > out.txt && grep -q 'are formatted' out.txt && ok || fail "a formatted change beside an old unformatted line: $(cat out.txt)"
printf 'int  old( int a ){return a;}\n\nint kept() { return 1; }\nint added(int b) { return b + 1; }\nint bad( int c ){return c;}\n' > a.cpp
bash ci/format_check.sh > out.txt; rc=$?
[ $rc = 1 ] && grep -q '^+int bad(int c) { return c; }' out.txt && ! grep -q 'old(int a)' out.txt && ok \
  || fail "an unformatted working-tree change: exit $rc $(cat out.txt)"
git commit -qam bad
bash ci/format_check.sh > out.txt; rc=$?
[ $rc = 1 ] && grep -q '^+int bad(int c) { return c; }' out.txt && ok || fail "an unformatted commit: exit $rc"
TRACEGATE_FORMAT_BASE=HEAD bash ci/format_check.sh > out.txt && ok || fail "TRACEGATE_FORMAT_BASE=HEAD: no change"
bash ci/format_check.sh HEAD~2 > out.txt; rc=$?
[ $rc = 1 ] && grep -q 'since' out.txt && ok || fail "BASE argument HEAD~2: exit $rc"
bash ci/format_check.sh no-such-rev > out.txt; rc=$?
[ $rc = 2 ] && grep -q 'no-such-rev: not a revision' out.txt && ok || fail "unknown base: exit $rc $(cat out.txt)"
finish format_check
