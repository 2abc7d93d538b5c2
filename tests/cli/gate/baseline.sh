#!/usr/bin/env bash
# tracegate baseline save|list|show|history end to end. Errors exit 2 with one line on stderr that
# names the file or name; a failed save leaves the old baseline as it was.
# Usage: baseline.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
trace=$fixtures/real/kineto_alexnet_train_step.json.gz
b=$dir/baselines
has() {  # has TEXT PATTERN: grep -E on a variable
  printf '%s\n' "$1" | grep -qE -- "$2"
}
bad() {  # bad PATTERN CMD...: exit 2 and exactly one stderr line matching PATTERN
  local pattern=$1 err rc; shift
  err=$("$tg" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] && has "$err" "$pattern"; then ok;
  else fail "$* -> rc $rc, stderr: $err"; fi
}
run() {  # run CMD...: exit 0; stdout in $out
  out=$("$tg" "$@" 2>"$dir/err") && ok || fail "$* -> rc $?, stderr: $(cat "$dir/err")"
}

"$tg" analyze "$trace" -o "$dir/r.json" -q --model alexnet --precision fp32 --commit 1111111111111111aaaa \
  || fail "analyze"
avg=$(python3 -c "import json; print(json.load(open('$dir/r.json'))['avg_latency_ms'])")
# The same report 10% slower, from another commit.
python3 -c "
import json; r = json.load(open('$dir/r.json'))
r['avg_latency_ms'] *= 1.1; r['commit'] = '2222222222222222bbbb'
json.dump(r, open('$dir/slower.json', 'w'))"

run baseline save "$dir/r.json" --name alexnet --dir "$b"
has "$out" "saved baseline 'alexnet' to $b/alexnet.json" && ok || fail "save message: $out"
[ -f "$b/alexnet.json" ] && [ -f "$b/history.db" ] && ok || fail "save wrote no files"
cmp -s <(python3 -m json.tool --sort-keys "$dir/r.json") <(python3 -m json.tool --sort-keys "$b/alexnet.json") \
  && ok || fail "saved baseline differs from the report"

# A trace is analyzed with default options.
run baseline save "$trace" --name from_trace --dir "$b"
python3 -c "import json; r = json.load(open('$b/from_trace.json')); assert r['schema'] == 'tracegate.report/v1' \
  and abs(r['avg_latency_ms'] - $avg) < 1e-9" && ok || fail "baseline saved from a trace"

run baseline list --dir "$b"
has "$out" '^NAME +MODEL +PRECISION +AVG_MS +COMMIT +DATE' && ok || fail "list header: $out"
has "$out" "^alexnet +alexnet +fp32 +[0-9.]+ +111111111111 +2023-09-27 17:25$" && ok || fail "list row: $out"
has "$out" '^from_trace +- +- ' && ok || fail "list row of the trace baseline: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] && ok || fail "list has 3 lines: $out"

run baseline show alexnet --dir "$b"
has "$out" "^baseline alexnet \($b/alexnet.json\)" && ok || fail "show title: $out"
has "$out" 'model alexnet, precision fp32' && ok || fail "show tags: $out"
has "$out" 'commit 1111111111111111aaaa, profiled 2023-09-27T' && ok || fail "show commit and date: $out"
has "$out" 'device NVIDIA A100' && ok || fail "show device: $out"
has "$out" '^top findings \(2 of 2\):' && ok || fail "show findings: $out"
has "$out" '1\. \[high\] Device idle between GPU work \(est\. gain [0-9.]+%\)' && ok || fail "show finding: $out"
run baseline show "$b/alexnet.json"
has "$out" "^baseline $b/alexnet.json" && ok || fail "show a file: $out"

# History: two saves, 10% apart.
run baseline save "$dir/slower.json" --name alexnet --dir "$b"
run baseline history alexnet --dir "$b"
has "$out" "^history of 'alexnet' \($b/history.db\): 2 row\(s\)" && ok || fail "history title: $out"
has "$out" '^1 +[0-9-]+ [0-9:]+ +saved +111111111111 +[0-9.]+ +\+0\.0% ' && ok || fail "history row 1: $out"
has "$out" '^2 +[0-9-]+ [0-9:]+ +saved +222222222222 +[0-9.]+ +\+10\.0% ' && ok || fail "history row 2: $out"
has "$out" '\[_\^\] +min [0-9.]+ ms, max [0-9.]+ ms, last vs first \+10\.0%' && ok || fail "sparkline: $out"
sqlite3 "$b/history.db" "SELECT count(*) FROM history WHERE name = 'alexnet' AND kind = 'saved'" | grep -qx 2 \
  && ok || fail "history.db rows"

# analyze's --commit default: the git HEAD of the current directory, else null with a reason.
report_is() {  # report_is FILE PYTHON_EXPR (on the report r)
  python3 -c "import json, sys; r = json.load(open('$1')); sys.exit(0 if ($2) else 1)"
}
(cd "$dir" && "$tg" analyze "$trace" -o "$dir/nogit.json" -q) || fail "analyze outside git"
report_is "$dir/nogit.json" 'r["commit"] is None and "not in a git work tree" in r["commit_reason"]' \
  && ok || fail "commit outside a work tree: $(grep -o '"commit[^,]*' "$dir/nogit.json")"
if command -v git >/dev/null; then
  git init -q "$dir/repo" && git -C "$dir/repo" -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m x
  (cd "$dir/repo" && "$tg" analyze "$trace" -o "$dir/git.json" -q) || fail "analyze in a work tree"
  report_is "$dir/git.json" "r['commit'] == '$(git -C "$dir/repo" rev-parse HEAD)' and 'commit_reason' not in r" \
    && ok || fail "commit from git HEAD"
fi

# Errors.
bad "baseline name '../x' is not allowed" baseline save "$dir/r.json" --name ../x --dir "$b"
bad "baseline name 'a/b' is not allowed" baseline save "$dir/r.json" --name a/b --dir "$b"
bad "$dir/missing.json: no such file" baseline save "$dir/missing.json" --name m --dir "$b"
printf '{"hello": 1}' >"$dir/other.json"
bad "^tracegate: error: $dir/other.json: " baseline save "$dir/other.json" --name m --dir "$b"
bad "$b/nope.json: no baseline named 'nope'" baseline show nope --dir "$b"
printf '{"schema": "tracegate.report/v1", "avg_lat' >"$b/corrupt.json"
bad "$b/corrupt.json: not valid JSON" baseline show corrupt --dir "$b"
run baseline list --dir "$b"
has "$out" "^corrupt +unreadable: $b/corrupt.json: not valid JSON" && ok || fail "list marks the corrupt file: $out"
bad "no history for 'never'" baseline history never --dir "$b"
bad "$dir/none/history.db: no history yet" baseline history alexnet --dir "$dir/none"
bad "$dir/none: no baseline directory" baseline list --dir "$dir/none"

# A failed save leaves the old baseline whole and no temp file: a name that is a directory,
# and a write cut short by a file-size limit (as a full disk would; root ignores permissions).
mkdir "$b/dir.json"
bad "$b/dir.json: cannot rename" baseline save "$dir/r.json" --name dir --dir "$b"
[ -d "$b/dir.json" ] && ok || fail "the directory was replaced"
before=$(cat "$b/alexnet.json")
python3 -c "
import json; r = json.load(open('$dir/r.json')); r['padding'] = 'x' * 400000
json.dump(r, open('$dir/big.json', 'w'))"
err=$( (trap '' XFSZ; ulimit -f 200; "$tg" baseline save "$dir/big.json" --name alexnet --dir "$b") 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && has "$err" "$b/alexnet.json: write failed" && ok || fail "size-limited save -> rc $rc: $err"
[ "$(cat "$b/alexnet.json")" = "$before" ] && ok || fail "a failed save changed the old baseline"
[ -z "$(ls "$b" | grep tmp)" ] && ok || fail "temp files left: $(ls "$b")"
sqlite3 "$b/history.db" "SELECT count(*) FROM history WHERE name = 'alexnet'" | grep -qx 2 \
  && ok || fail "a failed save was recorded in the history"

finish baseline
