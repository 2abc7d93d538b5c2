#!/usr/bin/env python3
"""Compares a `tracegate record` of tests/gpu/resnet50_infer.py --torch-profiler with the
torch.profiler trace the same run wrote: the kernels inside the NVTX range "profiled" of the
recording against the kernels of the Kineto JSON. Goal: kernel count and per-kernel total time
within 1%. Prints one line per check and exits 1 when one misses.

  compare_profilers.py RECORDING.db TORCH.json
"""
import json
import sqlite3
import sys
from collections import defaultdict


def short(name):
    return name.split("(")[0].strip()


def main():
    db, kineto = sys.argv[1], sys.argv[2]
    con = sqlite3.connect(db)
    text = "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))"
    window = con.execute(f"SELECT start, end FROM NVTX_EVENTS WHERE {text} = 'profiled'").fetchall()
    if not window:
        print("FAIL: the recording has no NVTX range 'profiled' (NVTX through the injection?)")
        return 1
    lo, hi = window[0]
    ours = defaultdict(lambda: [0, 0.0])
    for name, start, end in con.execute(
            "SELECT (SELECT value FROM StringIds WHERE id = demangledName), start, end "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= ? AND end <= ?", (lo, hi)):
        ours[short(name)][0] += 1
        ours[short(name)][1] += (end - start) / 1e3  # us
    theirs = defaultdict(lambda: [0, 0.0])
    for e in json.load(open(kineto)).get("traceEvents", []):
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            theirs[short(e["name"])][0] += 1
            theirs[short(e["name"])][1] += float(e.get("dur", 0))
    fails = []
    n_ours, n_theirs = sum(v[0] for v in ours.values()), sum(v[0] for v in theirs.values())
    t_ours, t_theirs = sum(v[1] for v in ours.values()), sum(v[1] for v in theirs.values())
    print(f"kernels: tracegate {n_ours}, torch.profiler {n_theirs}; total {t_ours:.1f} us vs {t_theirs:.1f} us")
    if n_theirs == 0 or abs(n_ours - n_theirs) > 0.01 * n_theirs:
        fails.append(f"kernel count {n_ours} vs {n_theirs}")
    if t_theirs == 0 or abs(t_ours - t_theirs) > 0.01 * t_theirs:
        fails.append(f"kernel time {t_ours:.1f} vs {t_theirs:.1f} us")
    for name in sorted(set(ours) | set(theirs)):
        a, b = ours.get(name, [0, 0.0]), theirs.get(name, [0, 0.0])
        if a[0] != b[0] or abs(a[1] - b[1]) > 0.01 * max(b[1], 1e-9):
            fails.append(f"{name}: {a[0]} kernels {a[1]:.1f} us vs {b[0]} kernels {b[1]:.1f} us")
    for f in fails[:20]:
        print("FAIL:", f)
    print("compare_profilers:", "FAILED" if fails else "passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
