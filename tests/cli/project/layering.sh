#!/usr/bin/env bash
# ci/layering_check.py (docs/ARCHITECTURE.md, "Layering"): the tree has no include from an earlier
# stage to a later one and every internal header in tg::internal; and the check itself reports a
# planted break of each kind (util including the model, the analyzer including reports/, the
# report document including the HTML pages, an internal header in namespace tg, ...).
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
if ! command -v python3 >/dev/null 2>&1; then
  echo "layering: skipped: no python3 here"
  finish layering; exit
fi
python3 "$root/ci/layering_check.py" "$root" > "$dir/tree.txt"; rc=$?
[ $rc = 0 ] && ok || fail "the tree: exit $rc: $(cat "$dir/tree.txt")"
python3 "$root/ci/layering_check.py" --self-test "$root" > "$dir/self.txt"; rc=$?
[ $rc = 0 ] && ok || fail "self-test: exit $rc: $(cat "$dir/self.txt")"
finish layering
