#!/usr/bin/env bash
# The first GPU run's recording of tests/gpu/known_workload (tests/fixtures/gpu/known_workload.db.gz,
# an H200) read back through `tracegate analyze` and `tracegate export`, checked against plain SQL
# on the file and against what record_known.sh checked on the GPU
# (docs/gpu/2026-11-27-h200/raw/record_known.log): 15 kernels (6 known_fma_kernel, 6
# known_axpy_kernel, each with one untimed warm-up; 3 known_graph_kernel from one graph node), 3
# copies of 256 MiB (HtoD, DtoD, DtoH), 1 memset of 256 MiB, 1 NVTX range known_region, and the
# kernel durations the log printed. Usage: known_workload_fixture.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
gunzip -c "$fixtures/gpu/known_workload.db.gz" >"$dir/known.db" || { fail "cannot decompress"; finish known_workload_fixture; exit; }

"$tg" analyze "$dir/known.db" >"$dir/text" 2>&1 && ok || fail "analyze: $(tail -3 "$dir/text")"
grep -qxF "events: 15 kernels, 3 memcpys, 1 memsets, 14 syncs, 97 runtime + 134 driver calls, 1 ranges, 9 samples" "$dir/text" &&
  ok || fail "analyze's event line: $(grep '^events' "$dir/text")"
grep -qxF "data quality: clean" "$dir/text" && ok || fail "the recording is not clean: $(grep -A3 'data quality' "$dir/text")"
"$tg" analyze "$dir/known.db" -q -o "$dir/report.json" && ok || fail "analyze -o"
"$tg" export "$dir/known.db" --chrome "$dir/chrome.json" >"$dir/export.out" 2>&1 && ok || fail "export: $(cat "$dir/export.out")"

python3 - "$dir/known.db" "$dir/report.json" "$dir/chrome.json" >"$dir/check" 2>&1 <<'PY'
import json, sqlite3, sys
from collections import Counter, defaultdict
db, report, chrome = sys.argv[1:]
fails = []
def check(cond, msg):
    if not cond:
        fails.append(msg)

con = sqlite3.connect(db)
q = lambda sql: con.execute(sql).fetchall()
name = "(SELECT value FROM StringIds WHERE id = k.demangledName)"
short = lambda n: n.replace("(anonymous namespace)::", "").split("(")[0]

# Plain SQL on the file.
kernels = q(f"SELECT {name}, start, end, graphId, graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL k ORDER BY start")
by_name = defaultdict(list)
for n, s, e, g, node in kernels:
    by_name[n].append((s, e, g, node))
copies = Counter((c, b) for c, b in q("SELECT copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
memsets = q("SELECT bytes, end - start FROM CUPTI_ACTIVITY_KIND_MEMSET")
ranges = q("SELECT COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)), start, end FROM NVTX_EVENTS")

# What record_known.sh checked on the GPU (record_known.log).
MiB256 = 268435456
check(len(kernels) == 15, f"SQL: {len(kernels)} kernels, want 15")
check(Counter({short(n): len(v) for n, v in by_name.items()}) ==
      Counter({"known_fma_kernel": 6, "known_axpy_kernel": 6, "known_graph_kernel": 3}),
      f"SQL: kernels by name {dict((short(n), len(v)) for n, v in by_name.items())}")
check(copies == Counter({(1, MiB256): 1, (8, MiB256): 1, (2, MiB256): 1}), f"SQL: copies {dict(copies)}")
check([b for b, _ in memsets] == [MiB256], f"SQL: memsets {memsets}")
check([r[0] for r in ranges] == ["known_region"], f"SQL: ranges {ranges}")
graph = [v for n, v in by_name.items() if short(n) == "known_graph_kernel"][0]
check(len({(g, node) for _, _, g, node in graph}) == 1 and graph[0][2] is not None, f"SQL: graph ids {graph}")
logged = {"known_fma_kernel": [9.8727, 9.8727, 9.8726, 9.8727, 9.8728],
          "known_axpy_kernel": [0.2471, 0.2459, 0.2470, 0.2458, 0.2457]}
for n, v in by_name.items():
    if short(n) in logged:  # the timed launches follow one untimed warm-up each
        got = [round((e - s) / 1e6, 4) for s, e, _, _ in v[1:]]
        check(got == logged[short(n)], f"SQL: {short(n)} durations {got} ms, the GPU log printed {logged[short(n)]}")

# tracegate analyze's report against the SQL.
r = json.load(open(report))
c = r["counts"]
check((c["kernels"], c["memcpys"], c["memsets"], c["ranges"]) == (15, 3, 1, 1), f"report counts {c}")
top = {k["name"]: k for k in r["top_kernels"]}
check(set(top) == set(by_name), f"report kernel names {sorted(top)}")
for n, v in by_name.items():
    k = top.get(n, {})
    total = sum(e - s for s, e, _, _ in v)
    check(k.get("count") == len(v) and k.get("total_ns") == total,
          f"report {short(n)}: count {k.get('count')} total_ns {k.get('total_ns')}, SQL {len(v)} {total}")
for kind, code in (("htod", 1), ("dtoh", 2), ("dtod", 8)):
    row = q(f"SELECT count(*), sum(bytes), sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = {code}")[0]
    got = r["copies"][kind]
    check((got["count"], got["bytes"], got["time_ns"]) == row, f"report copies.{kind} {got}, SQL {row}")
m = r["copies"]["memset"]
check((m["count"], m["bytes"], m["time_ns"]) == (1, MiB256, memsets[0][1]), f"report memset {m}, SQL {memsets}")

# tracegate export's Chrome JSON against the SQL (microseconds with nanosecond digits).
ev = json.load(open(chrome))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
xk = sorted((e["name"], round(e["dur"] * 1000)) for e in ev if e.get("cat") == "kernel")
check(xk == sorted((n, e - s) for n, s, e, _, _ in kernels), "export: kernels differ from SQL")
xc = Counter(e["args"]["bytes"] for e in ev if e.get("cat") == "gpu_memcpy")
check(xc == Counter({MiB256: 3}), f"export: copies {dict(xc)}")
xm = [(e["args"]["bytes"], round(e["dur"] * 1000)) for e in ev if e.get("cat") == "gpu_memset"]
check(xm == [(MiB256, memsets[0][1])], f"export: memsets {xm}")
xr = [(e["name"], round(e["dur"] * 1000)) for e in ev if e.get("cat") == "user_annotation"]
check(xr == [(ranges[0][0], ranges[0][2] - ranges[0][1])], f"export: ranges {xr}, SQL {ranges}")
for f in fails:
    print("FAIL:", f)
print(f"checked: {len(kernels)} kernels, {sum(copies.values())} copies, {len(memsets)} memset, {len(ranges)} range")
sys.exit(1 if fails else 0)
PY
if [ $? = 0 ]; then ok; else fail "$(cat "$dir/check")"; fi
finish known_workload_fixture
