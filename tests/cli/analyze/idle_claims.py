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
  - per device, gaps.in_iterations.total_ns is the raw holes' time inside the kept iterations'
    spans, its causes sum to it, and its largest gaps lie inside the spans;
  - every listed gap (devices[].gaps.largest, in_iterations.largest and each cause's largest) is
    a hole of the raw union of the device's GPU work of exactly that duration, `previous` names an activity that
    ends where it begins and `next` one that starts where it ends.
  - every finding's claim parts sum to its P; a gpu part is at most the GPU's busy time inside the
    spans, an idle part at most the idle time; a kernel or copy rule's P at most that busy time;
  - overlaps are symmetric; the combined estimate's parts sum to at most 1, each at most its
    finding's P, its overall is multi-part Amdahl over them and at most the findings' savings added;
  - priorities: a lower-priority finding predicts a larger gain only with weaker evidence;
  - an involved group's time never exceeds the window;
  - a trace with NCCL kernels analysed as a job of one rank: comm_exposed's P is
    min(exposed, compute) / devices with kernels / the iterations' time, recomputed here per device
    from the unions of the NCCL kernels and of the other kernels inside the spans (fired from
    P >= 0.05, absent below), and the job's collective table counts every NCCL kernel and its time.
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
GPU_RULES = {"memory_bound", "transform_kernels", "h2d_bound", "pageable_copies", "small_copies", "single_stream"}
PRIORITY = {"high": 0, "medium": 1, "low": 2}
STRENGTH = {"measured": 0, "assumed": 1, "heuristic": 2}
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
        merged = union([(s, e) for s, e, _ in mine])
        holes = {a[1]: b[0] for a, b in zip(merged, merged[1:]) if b[0] > a[1]}
        bad += check_in_iterations(r, d, holes, dev)
        listed += d["gaps"].get("in_iterations", {}).get("largest", [])
        if not listed:
            continue
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


def check_in_iterations(r, d, holes, dev):
    """gaps.in_iterations: the device's raw holes clipped to the kept iterations' spans, by cause,
    and its largest gaps lie wholly inside the spans."""
    inside = d["gaps"].get("in_iterations")
    if inside is None:
        return []
    bad = []
    spans = union([(i["start_ns"], i["end_ns"]) for i in r["iteration_table"]])
    raw = sum(max(0, min(e, b) - max(s, a)) for s, e in holes.items() for a, b in spans)
    if inside["total_ns"] != raw:
        bad.append(f"device {dev}: gaps in the iterations {inside['total_ns']} ns, raw holes inside the spans {raw} ns")
    if sum(inside["by_cause_ns"].values()) != inside["total_ns"]:
        bad.append(f"device {dev}: in-iteration causes sum to {sum(inside['by_cause_ns'].values())} ns")
    for g in inside["largest"]:
        s, e = g["start_ns"], g["start_ns"] + g["duration_ns"]
        if not any(a <= s and e <= b for a, b in spans):
            bad.append(f"device {dev}: in-iteration gap [{s}, {e}) is not inside the iterations' spans")
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
    items = nsys_items(path) if path.endswith((".sqlite", ".db")) else kineto_items(path)
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
    bad += check_claims(r, merged, its, total, span_idle)
    if not raw:
        if r["idle_ratio"] is not None or "idle_ratio_reason" not in r:
            bad.append("no GPU activity but idle_ratio is not null with a reason")
        if any(f["id"] in IDLE_RULES for f in r["findings"]):
            bad.append("no GPU activity but an idle finding")
    return bad + check_gaps(r, items) + check_job(tg, path, tmp, items, its, total)


def clip(merged, spans):
    return [[max(s, a), min(e, b)] for s, e in merged for a, b in spans if min(e, b) > max(s, a)]


def check_job(tg, path, tmp, items, its, total):
    """comm_exposed and job.collectives of the trace as a one-rank job, against the raw kernels."""
    comm = [(d, s, e) for d, s, e, names in items if any("nccl" in n.lower() for n in names)]
    if not comm or not its or total <= 0:
        return []
    one = os.path.join(tmp, "job")
    os.makedirs(one, exist_ok=True)
    for f in os.listdir(one):
        os.remove(os.path.join(one, f))
    os.symlink(os.path.abspath(path), os.path.join(one, os.path.basename(path)))
    report = os.path.join(tmp, "job.json")
    subprocess.run([tg, "analyze", one, "-o", report, "-q"], check=True)
    with open(report) as f:
        j = json.load(f)
    bad = []
    spans = union([(i["start_ns"], i["end_ns"]) for i in its])
    exposed = compute = 0
    for dev in {d for d, _, _ in comm}:
        c = clip(union([(s, e) for d, s, e in comm if d == dev]), spans)
        k = clip(union([(s, e) for d, s, e, names in items if d == dev and not names & {"Memcpy*", "Memset"}
                        and not any("nccl" in n.lower() for n in names)]), spans)
        both = sum(busy_in(k, s, e) for s, e in c)
        exposed += sum(e - s for s, e in c) - both
        compute += sum(e - s for s, e in k)
    # Summed over the devices with kernels, then per device (their mean): a wall-time share.
    devices = len({d for d, _, _, names in items if not names & {"Memcpy*", "Memset"}})
    share = min(exposed, compute) / devices / total
    tol = TOL_NS * len(its) / total
    f = [x for x in j["findings"] if x["id"] == "comm_exposed"]
    if f and abs(f[0]["amdahl"]["share"] - share) > tol + 1e-9:
        bad.append(f"comm_exposed P {f[0]['amdahl']['share']:.6f}, raw min(exposed, compute) / total {share:.6f}")
    if not f and share >= 0.05 + tol:
        bad.append(f"no comm_exposed, raw min(exposed, compute) / total {share:.6f}")
    if f and share < 0.05 - tol:
        bad.append(f"comm_exposed fires at raw share {share:.6f} < 0.05")
    rows = j["job"].get("collectives", [])
    if sum(r["count"] for r in rows) != len(comm):
        bad.append(f"job collectives count {sum(r['count'] for r in rows)} calls, the raw trace {len(comm)} NCCL kernels")
    raw_ms = sum(e - s for _, s, e in comm) / 1e6
    if abs(sum(r["total_ms"] for r in rows) - raw_ms) > 1e-6 * max(1, raw_ms):
        bad.append(f"job collectives' time {sum(r['total_ms'] for r in rows)} ms, the raw NCCL kernels {raw_ms} ms")
    return bad


def refs(findings):
    count = {}
    for f in findings:
        count[f["id"]] = count.get(f["id"], 0) + 1
    seen, out = {}, []
    for f in findings:
        seen[f["id"]] = seen.get(f["id"], 0) + 1
        out.append(f["id"] if count[f["id"]] == 1 else f"{f['id']}#{seen[f['id']]}")
    return out


def check_claims(r, merged, its, total, span_idle):
    bad = []
    tol = TOL_NS * max(1, len(its))
    busy = sum(busy_in(merged, i["start_ns"], i["end_ns"]) for i in its)
    window = r["window"]["duration_ns"]
    findings = r["findings"]
    names = refs(findings)
    by_ref = dict(zip(names, findings))
    for name, f in by_ref.items():
        p = f["amdahl"]["share"]
        parts = f.get("claim", [])
        if abs(sum(c["share"] for c in parts) - p) > 1e-9:
            bad.append(f"{name}: claim parts sum to {sum(c['share'] for c in parts)}, P is {p}")
        for c in parts:
            if c["space"] == "gpu" and c["share"] * total > busy + tol:
                bad.append(f"{name}: gpu claim {c['share']:.4f} x {total} ns > GPU busy {busy} ns in the spans")
            if c["space"] == "idle" and c["share"] * total > span_idle + tol:
                bad.append(f"{name}: idle claim {c['share']:.4f} x {total} ns > device idle {span_idle} ns")
        if f["id"] in GPU_RULES and p * total > busy + tol:
            bad.append(f"{name}: P {p:.4f} x {total} ns > GPU busy {busy} ns in the spans")
        for o in f.get("overlaps", []):
            if name not in by_ref.get(o, {}).get("overlaps", []):
                bad.append(f"{name} overlaps {o} but not the other way")
        for v in f["involved"]:
            if v["time_ms"] * 1e6 > window + TOL_NS:
                bad.append(f"{name}: involved {v['name']} {v['time_ms']} ms > window {window} ns")
    c = r.get("combined_estimate")
    if c is None:
        return bad + ["no combined_estimate"]
    shares = [p["share"] for p in c["parts"]]
    if sum(shares) > 1 + 1e-9:
        bad.append(f"combined parts sum to {sum(shares)} > 1")
    time, savings = 1 - sum(shares), 0.0
    for part in c["parts"]:
        f = by_ref.get(part["finding"])
        if f is None or part["share"] > f["amdahl"]["share"] + 1e-12:
            bad.append(f"combined part {part['finding']} P {part['share']} exceeds its finding's")
        s = part["speedup"]
        time += part["share"] / s if s is not None else 0
    for name, f in by_ref.items():
        s = f["amdahl"]["speedup"]
        if name not in c["left_out"]:
            savings += f["amdahl"]["share"] * (1 - (1 / s if s is not None else 0))
    overall = c["overall_speedup"]
    if overall is not None and c["parts"] and abs(overall - 1 / max(time, 1e-300)) > 1e-9 * overall:
        bad.append(f"combined overall {overall} is not multi-part Amdahl over its parts ({1 / time})")
    if overall is not None and savings < 1 and overall > 1 / (1 - savings) + 1e-9:
        bad.append(f"combined overall {overall} > the findings' savings added ({1 / (1 - savings)})")
    for hi in findings:
        for lo in findings:
            if PRIORITY[lo["priority"]] > PRIORITY[hi["priority"]] and \
                    lo["amdahl"]["gain_pct"] > hi["amdahl"]["gain_pct"] and \
                    STRENGTH[lo["evidence_strength"]] <= STRENGTH[hi["evidence_strength"]]:
                bad.append(f"{lo['id']} [{lo['priority']}] predicts more than {hi['id']} [{hi['priority']}]")
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
