# Shared setup for CLI test scripts (source it first; not a test itself: CTest runs *.sh only).
# Arguments of the script: TRACEGATE FIXTURES_DIR. Gives $tg, $fixtures, $shared (../shared/traces
# beside the checkout, which may be absent: skip with a printed reason), a temp $dir removed on
# exit, and counters: ok, fail MESSAGE, finish NAME (prints the tally; its status is the result).
set -u
tg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute: tests may cd
fixtures=$(cd "$2" && pwd)
shared=$(cd "$fixtures/../../.." && pwd)/shared/traces
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
fail() { fails=$((fails+1)); echo "FAIL: $*"; }
finish() {
  echo "$1: $passes passed, $fails failed"
  [ "$fails" = 0 ]
}
