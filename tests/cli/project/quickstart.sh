#!/usr/bin/env bash
# README.md's first command, ci/quickstart.sh, runs to the end with the tracegate under test
# (TRACEGATE_BINARY: nothing is built) in a scratch copy of the checkout (its gates write
# baselines/history.db there, not here), and writes the reports it says it writes.
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
co=$dir/checkout
mkdir -p "$co" && cp -r "$root/ci" "$co/" && ln -s "$root/tests" "$co/tests"
mkdir "$co/baselines" && cp "$root"/baselines/*.json "$co/baselines/"
TRACEGATE_BINARY=$tg TRACEGATE_OUT=$dir/out bash "$co/ci/quickstart.sh" >"$dir/log" 2>&1 && ok \
  || { fail "ci/quickstart.sh exits $?"; tail -30 "$dir/log"; }
for f in resnet50_eager_b32.json resnet50_eager_b32.md resnet50_eager_b32.html resnet50_compare.md \
         resnet50_compare.html gate_resnet50_eager.xml gate_resnet50_compile.xml report_rank0.json \
         report_rank0.html gate.md alexnet.db alexnet.chrome.json; do
  [ -s "$dir/out/$f" ] && ok || fail "quickstart wrote no $f"
done
grep -q '^== TRACEGATE_BINARY=.*nothing built' "$dir/log" && ok || fail "quickstart built or recorded something"
grep -q '^quickstart: reports in ' "$dir/log" && ok || fail "quickstart's last line"
finish quickstart
