#!/usr/bin/env bash
# A job report people can read and a gate that names what regressed per rank: the per-rank table
# and the straggler chart in text, Markdown and HTML (the straggler's compute bar the longest and
# the straggler marked), per-rank kernel families in the job report, and a gate whose verdict
# names the rank whose compute kernel got slower and that kernel. Traces from tests/gen/gen_ranks.py.
source "$(dirname "$0")/../testlib.bash"
gen="$fixtures/../gen/gen_ranks.py"
validate="$(dirname "$0")/../validate_report.py"
cd "$dir"

# Every rank leaves each all-reduce at the same instant, so the bars' totals are equal: the
# straggler shows as the longest compute part and no wait; the others wait 0.3 ms for it.
python3 "$gen" job --ranks 4 --straggler 2 --late-us 300 || fail "generator"
"$tg" analyze job -o job.json --md job.md --html job.html > job.txt && python3 "$validate" job.json && ok \
  || fail "analyze DIR with --md and --html"
python3 - job.txt job.md <<'EOF_PY' && ok || fail "text and Markdown straggler chart"
import re, sys
for path in sys.argv[1:]:
    text = open(path).read()
    assert "Straggler chart" in text, path
    rows = {int(m.group(1)): m for m in re.finditer(r"rank +(\d+)[* ] \|([#=. ]{50})\| (\S+) \+ (\S+) \+ (\S+) = (\S+) ms, last (\d+)(.*)", text)}
    assert sorted(rows) == [0, 1, 2, 3], (path, rows)
    compute = {r: m.group(2).count("#") for r, m in rows.items()}
    assert max(compute, key=compute.get) == 2 and all(compute[r] < compute[2] for r in (0, 1, 3)), compute
    assert rows[2].group(3, 4, 5, 6, 7) == ("2.700", "1.000", "0.000", "3.700", "5"), rows[2].groups()
    assert rows[0].group(3, 4, 5, 6, 7) == ("2.400", "1.000", "0.300", "3.700", "0"), rows[0].groups()
    assert "straggler" in rows[2].group(8) and "straggler" not in rows[0].group(8) + rows[1].group(8) + rows[3].group(8)
    assert "slowest" in rows[0].group(8), rows[0].group(8)  # equal latencies: the first rank
    # The per-rank table is still there, a row per rank.
    assert all(f"rank-{r}.json" in text for r in range(4)), path
assert "```text\nStraggler chart" in open(sys.argv[2]).read()
EOF_PY
python3 - job.html <<'EOF_PY' && ok || fail "HTML straggler chart"
import re, sys, xml.etree.ElementTree as ET
html = open(sys.argv[1]).read()
assert '<h2 id="ranks">Ranks (4)</h2>' in html
# One script, the page's own (allowed by its hash), and nothing from the network.
assert html.count("<script") == 1 and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
start = html.index('<h3 id="straggler-chart">')
svg = html[html.index("<svg", start):html.index("</svg>", start) + 6]
root = ET.fromstring(svg)  # well-formed: every string escaped
ns = "{http://www.w3.org/2000/svg}"
texts = [t.text for t in root.iter(ns + "text")]
assert "rank 2 (straggler)" in texts and "rank 0 (slowest)" in texts, texts
assert any(t and t.startswith("2.700 + 1.000 + 0.000 = 3.700 ms, last 5") for t in texts), texts
# One unit per axis: bare numbers on the ticks, "ms" once in the axis title.
ticks = [t.text for t in root.iter(ns + "text") if t.get("class") == "tick-label"]
titles = [t.text for t in root.iter(ns + "text") if t.get("class") == "axis-title"]
assert len(ticks) >= 2 and all(re.fullmatch(r"[0-9]+(\.[0-9]+)?", t) for t in ticks), ticks
assert len(titles) == 1 and titles[0].startswith("ms per iteration"), titles
# Compute bars (class kernel, titled "rank N...: compute"): the straggler's is the longest.
compute = {}
for r in root.iter(ns + "rect"):
    title = r.find(ns + "title")
    if r.get("class") == "kernel" and title is not None and ": compute " in title.text:
        compute[title.text.split(":")[0].split(" (")[0]] = float(r.get("width"))
assert len(compute) == 4 and max(compute, key=compute.get) == "rank 2", compute
assert sum(1 for r in root.iter(ns + "rect") if r.get("class") == "marker") == 2  # straggler, slowest
EOF_PY
python3 - job.json <<'EOF_PY' && ok || fail "per-rank kernel families"
import json, sys
job = json.load(open(sys.argv[1]))
for r in job["ranks"]:
    fam = {f["name"]: f for f in r["kernel_families"]}
    assert set(fam) == {"gemm_compute_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "overlap_compute_kernel"}, fam
    assert r["kernel_families_left_out"] == 0 and all(f["count"] == 5 for f in fam.values()), r
    gemm = 2.3 if r["rank"] == 2 else 2.0
    assert abs(fam["gemm_compute_kernel"]["ms_per_iteration"] - gemm) < 1e-9, fam
EOF_PY

# The cap: at most 64 ranks drawn, the straggler among them, then "... N more".
python3 "$gen" wide --ranks 70 --straggler 68 --iterations 2 || fail "generator, 70 ranks"
"$tg" analyze wide -q --md wide.md && ok || fail "analyze 70 ranks"
python3 - wide.md <<'EOF_PY' && ok || fail "chart capped at 64 ranks"
import re, sys
text = open(sys.argv[1]).read().split("```text")[1]
rows = re.findall(r"rank +(\d+)[* ] \|", text)
assert len(rows) == 64 and "68" in rows and "... 6 more ranks" in text, (len(rows), rows[-3:])
EOF_PY

# The gate names the rank whose compute kernel got slower and that kernel: rank 3 late by 0.3 ms
# makes every iteration 0.3 ms longer; the others' all-reduce waits for it.
python3 "$gen" base --ranks 4 --late-us 0 && python3 "$gen" slow --ranks 4 --straggler 3 --late-us 300 --step-us 5300 \
  || fail "generator, base and slow jobs"
"$tg" analyze base -q -o base.json && "$tg" analyze slow -q -o slow.json || fail "analyze base and slow"
out=$("$tg" gate slow.json --baseline base.json --md gate.md 2>&1); rc=$?
line=$(head -1 <<<"$out")
[ $rc = 1 ] && [[ $line == *"ranks over the limit: "*"; 3 5.000 -> 5.300 ms (+6.00%): gemm_compute_kernel +0.300 ms (+15.00%)"* ]] \
  && [[ $line == *"0 5.000 -> 5.300 ms (+6.00%): ncclDevKernel_AllReduce_Sum_f32_RING_LL +0.300 ms (+30.00%)"* ]] \
  && ok || fail "gate verdict names rank 3 and its kernel ($rc): $line"
[[ $out == *"grown: gemm_compute_kernel +0.300 ms (+15.00%)"* ]] && ok || fail "gate text: grown families per rank"
grep -qF '| 3 | 5.000 | 5.300 | +6.00% | yes | `gemm_compute_kernel` +0.300 ms |' gate.md && ok || fail "gate Markdown: rank 3's kernels"
"$tg" compare base.json slow.json --json cmp.json >/dev/null
python3 - cmp.json <<'EOF_PY' && ok || fail "compare --json: kernel_families_grown"
import json, sys
r = {x["rank"]: x for x in json.load(open(sys.argv[1]))["ranks"]}
g = r[3]["kernel_families_grown"]
assert [f["name"] for f in g] == ["gemm_compute_kernel"], g
assert abs(g[0]["delta_ms_per_iteration"] - 0.3) < 1e-9 and abs(g[0]["delta_pct_of_base"] - 15) < 1e-9, g
assert [f["name"] for f in r[0]["kernel_families_grown"]] == ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"], r[0]
EOF_PY
# Job reports written before ranks[].kernel_families still compare: the ranks, no families.
python3 - base.json old.json <<'EOF_PY' || fail "an old job report"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["ranks"]:
    r.pop("kernel_families"); r.pop("kernel_families_left_out")
json.dump(d, open(sys.argv[2], "w"))
EOF_PY
python3 "$validate" old.json && ok || fail "an old job report against the schema"
out=$("$tg" gate slow.json --baseline old.json 2>&1); rc=$?
[ $rc = 1 ] && [[ $(head -1 <<<"$out") == *"; 3 5.000 -> 5.300 ms (+6.00%)" ]] && ok || fail "gate on an old job report ($rc): $out"
finish job_charts
