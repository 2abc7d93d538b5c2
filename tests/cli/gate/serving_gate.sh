#!/usr/bin/env bash
# The serving gate end to end (docs/SERVING.md, "The serving gate") on runs of
# tracegate-gen-kineto --serving: the report's step groups recomputed in plain Python from the raw
# trace and checked exactly against the report and the generator's known answers; a 6% slower
# decode bucket fails gate and names the bucket (text, Markdown, JSON, the HTML page's step-group
# table, a JUnit case per group); another batch mix passes and says the workload changed; an A/A pair passes; no group on both sides: exit 2.
# Usage: serving_gate.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
gen=$(dirname "$tg")/tracegate-gen-kineto
[ -x "$gen" ] || { echo "FAIL: no $gen (build the tracegate-gen-kineto target)"; exit 1; }
run() {  # run NAME ARGS...: $dir/NAME.json, its answers and its report $dir/NAME.report.json
  local name=$1; shift
  "$gen" --serving "$@" -o "$dir/$name.json" 2>/dev/null || fail "gen $name $*"
  "$tg" analyze "$dir/$name.json" -o "$dir/$name.report.json" -q || fail "analyze $name"
}
gate() {  # gate RC PATTERN ARGS...: exit RC and a first stdout line matching PATTERN
  local want=$1 pattern=$2 rc; shift 2
  "$tg" gate "$@" >"$dir/out" 2>"$dir/err"; rc=$?
  if [ $rc = "$want" ] && head -1 "$dir/out" | grep -qE -- "$pattern"; then ok;
  else fail "gate $* -> rc $rc (want $want), first line: $(head -1 "$dir/out"), stderr: $(cat "$dir/err")"; fi
}

run base 300 --seed 1
run slow 300 --seed 2 --slow decode:64=1.06
run mix 300 --seed 3 --mix prefill:1024=4,decode:16=1,decode:32=1,decode:64=1,mixed:256=3
run aa 300 --seed 4

# The step groups from the raw trace: each execute_ annotation a step, its kind from its request
# counts, its bucket the power of two at or below its tokens, its latency its duration (the GPU
# work it launched ends inside it, checked); nearest-rank percentiles; exact equality.
python3 - "$dir" <<'EOF' || fail "known answers"
import bisect, json, math, re, sys
d = sys.argv[1]
def ns(us):  # "123.456" us -> 123456 ns, exactly
    whole, _, frac = str(us).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])
for name in ("base", "slow", "mix", "aa"):
    trace = json.load(open(f"{d}/{name}.json"))
    answers = json.load(open(f"{d}/{name}.answers.json"))
    report = json.load(open(f"{d}/{name}.report.json"))
    ev = trace["traceEvents"]
    pat = re.compile(r"execute_(\d+)_context_(\d+)\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)_generation_(\d+)\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)$")
    steps = []
    for e in ev:
        m = e.get("cat") == "user_annotation" and pat.match(e["name"])
        if m:
            tokens, p, psq, dreq, dsq = map(int, m.groups())
            assert tokens == psq + dsq, e["name"]
            kind = "mixed" if p and dreq else "prefill" if p else "decode"
            steps.append((kind, tokens, ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    gpu_end = max(ns(e["ts"]) + ns(e["dur"]) for e in ev if e.get("cat") in ("kernel", "gpu_memcpy"))
    starts = [s for k, t, s, end in steps]
    last = {}
    for e in ev:  # the GPU work of each step ends inside its annotation
        if e.get("cat") == "kernel":
            i = bisect.bisect_right(starts, ns(e["ts"])) - 1
            last[i] = max(last.get(i, 0), ns(e["ts"]) + ns(e["dur"]))
    assert sorted(last) == list(range(len(steps))) and all(last[i] < steps[i][3] for i in last)
    assert gpu_end < steps[-1][3]
    groups = {}
    for k, t, s, end in steps:
        groups.setdefault(({"prefill": 1, "decode": 2, "mixed": 3}[k], 1 << (t.bit_length() - 1)), []).append((t, end - s))
    mine = []
    for (k, b), members in sorted(groups.items()):
        lat = sorted(n / 1e6 for t, n in members)
        total = sum(n for t, n in members)
        tokens = sum(t for t, n in members)
        rank = lambda p: lat[max(min(math.ceil(p * len(lat) / 100), len(lat)), 1) - 1]
        acc = 0.0
        for x in lat:
            acc += x
        mine.append({"kind": ["", "prefill", "decode", "mixed"][k], "token_bucket_min": b, "token_bucket_max": 2 * b,
                     "count": len(lat), "tokens": tokens, "latency_total_ms": total / 1e6,
                     "mean_latency_ms": acc / len(lat), "p50_latency_ms": rank(50), "p95_latency_ms": rank(95),
                     "p99_latency_ms": rank(99), "ms_per_token": total / 1e6 / tokens,
                     "tokens_per_s": tokens / (total / 1e9)})
    got = [{k: g[k] for k in mine[0]} for g in report["serving"]["groups"]]
    want = [{k: g[k] for k in mine[0]} for g in answers["groups"]]
    assert got == mine, (name, got, mine)
    assert want == mine, (name, want, mine)
    assert report["serving"]["steps"] == len(steps) == 300 and report["iteration_source"]["skipped"] == 0
    assert report["serving"]["graph_replay"]["launches"] == sum(1 for s in steps if s[0] == "decode")
EOF
ok

# A 6% slower decode bucket: regression, the bucket named in text, Markdown and JSON.
gate 1 '^REGRESSION: ms/token over the \+5% limit in decode 64-127 tokens 0\.[0-9]+ -> 0\.[0-9]+ ms/token \(\+[56]\.[0-9]+%, 95% CI ' \
  "$dir/slow.report.json" --baseline "$dir/base.report.json" --md "$dir/slow.md"
grep -q '| decode 64-127 tokens | 90 / 90 | .* | \*\*REGRESSION\*\* |' "$dir/slow.md" && ok || fail "slow.md: $(cat "$dir/slow.md")"
grep -qE '^    decode 64-127 tokens .* REGRESSION$' "$dir/out" && ok || fail "slow text table: $(cat "$dir/out")"
"$tg" compare "$dir/base.report.json" "$dir/slow.report.json" --json "$dir/slow.cmp.json" >/dev/null || fail "compare --json"
python3 - "$dir/slow.cmp.json" <<'EOF' && ok || fail "slow comparison JSON"
import json, sys
s = json.load(open(sys.argv[1]))["serving"]
assert s["failing"] == ["decode 64-127 tokens"], s["failing"]
g = [g for g in s["groups"] if g["regression"]][0]
assert (g["kind"], g["token_bucket_min"], g["token_bucket_max"]) == ("decode", 64, 128)
assert 5 < g["delta_pct"] < 7 and g["ci_lo_pct"] > 0 and g["q"] < 0.05
assert not s["workload_changed"] and s["judged"] == 5
EOF

# The same pair's HTML page and JUnit: the page's step-group rows are compare --json's numbers; JUnit
# has one case per step group, the slowed one failing with the text gate's line, and the workload.
"$tg" gate "$dir/slow.report.json" --baseline "$dir/base.report.json" --html "$dir/slow.html" \
  --junit "$dir/slow.xml" >"$dir/out" 2>&1; [ $? = 1 ] || fail "gate --html --junit slow"
python3 - "$dir/slow.cmp.json" "$dir/slow.html" "$dir/slow.xml" "$dir/out" <<'EOF' && ok || fail "slow page and JUnit"
import html, json, re, sys
import xml.etree.ElementTree as ET
s = json.load(open(sys.argv[1]))["serving"]
page = open(sys.argv[2], encoding="utf-8").read()
table = re.search(r'<table class="serving">(.*?)</table>', page, re.S).group(1)
rows = [[html.unescape(re.sub(r"<[^>]*>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
        for r in re.findall(r"<tr><td.*?</tr>", table)]
want = [[g["name"], f'{g["base_steps"]} / {g["new_steps"]}',
         f'{g["base_step_share"] * 100:.1f}% / {g["new_step_share"] * 100:.1f}%',
         f'{g["base_ms_per_token"]:.4f}', f'{g["new_ms_per_token"]:.4f}', f'{g["delta_pct"]:+.2f}%',
         f'{g["ci_lo_pct"]:+.2f}%..{g["ci_hi_pct"]:+.2f}%', f'{g["q"]:.3g}',
         "REGRESSION" if g["regression"] else "pass"] for g in s["groups"]]
assert rows == want, (rows, want)
suite = ET.parse(sys.argv[3]).getroot().find("testsuite")
cases = {c.get("name"): c for c in suite.findall("testcase")}
groups = [f'serving {g["name"]} ms_per_token' for g in s["groups"]]
assert list(cases) == ["inputs", "devices", "data_quality"] + groups + ["serving workload"], list(cases)
failed = [n for n, c in cases.items() if c.find("failure") is not None]
assert failed == ["serving decode 64-127 tokens ms_per_token"], failed
# one group failed: its message is the verdict line the gate printed
line = open(sys.argv[4]).readline().rstrip("\n")
assert cases[failed[0]].find("failure").get("message") == line, line
assert line.startswith("REGRESSION: ms/token over the +5% limit in decode 64-127 tokens "), line
assert cases["serving workload"].find("system-out").text.startswith("workload unchanged"), "workload"
assert suite.get("failures") == "1" and suite.get("tests") == str(len(cases))
EOF

# Another batch mix, the same per-token costs: pass, a workload change, the mean latency not judged.
gate 0 '^PASS: ms/token within the \+5% limit in 5 step groups .*; workload changed, not judged as latency: step mix shifted by [0-9.]+% \(.*; avg_latency_ms .* follows the batch mix: serving steps are judged per group$' \
  "$dir/mix.report.json" --baseline "$dir/base.report.json" --junit "$dir/mix.xml" --html "$dir/mix.html"
python3 - "$dir/mix.xml" "$dir/mix.html" <<'EOF' && ok || fail "mix JUnit and page"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert suite.get("failures") == "0" and suite.get("errors") == "0"
w = [c for c in suite.findall("testcase") if c.get("name") == "serving workload"][0]
assert w.find("system-out").text.startswith("workload changed, not judged as latency: step mix shifted by 50.0% (")
assert '<li class="warning">workload changed, not judged as latency: step mix shifted by 50.0% (' in open(sys.argv[2]).read()
EOF

# A/A: pass, no workload change.
gate 0 '^PASS: ms/token within the \+5% limit in 5 step groups \(largest change [a-z]+ [0-9-]+ tokens [0-9.]+ -> [0-9.]+ ms/token \([^;]*\)\)$' \
  "$dir/aa.report.json" --baseline "$dir/base.report.json"

# No group on both sides: gate cannot judge (exit 2, saying why); compare exits 2 with one line.
run decode 30 --seed 5 --mix decode:32=1
run prefill 30 --seed 6 --mix prefill:1024=1
gate 2 '^CANNOT JUDGE: no serving step group \(kind x token bucket\) on both sides, so no ms per token to compare \(.*decode\.report\.json: decode 32-63 tokens; .*prefill\.report\.json: prefill 1024-2047 tokens\)$' \
  "$dir/prefill.report.json" --baseline "$dir/decode.report.json"
"$tg" compare "$dir/decode.report.json" "$dir/prefill.report.json" >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && [ "$(wc -l <"$dir/err")" = 1 ] &&
   grep -q '^tracegate: error: no serving step group' "$dir/err"; then ok
else fail "compare without a common group -> rc $rc, out: $(cat "$dir/out"), err: $(cat "$dir/err")"; fi

# The generator's own bad input: one line, exit 2.
"$gen" --serving 10 --slow decode:48=1.1 -o "$dir/bad.json" 2>"$dir/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ] && [ ! -e "$dir/bad.json" ] && ok || fail "gen --slow decode:48 -> rc $rc $(cat "$dir/err")"

finish serving_gate
