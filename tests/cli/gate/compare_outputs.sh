#!/usr/bin/env bash
# compare --html / gate --html write the comparison page; the Markdown of analyze, compare and gate
# fits a pull-request comment (bold verdict line first, caveats next, details folded, short names,
# under 4 KB) on real recordings and traces; compare takes the gate's overrides and documents its
# exit codes (0 whatever the verdict, 2 for unreadable input or a usage error).
# Usage: compare_outputs.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
for run in eager compile; do
  gunzip -c "$fixtures/gpu/resnet50_${run}_b32.db.gz" >"$dir/$run.db" || fail "gunzip $run"
  "$tg" analyze "$dir/$run.db" --batch 32 --model "resnet50_$run" --precision fp32 --commit 865cc60 -q \
    -o "$dir/$run.json" --md "$dir/$run.md" || fail "analyze $run"
done

# md_check FILE WHAT: the shape of a PR comment.
md_check() {
  python3 - "$1" "$2" <<'EOF_PY' || fail "$2: Markdown shape"
import re, sys
path, what = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
size = len(text.encode())
problems = []
if size > 4096: problems.append(f"{size} bytes, over 4 KB")
first = text.split("\n", 1)[0]
if not re.fullmatch(r"\*\*\S.*\S\*\*", first): problems.append(f"first line is not a bold line: {first[:80]!r}")
if "```" in text: problems.append("a code block")
# Outside <details>: no name longer than 60 characters in a table cell, and each table once.
outside = re.sub(r"<details>.*?</details>", "", text, flags=re.S)
for line in outside.splitlines():
    if line.startswith("|"):
        for cell in re.split(r"(?<!\\)\|", line.strip("|")):
            plain = re.sub(r"\\(.)", r"\1", cell.strip()).strip("`")
            if len(plain) > 64: problems.append(f"long cell outside <details>: {plain[:70]}...")
lines = text.splitlines()
rows = [l for i, l in enumerate(lines) if l.startswith("|") and not l.startswith("|-")
        and not (i + 1 < len(lines) and lines[i + 1].startswith("|-"))]
if len(rows) != len(set(rows)): problems.append("a table row repeated")
# Caveats come before the first table.
if "Caveats:" in text and text.index("Caveats:") > text.find("\n|"): problems.append("caveats after a table")
if text.count("<details>") != text.count("</details>"): problems.append("unbalanced <details>")
print(f"{what}: {size} bytes")
assert not problems, f"{what}: " + "; ".join(problems)
EOF_PY
}

# compare --html and --md on the GPU pair (eager against torch.compile): exit 0 whatever the verdict.
"$tg" compare "$dir/eager.json" "$dir/compile.json" --md "$dir/cmp.md" --html "$dir/cmp.html" --json "$dir/cmp.json" \
  >"$dir/out" 2>"$dir/err"; rc=$?
[ $rc = 0 ] && head -1 "$dir/out" | grep -q '^REGRESSION' && ok || fail "compare --html -> rc $rc: $(cat "$dir/err")"
md_check "$dir/cmp.md" "compare eager/compile"
head -1 "$dir/cmp.md" | grep -q '^\*\*REGRESSION: avg\\_latency\\_ms 6\.290 -&gt; 11\.568 ms (+83\.91%, limit +5%)\*\*$' \
  && ok || fail "compare Markdown verdict line: $(head -1 "$dir/cmp.md")"
grep -q '^- Warm-up, base: dropped the first of 30 iterations' "$dir/cmp.md" && ok || fail "compare Markdown warm-up caveat"
grep -qF '| `cudnn::bn_fw_inf_1C11_kernel_NCHW` | removed |' "$dir/cmp.md" && ok || fail "compare Markdown family row"
grep -qF '<summary>Full names</summary>' "$dir/cmp.md" && ok || fail "compare Markdown full names folded"
python3 - "$dir/cmp.html" <<'EOF_PY' && ok || fail "compare page content"
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
for what in ('class="banner regression"', 'id="caveats"', 'aria-label="Latency per iteration of both runs"',
             'aria-label="Kernel GPU time per iteration from base to new, by kernel family"',
             'aria-label="Phases of both runs"', 'aria-label="The median iteration of each run on one time axis"',
             'class="ci"', 'class="limit"', "Warm-up, new: dropped the first of 30 iterations"):
    assert what in html, what
assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", ""), "script or network"
assert "default-src 'none'" in html
# The interval in the banner is the bootstrap's, as the JSON has it.
EOF_PY
python3 - "$dir/cmp.json" "$dir/cmp.html" <<'EOF_PY' && ok || fail "compare page interval"
import json, sys
c = json.load(open(sys.argv[1])); html = open(sys.argv[2]).read()
b = c["statistics"]["bootstrap"]
lo, hi = (b["lo"] - 1) * 100, (b["hi"] - 1) * 100
want = f"{lo:+.2f}% to {hi:+.2f}%"
assert want in html, want
EOF_PY

# docs/CI.md quotes the beginning of this comment: it must be what compare writes.
(cd "$dir" && "$tg" compare eager.json compile.json --md docs_cmp.md >/dev/null) || fail "compare in $dir"
python3 - "$root/docs/CI.md" "$dir/docs_cmp.md" <<'EOF_PY' && ok || fail "docs/CI.md's Markdown excerpt is not the real output"
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<!-- compare-md-excerpt -->\n```markdown\n(.*?)```\n<!-- /compare-md-excerpt -->", doc, re.S)
assert m, "no excerpt between the markers"
excerpt, real = m.group(1), open(sys.argv[2], encoding="utf-8").read()
assert len(excerpt) > 500 and real.startswith(excerpt), (excerpt[:300], real[:300])
EOF_PY

# A report without a timeline section: the page says what is missing and draws no iteration.
python3 - "$dir/eager.json" "$dir/old.json" <<'EOF_PY'
import json, sys
r = json.load(open(sys.argv[1])); del r["timeline"]; json.dump(r, open(sys.argv[2], "w"))
EOF_PY
"$tg" compare "$dir/old.json" "$dir/compile.json" --html "$dir/old.html" >/dev/null || fail "compare old report"
grep -q 'base: the report has no timeline section' "$dir/old.html" && ok || fail "missing timeline not said"
"$tg" compare "$dir/old.json" "$dir/old.json" --html "$dir/old2.html" >/dev/null || fail "compare two old reports"
grep -q "needs each report's timeline section" "$dir/old2.html" && ! grep -q 'aria-label="The median iteration' "$dir/old2.html" \
  && ok || fail "no timeline on either side: the page must not draw one"

# The gate's overrides: compare's own hint names --allow-device-mismatch, and compare takes it.
python3 - "$dir/eager.json" "$dir/a100.json" <<'EOF_PY'
import json, sys
r = json.load(open(sys.argv[1])); r["devices"][0]["name"] = "NVIDIA A100"; json.dump(r, open(sys.argv[2], "w"))
EOF_PY
out=$("$tg" compare "$dir/eager.json" "$dir/a100.json" 2>&1); rc=$?
[ $rc = 0 ] && [[ $(head -1 <<<"$out") == "CANNOT JUDGE: devices differ: "*"(pass --allow-device-mismatch to compare anyway)" ]] \
  && ok || fail "compare across devices -> rc $rc: $(head -1 <<<"$out")"
out=$("$tg" compare "$dir/eager.json" "$dir/a100.json" --allow-device-mismatch --md "$dir/dev.md" 2>&1); rc=$?
[ $rc = 0 ] && [[ $(head -1 <<<"$out") == PASS* ]] && grep -q 'compared anyway: \\-\\-allow-device-mismatch\|compared anyway: --allow-device-mismatch' "$dir/dev.md" \
  && ok || fail "compare --allow-device-mismatch -> rc $rc: $(head -1 <<<"$out")"
for opt in "--threshold 90" "--require-significance" "--max-malformed-pct 5" "--kernel-threshold 5"; do
  # shellcheck disable=SC2086
  "$tg" compare "$dir/eager.json" "$dir/compile.json" $opt >/dev/null 2>&1 && ok || fail "compare $opt"
done
head -1 < <("$tg" compare "$dir/eager.json" "$dir/compile.json" --threshold 90) | grep -q '^PASS' && ok \
  || fail "compare --threshold 90 passes +83.91%"

# Exit codes, and --help says them.
"$tg" compare "$dir/eager.json" "$dir/missing.json" >/dev/null 2>&1; [ $? = 2 ] && ok || fail "compare missing input: exit 2"
"$tg" compare "$dir/eager.json" "$dir/compile.json" --no-such-option >/dev/null 2>&1; [ $? = 2 ] && ok || fail "compare bad option: exit 2"
"$tg" compare "$dir/eager.json" "$dir/compile.json" --html "$dir/eager.json" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && python3 -c "import json; json.load(open('$dir/eager.json'))" && ok || fail "compare --html INPUT: rc $rc"
help=$("$tg" compare --help)
for want in "Exit code: 0 when both runs were read and compared, whatever the verdict" "--allow-device-mismatch" \
            "--require-significance" "--kernel-threshold" "--html"; do
  [[ $help == *"$want"* ]] && ok || fail "compare --help lacks: $want"
done
[[ $("$tg" gate --help) == *"Exit code: 0 pass, 1 regression, 2 cannot judge"* ]] && ok || fail "gate --help exit codes"

# gate --html / --md against the stored baselines: the recording against its own passes.
for run in eager compile; do
  "$tg" gate "$dir/$run.json" --baseline "resnet50_${run}_b32_h200" --dir "$root/baselines" --md "$dir/gate_$run.md" \
    --html "$dir/gate_$run.html" --junit "$dir/gate_$run.xml" >"$dir/out" 2>&1; rc=$?
  [ $rc = 0 ] && grep -q 'class="banner pass"' "$dir/gate_$run.html" && ok || fail "gate $run --html -> rc $rc: $(head -2 "$dir/out")"
  md_check "$dir/gate_$run.md" "gate $run"
done
# An unreadable baseline still gets its page, saying why.
"$tg" gate "$dir/eager.json" --baseline "$dir/missing.json" --html "$dir/gate_missing.html" --md "$dir/gate_missing.md" \
  >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'class="banner cannot_judge"' "$dir/gate_missing.html" && grep -q '^\*\*CANNOT JUDGE: ' "$dir/gate_missing.md" \
  && ok || fail "gate --html with a missing baseline -> rc $rc"

# analyze --md on the recordings and the real traces.
md_check "$dir/eager.md" "analyze eager"
md_check "$dir/compile.md" "analyze compile"
for t in "$fixtures"/real/*.json.gz; do
  n=$(basename "$t" .json.gz)
  "$tg" analyze "$t" -q --md "$dir/$n.md" || fail "analyze $n"
  md_check "$dir/$n.md" "analyze $n"
done
if [ -d "$shared" ]; then
  for t in "$shared"/*; do
    case $t in *.json.gz|*.sqlite) ;; *) continue ;; esac
    n=$(basename "$t"); n=${n%.json.gz}; n=${n%.sqlite}
    "$tg" analyze "$t" -q --md "$dir/shared_$n.md" >/dev/null 2>&1 || { fail "analyze $t"; continue; }
    md_check "$dir/shared_$n.md" "analyze $n"
  done
else
  echo "SKIP the shared traces: $shared is absent"
fi
finish compare_outputs.sh
