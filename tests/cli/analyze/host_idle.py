#!/usr/bin/env python3
"""Independent check of the idle causes (issue 27) on real Kineto traces with host events.

For every trace given, tracegate analyze writes its report (iteration table included); this script
then recomputes from the raw JSON, with plain Python and not tracegate's code:
  - per iteration, the GPU-idle time: the span minus the union of every GPU activity (all devices)
    inside it; the iteration's idle_causes_ns must sum to it, and the report's gpu_idle.by_cause_ns
    to the iterations' sums, cause by cause;
  - every interval in gpu_idle.largest is a hole of that union, and its by_cause_ns sums to it;
  - each host_frames entry's time is the overlap of a frame of that name on the thread read
    (host_tid) with the interval;
  - each interval's causes agree with the host state on that thread: the time a cause claims is at
    most what the raw events support (host_compute: launch-free frames at least compute_block_us
    long; host_sync: sync calls and synchronous copies; jit_compile: compiler frames; host_idle: no
    event on the thread; graph_capture: between a begin- and end-capture call; device_backlog: the
    next work started at least backlog_us after its launch call returned);
  - a trace whose capture launches outnumber its GPU work says it is a capture and makes no idle
    finding; device_backlog time is never claimed by an idle finding.
Usage: host_idle.py TRACEGATE TRACE... (exit 1 on a violated property)
"""
import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile

TOL_NS = 1000  # microsecond timestamps with three decimals
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
HOST_CATS = {"cpu_op", "python_function", "user_annotation", "cuda_runtime", "cuda_driver", "runtime", "driver"}
CALL_CATS = {"cuda_runtime", "cuda_driver", "runtime", "driver"}
JIT = ("_dynamo/convert_frame.py", "_inductor/compile_fx.py", "_inductor/codecache.py", "_inductor/async_compile.py",
       "_inductor/graph.py", "_functorch/aot_autograd.py", "triton/compiler/", "triton/backends/",
       "utils/cpp_extension.py", "nvrtc", "ModuleLoad", "LibraryLoad", "LinkComplete")
IDLE_RULES = {"idle_gaps", "launch_bound", "sync_in_loop", "host_bound"}
WAIT = ("threading.py", "queue.py", "selectors.py", "method sleep", "time.sleep", "select.select", "select.poll",
        "select.epoll", "socket.py", "multiprocessing/connection.py", "asyncio/base_events.py", "asyncio/tasks.py")


def is_wait(e):
    return e["cat"] not in CALL_CATS and any(w in e["name"] for w in WAIT) and "_bootstrap" not in e["name"]


def ns(x):
    return int(decimal.Decimal(x) * 1000)


def is_sync(name):
    copy = "Memcpy" in name or "memcpy" in name
    asyn = "Async" in name or "async" in name
    return ("Synchronize" in name or (copy and not asyn and "Peer" not in name) or
            name in ("cudaFree", "hipFree", "cudaFreeHost", "hipHostFree") or name.startswith("cuMemFree"))


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(iv, a, b):
    """Length of the union of iv inside [a, b)."""
    return sum(max(0, min(e, b) - max(s, a)) for s, e in union([(s, e) for s, e in iv if e > a and s < b]))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    gpu, host, calls = [], {}, {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        try:
            s = base + ns(e["ts"])
            d = max(ns(e.get("dur", 0)), 0)
        except (KeyError, ArithmeticError, TypeError, ValueError):
            continue
        args = e.get("args") or {}
        if cat in GPU_CATS:
            gpu.append({"s": s, "e": s + d, "corr": args.get("correlation"), "name": str(e.get("name", ""))})
        elif cat in HOST_CATS:
            ev = {"s": s, "e": s + d, "name": str(e.get("name", "")), "cat": cat, "pid": e.get("pid"),
                  "tid": e.get("tid"), "corr": args.get("correlation")}
            host.setdefault(e.get("tid"), []).append(ev)
            if cat in CALL_CATS and ev["corr"] is not None:
                calls[ev["corr"]] = ev
    launched = {g["corr"] for g in gpu if g["corr"] is not None}
    for evs in host.values():
        evs.sort(key=lambda x: (x["s"], -x["e"]))
    return gpu, host, calls, launched


def check(tg, path, problems):
    gpu, host, calls, launched = load(path)
    if not host:
        return
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        r = subprocess.run([tg, "analyze", path, "-q", "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"{path}: analyze failed: {r.stderr.strip()}")
            return
        rep = json.load(open(out))
    name = os.path.basename(path)
    idle = rep.get("gpu_idle")
    if idle is None:
        problems.append(f"{name}: no gpu_idle section")
        return
    busy = union([(g["s"], g["e"]) for g in gpu if g["e"] > g["s"]])
    sums = {}
    for row in rep["iteration_table"]:
        a, b = row["start_ns"], row["end_ns"]
        expect = (b - a) - covered(busy, a, b)
        got = sum(row["idle_causes_ns"].values())
        if abs(got - expect) > TOL_NS * 2:
            problems.append(f"{name}: iteration {row['index']}: causes sum to {got} ns, raw GPU-idle time is {expect} ns")
        for c, v in row["idle_causes_ns"].items():
            sums[c] = sums.get(c, 0) + v
    for c, v in idle["by_cause_ns"].items():
        if sums.get(c, 0) != v:
            problems.append(f"{name}: gpu_idle.by_cause_ns[{c}] = {v}, the rows sum to {sums.get(c, 0)}")
    if sum(idle["by_cause_ns"].values()) != idle["total_ns"]:
        problems.append(f"{name}: gpu_idle causes do not sum to total_ns")
    block_ns = int(idle["thresholds"]["compute_block_us"] * 1000)
    backlog_ns = int(idle["thresholds"]["backlog_us"] * 1000)
    for iv in idle["largest"]:
        a, dur = iv["start_ns"], iv["duration_ns"]
        b = a + dur
        where = f"{name}: interval at {a} ({dur} ns, {iv.get('cause')})"
        if covered(busy, a, b) > TOL_NS:
            problems.append(f"{where}: GPU work runs inside it")
        by = iv.get("by_cause_ns", {})
        if sum(by.values()) != dur:
            problems.append(f"{where}: by_cause_ns sums to {sum(by.values())}")
        tid = iv.get("host_tid")
        evs = host.get(tid, []) if tid is not None else []
        if tid is None and any(c in by for c in ("host_compute", "host_sync", "jit_compile", "host_idle")):
            problems.append(f"{where}: a host cause without the thread it read")
            continue
        for f in iv.get("host_frames", []):
            ok = any(e["name"] == f["frame"] and abs(max(0, min(e["e"], b) - max(e["s"], a)) - f["time_ns"]) <= TOL_NS
                     for e in evs)
            if not ok:
                problems.append(f"{where}: host frame {f['path']!r} {f['time_ns']} ns is no frame's overlap with it")
        inside = [e for e in evs if e["e"] > a and e["s"] < b]
        starts = sorted(c["s"] for c in evs if c["cat"] in CALL_CATS and c["corr"] in launched)

        def launch_free(e):
            import bisect
            i = bisect.bisect_left(starts, e["s"])
            return not (i < len(starts) and (starts[i] < e["e"] or starts[i] == e["s"]))

        support = {
            "host_compute": covered([(e["s"], e["e"]) for e in inside if e["cat"] not in CALL_CATS
                                     and e["e"] - e["s"] >= block_ns and launch_free(e)], a, b),
            "host_sync": covered([(e["s"], e["e"]) for e in inside if e["cat"] in CALL_CATS and is_sync(e["name"])], a, b),
            "jit_compile": covered([(e["s"], e["e"]) for e in inside if any(j in e["name"] for j in JIT)], a, b),
            # No op, frame or call (annotations such as the step's marker are no activity), or a wait.
            "host_idle": dur - covered([(e["s"], e["e"]) for e in inside
                                        if e["cat"] != "user_annotation" and not is_wait(e)], a, b),
        }
        for c, v in support.items():
            if by.get(c, 0) > v + TOL_NS:
                problems.append(f"{where}: {c} {by[c]} ns but the thread supports only {v} ns")
        if by.get("device_backlog", 0) > 0:
            lag = iv.get("evidence", {}).get("lag_ns", 0)
            if lag < backlog_ns:
                problems.append(f"{where}: device_backlog with a lag of {lag} ns")
    findings = {f["id"]: f for f in rep["findings"]}
    if rep.get("graph_capture"):
        for rule in IDLE_RULES & findings.keys():
            problems.append(f"{name}: a capture trace with an idle finding ({rule})")
    # No idle finding claims backlog: idle_gaps' P is at most the claimable idle phase.
    total = sum(row["end_ns"] - row["start_ns"] for row in rep["iteration_table"])
    phase = idle["idle_phase_by_cause_ns"]
    claimable = sum(v for c, v in phase.items() if c not in ("device_backlog", "graph_capture"))
    if "idle_gaps" in findings and total > 0:
        p = findings["idle_gaps"]["amdahl"]["share"]
        if p * total > claimable + TOL_NS * max(1, len(rep["iteration_table"])):
            problems.append(f"{name}: idle_gaps claims {p * total:.0f} ns, claimable idle is {claimable} ns")
    print(f"{name}: {len(rep['iteration_table'])} iterations, GPU idle {idle['total_ns'] / 1e6:.3f} ms: " +
          ", ".join(f"{c} {v / 1e6:.3f}" for c, v in sorted(idle["by_cause_ns"].items(), key=lambda x: -x[1]) if v))


def main():
    tg, paths = sys.argv[1], sys.argv[2:]
    problems = []
    for p in paths:
        check(tg, p, problems)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
