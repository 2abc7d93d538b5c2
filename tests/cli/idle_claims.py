#!/usr/bin/env python3
"""Property test: tracegate's idle judgments never claim more than the raw trace supports.

For every real trace, the device idle time is recomputed here from the raw file with plain
Python / SQL (not tracegate's code): the union of every GPU activity (kernels, copies, memsets,
all devices) and the time inside the report's iteration spans that it leaves uncovered. Checks:
  - iterations do not overlap;
  - the idle phases of the iterations sum to at most that idle time;
  - the share an idle finding (idle_gaps, launch_bound, sync_in_loop) claims, times the
    iterations' total latency, is at most that idle time;
  - a trace without GPU activity has a null idle_ratio with a reason and no idle finding.
Usage: idle_claims.py TRACEGATE TRACE... (exit 1 on a violated property).
"""
import decimal
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
IDLE_RULES = {"idle_gaps", "launch_bound", "sync_in_loop"}
TOL_NS = 1000  # timestamp rounding: microseconds with three decimals


def kineto_intervals(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU_CATS:
            continue
        try:
            s = int(decimal.Decimal(e["ts"]) * 1000)
            d = int(decimal.Decimal(e.get("dur", 0)) * 1000)
        except (KeyError, ArithmeticError, TypeError, ValueError):
            continue
        out.append((s, s + max(d, 0)))
    return out


def nsys_intervals(path):
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    out = []
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            out += [(s, max(s, e)) for s, e in db.execute(f"SELECT start, end FROM {t}")]
    return out


def union(intervals):
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def busy_in(merged, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in merged)


def check(tg, path, tmp):
    report = os.path.join(tmp, "r.json")
    subprocess.run([tg, "analyze", path, "-o", report, "-q"], check=True)
    with open(report) as f:
        r = json.load(f)
    raw = nsys_intervals(path) if path.endswith(".sqlite") else kineto_intervals(path)
    merged = union(raw)
    bad = []
    its = sorted(r["iteration_table"], key=lambda i: i["start_ns"])
    for a, b in zip(its, its[1:]):
        if a["end_ns"] > b["start_ns"]:
            bad.append(f"iterations overlap: {a['index']} ends at {a['end_ns']}, {b['index']} starts at {b['start_ns']}")
    span_idle = sum((i["end_ns"] - i["start_ns"]) - busy_in(merged, i["start_ns"], i["end_ns"]) for i in its)
    total = sum(i["end_ns"] - i["start_ns"] for i in its)
    claimed_idle = sum(i["phases_ms"]["idle"] for i in its) * 1e6
    if claimed_idle > span_idle + TOL_NS * max(1, len(its)):
        bad.append(f"iterations' idle {claimed_idle:.0f} ns > device idle {span_idle} ns")
    for f in r["findings"]:
        if f["id"] in IDLE_RULES and f["amdahl"]["share"] * total > span_idle + TOL_NS * max(1, len(its)):
            bad.append(f"{f['id']} claims share {f['amdahl']['share']:.4f} of {total} ns > device idle {span_idle} ns")
    if not raw:
        if r["idle_ratio"] is not None or "idle_ratio_reason" not in r:
            bad.append("no GPU activity but idle_ratio is not null with a reason")
        if any(f["id"] in IDLE_RULES for f in r["findings"]):
            bad.append("no GPU activity but an idle finding")
    return bad


def main():
    tg, traces = sys.argv[1], sys.argv[2:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in traces:
            problems = check(tg, path, tmp)
            for p in problems:
                print(f"FAIL {os.path.basename(path)}: {p}")
            if not problems:
                print(f"ok {os.path.basename(path)}")
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
