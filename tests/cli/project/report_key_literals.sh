#!/usr/bin/env bash
# No source spells a report key (a headline figure or an iteration row's key) as a string literal:
# readers and writers take them from reports/document/report_keys.h (ci/report_key_literals.py
# counts the sites; docs/ARCHITECTURE.md "The report's keys, counted").
# Usage: report_key_literals.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$(dirname "$0")/../../.." && pwd)

if out=$(python3 "$root/ci/report_key_literals.py" --check 2>&1); then
  ok
else
  fail "$out"
fi
# The check finds a site: a copy of the tree with one key spelled out fails it.
copy="$dir/tree"
mkdir -p "$copy/reports/document" "$copy/reports/gate" "$copy/ci"
cp "$root/reports/document/report_keys.h" "$copy/reports/document/"
cp "$root/ci/report_key_literals.py" "$copy/ci/"
printf 'double X(const json& d) { return Number(d, "p95_latency_ms").value_or(0); }\n' >"$copy/reports/gate/x.cpp"
if out=$(python3 "$copy/ci/report_key_literals.py" --check 2>&1); then
  fail "a spelled-out key passed: $out"
else
  grep -q 'reports/gate/x.cpp:1: "p95_latency_ms"' <<<"$out" && ok || fail "not named: $out"
fi
finish report_key_literals
