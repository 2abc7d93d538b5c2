#!/usr/bin/env bash
# The commands shown in README.md and docs/*.md run and print what the pages show: every
# ```console block of README.md and of each docs page that has one (doc_examples.py says how a
# block is matched). README.md's two commands are run elsewhere: ci/test.sh by the project's CI
# (.ci/run), ci/quickstart.sh by cli.quickstart.
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$fixtures/../.." && pwd)
pages=("$root/README.md")
for f in "$root"/docs/*.md; do grep -qx '```console' "$f" && pages+=("$f"); done
grep -qx '```console' "$root/README.md" && ok || fail "README.md has no console block"
python3 "$here/doc_examples.py" "$tg" "$root" "$shared" "${pages[@]}" && ok || fail "the pages' examples"
finish doc_examples
