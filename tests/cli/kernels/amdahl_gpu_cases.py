#!/usr/bin/env python3
"""Synthetic recordings for tests/gpu/amdahl_gpu.py (run by amdahl_gpu.sh): numbers chosen by
hand, the expected P, S and speedups computed here from the hand numbers, not by the script.

Usage: amdahl_gpu_cases.py OUT_DIR   (writes the .db files, prints the expected values as JSON)
"""
import json
import os
import sqlite3
import statistics
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, textId INTEGER, domainId INTEGER, tgPid INTEGER, tgTid INTEGER, tgDepth INTEGER, tgStream INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, tgPid INTEGER, tgTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, tgPid INTEGER);
"""


def write(path, iterations, warmup_kernels):
    """iterations: list of (outside_part_durations, part_durations) in ns. Each iteration is a
    1 ms NVTX range "iteration" (the part inside a nested "res3 blocks" range, its name through
    StringIds); a "warmup" range before them holds `warmup_kernels` kernels that must not count,
    and one kernel is launched between iterations (not counted either)."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.execute("INSERT INTO StringIds VALUES (7, 'res3 blocks')")
    corr = [0]

    def kernel(launch, dur):
        corr[0] += 1
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, 1, ?, 1, 0, 1, 1)",
                    (launch, launch + 10, corr[0]))
        # the kernel runs later than its launch, possibly after the range ended: it still counts
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 7, ?, 1, 1)",
                    (launch + 5000, launch + 5000 + dur, corr[0]))

    t = 1_000_000
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, tgDepth) VALUES (?, ?, 59, 'warmup', 0)",
                (t, t + 900_000))
    for i in range(warmup_kernels):
        kernel(t + 100 + i, 99_999)
    t += 1_000_000
    for outside, part in iterations:
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, tgDepth) VALUES (?, ?, 59, 'iteration', 0)",
                    (t, t + 1_000_000))
        # the same range twice, as some recordings hold it: counted once
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, tgDepth) VALUES (?, ?, 59, 'iteration', 0)",
                    (t, t + 1_000_000))
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, tgDepth) VALUES (?, ?, 59, 7, 1)",
                    (t + 400_000, t + 500_000))
        for j, d in enumerate(outside):
            kernel(t + 100 + 10 * j, d)
        for j, d in enumerate(part):
            kernel(t + 400_100 + 10 * j, d)
        kernel(t + 1_000_500, 77_777)  # between iterations
        t += 2_000_000
    con.commit()
    con.close()


def main(out):
    os.makedirs(out, exist_ok=True)
    # Pair 1: unfused 600 outside + 400 part = 1000 per iteration; fused 600 + 250 = 850.
    # Pair 2: one more 10 ns kernel outside in both: 1010 and 860.
    u1 = [([100, 200, 300], [200, 200])] * 5
    f1 = [([100, 200, 300], [250])] * 5
    u2 = [([100, 200, 300, 10], [200, 200])] * 5
    f2 = [([100, 200, 300, 10], [250])] * 5
    write(f"{out}/u1.db", u1, 3)
    write(f"{out}/f1.db", f1, 2)
    write(f"{out}/u2.db", u2, 0)
    write(f"{out}/f2.db", f2, 1)
    # A pair whose fused run is slower than the unfused one: pairs disagree, inconclusive.
    write(f"{out}/f3.db", [([100, 200, 300, 400], [250])] * 5, 0)
    shares = [400 / 1000] * 5 + [400 / 1010] * 5
    p = statistics.median(shares)
    s_model = 400 / 250
    ratios = [1000 / 850, 1010 / 860]
    measured = statistics.median(ratios)
    s_bench = 1.6
    pred = 1 / ((1 - p) + p / s_bench)
    print(json.dumps({"P": p, "S_model": s_model, "measured": measured, "ratios": ratios, "predicted_bench": pred,
                      "error_bench": (pred - measured) / (measured - 1)}))


if __name__ == "__main__":
    main(sys.argv[1])
