#!/usr/bin/env bash
# Bad input to every reading command: exit code 2, exactly one line on stderr that names the
# file, and no output file left behind (not even a temp file).
# Usage: bad_input.sh TRACEGATE FIXTURES_DIR
set -u
tg=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0; passes=0

mk() { printf '%b' "$2" >"$dir/$1"; }
mk empty.json ''
mk spaces.json '   \n\t  '
mk truncated.json '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur'
mk no_events.json '{"schemaVersion": 1, "traceName": "x"}'
mk empty_array.json '[]'
mk number.json '42'
mk text.txt 'hello, this is not a trace\n'
mk not_array.json '{"traceEvents": {"ph": "X"}}'
printf '{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"stream":7,"device":0}}]}' \
  | gzip -c | head -c 40 >"$dir/truncated.json.gz"
python3 -c "print('['*100000 + ']'*100000)" >"$dir/deep.json"
python3 -c "print('{\"traceEvents\": ' + '['*100000)" >"$dir/deep_truncated.json"
sqlite3 "$dir/other.sqlite" "CREATE TABLE users(id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'a');"
sqlite3 "$dir/future.db" "CREATE TABLE tracegate_schema(version INTEGER); INSERT INTO tracegate_schema VALUES (999);"
head -c 2048 "$dir/other.sqlite" >"$dir/truncated.sqlite"
mkdir "$dir/a_directory"

check() {  # check NAME CMD...: expects exit 2, one stderr line naming the input, no output
  local name=$1; shift
  local input=$1; shift
  rm -f "$dir"/out.* "$dir"/*.tmp.*
  "$tg" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$? lines
  lines=$(wc -l <"$dir/stderr")
  local ok=1 why=""
  [ "$rc" = 2 ] || { ok=0; why="exit $rc"; }
  [ "$lines" = 1 ] || { ok=0; why="$why; $lines stderr lines"; }
  grep -qF "$input" "$dir/stderr" || { ok=0; why="$why; stderr does not name $input"; }
  if ls "$dir"/out.* "$dir"/*.tmp.* >/dev/null 2>&1; then ok=0; why="$why; output left behind"; fi
  if [ $ok = 1 ]; then passes=$((passes+1)); else
    fails=$((fails+1)); echo "FAIL $name: $why"; sed 's/^/  stderr: /' "$dir/stderr"; fi
}

for f in empty.json spaces.json truncated.json no_events.json empty_array.json number.json text.txt \
         not_array.json truncated.json.gz deep.json deep_truncated.json other.sqlite future.db \
         truncated.sqlite a_directory missing.json; do
  check "analyze $f" "$dir/$f" analyze "$dir/$f" -o "$dir/out.json"
  check "convert $f" "$dir/$f" convert "$dir/$f" -o "$dir/out.db"
  check "export $f" "$dir/$f" export "$dir/$f" --chrome "$dir/out.chrome.json"
done

echo "$passes passed, $fails failed"
[ $fails = 0 ]
