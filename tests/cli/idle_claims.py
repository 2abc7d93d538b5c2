#!/usr/bin/env python3
"""Property test: tracegate's idle judgments never claim more than the raw trace supports.

For every real trace, the device idle time is recomputed here from the raw file with plain
Python / SQL (not tracegate's code): the union of every GPU activity (kernels, copies, memsets,
all devices) and the time inside the report's iteration spans that it leaves uncovered. Checks:
  - iterations do not overlap;
  - the idle phases of the iterations sum to at most that idle time;
  - the share an idle finding (idle_gaps, launch_bound, sync_in_loop) claims, times the
    iterations' total latency, is at most that idle time;
  - a trace without GPU activity has a null idle_ratio with a reason and no idle finding;
  - per device, the idle causes' times sum to the device's gap total, and the streams' idle time
    by cause (idle_before_ns) sums to the device's, cause by cause;
  - every listed gap (devices[].gaps.largest and each cause's largest) is a hole of the raw
    union of the device's GPU work of exactly that duration, `previous` names an activity that
    ends where it begins and `next` one that starts where it ends.
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


def kineto_items(path):
    """(device, start, end, names) of every GPU activity; names: the labels tracegate may give it."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    # Newer files give ts relative to baseTimeNanoseconds; the report's times include it.
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU_CATS:
            continue
        try:
            s = base + int(decimal.Decimal(e["ts"]) * 1000)
            d = int(decimal.Decimal(e.get("dur", 0)) * 1000)
        except (KeyError, ArithmeticError, TypeError, ValueError):
            continue
        args = e.get("args") or {}
        dev = args.get("device", e.get("pid"))
        cat = str(e.get("cat", "")).lower()
        name = str(e.get("name", ""))
        names = {name} if cat == "kernel" else {"Memset"} if "memset" in cat else {"Memcpy*"}
        out.append((dev, s, s + max(d, 0), names))
    return out


def nsys_items(path):
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    out = []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        cols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        name_cols = [c for c in ("shortName", "demangledName", "mangledName") if c in cols]
        for row in db.execute(f"SELECT deviceId, start, end, {', '.join(name_cols)} FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            out.append((row[0], row[1], max(row[1], row[2]), {strings.get(i, "") for i in row[3:]}))
    for t, label in (("CUPTI_ACTIVITY_KIND_MEMCPY", "Memcpy*"), ("CUPTI_ACTIVITY_KIND_MEMSET", "Memset")):
        if t in tables:
            out += [(d, s, max(s, e), {label}) for d, s, e in db.execute(f"SELECT deviceId, start, end FROM {t}")]
    return out


def named(label, names):
    return label in names or ("Memcpy*" in names and label.startswith("Memcpy "))


def check_gaps(r, items):
    """The causes add up, per device and per stream, and each listed gap is what the raw file says."""
    bad = []
    by_dev = {}
    for dev, s, e, names in items:
        by_dev.setdefault(str(dev), []).append((s, e, names))
    for d in r["devices"]:
        dev = str(d["device"])
        causes = d.get("idle_causes")
        if causes is not None:
            total = sum(c["time_ns"] for c in causes.values())
            if total != d["gaps"]["total_ns"]:
                bad.append(f"device {dev}: causes sum to {total} ns, gaps to {d['gaps']['total_ns']} ns")
            streams = [st for st in r["streams"] if str(st["device"]) == dev]
            for cause, c in causes.items():
                per_stream = sum(st.get("idle_before_ns", {}).get(cause, 0) for st in streams)
                if per_stream != c["time_ns"]:
                    bad.append(f"device {dev} {cause}: streams sum to {per_stream} ns, device {c['time_ns']} ns")
        listed = list(d["gaps"]["largest"])
        for c in (causes or {}).values():
            listed += c.get("largest", [])
        mine = by_dev.get(dev, [])
        if not listed:
            continue
        merged = union([(s, e) for s, e, _ in mine])
        holes = {a[1]: b[0] for a, b in zip(merged, merged[1:]) if b[0] > a[1]}
        for g in listed:
            s, e = g["start_ns"], g["start_ns"] + g["duration_ns"]
            if holes.get(s) != e:
                bad.append(f"device {dev}: gap [{s}, {e}) is not a hole of the raw union")
                continue
            if not any(x[1] == s and named(g["previous"], x[2]) for x in mine):
                bad.append(f"device {dev}: no '{g['previous']}' ends at {s}")
            if not any(x[0] == e and named(g["next"], x[2]) for x in mine):
                bad.append(f"device {dev}: no '{g['next']}' starts at {e}")
    return bad


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
    items = nsys_items(path) if path.endswith(".sqlite") else kineto_items(path)
    raw = [(s, e) for _, s, e, _ in items]
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
    return bad + check_gaps(r, items)


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
