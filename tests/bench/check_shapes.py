#!/usr/bin/env python3
"""Checks that generated shape files are what tracegate-gen-kineto --shape says (gen_kineto.h).

Usage: check_shapes.py SHAPE STEPS FILE     (SHAPE: dense, stacks or serving)

Recomputed here from the raw JSON, not with tracegate: the counts of kernels, launches and copies
per step, the 4 streams and the 2% jitter of the dense shape; the python_function tree of the
stacks shape (ids, parents, nesting in time, 20 frames over every cpu_op, one pid/tid); the serving
shape's annotations and graph replays (one cudaGraphLaunch per decode step whose correlation id its
32 kernels carry). Exits 1 with a message on the first difference.
"""
import collections
import json
import re
import sys


def fail(msg):
    print(f"check_shapes.py: {msg}")
    sys.exit(1)


def check_dense(ev, steps):
    cats = collections.Counter(e.get("cat") for e in ev)
    names = collections.Counter(e["name"] for e in ev if e.get("cat") == "cuda_runtime")
    want = {"kernel": 200 * steps, "gpu_memcpy": 2 * steps, "user_annotation": steps}
    for cat, n in want.items():
        if cats[cat] != n:
            fail(f"dense: {cats[cat]} {cat} events, want {n}")
    if names["cudaLaunchKernel"] + names["cudaMemcpyAsync"] != 202 * steps:
        fail(f"dense: {names} launches, want {202 * steps}")
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    if len({e["args"]["stream"] for e in kernels}) != 4:
        fail("dense: kernels not on 4 streams")
    # kernel k of every step has the same name; its durations stay within 2% of one base (base +- 2%: max/min <= 1.02/0.98)
    for k in range(200):
        durs = [kernels[s * 200 + k]["dur"] for s in range(steps)]
        if len({kernels[s * 200 + k]["name"] for s in range(steps)}) != 1:
            fail(f"dense: kernel {k} changes its name between steps")
        if steps > 1 and max(durs) > min(durs) * 1.0409:
            fail(f"dense: kernel {k} durations {min(durs)}..{max(durs)} beyond 2% jitter")


def check_stacks(ev, steps):
    frames = [e for e in ev if e.get("cat") == "python_function"]
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    host = {(e["pid"], e["tid"]) for e in ev if e.get("cat") in ("python_function", "cpu_op", "cuda_runtime")}
    if len(host) != 1:
        fail(f"stacks: host events on {host}, want one pid/tid")
    if len(ops) != 40 * steps:
        fail(f"stacks: {len(ops)} cpu_ops, want {40 * steps}")
    if any("External id" not in e["args"] for e in ops):
        fail("stacks: a cpu_op without External id")
    by_id = {f["args"]["Python id"]: f for f in frames}
    if len(by_id) != len(frames):
        fail("stacks: Python ids not unique")
    depth = {}
    for f in frames:  # written in pre-order: a parent before its children
        parent = f["args"]["Python parent id"]
        if parent is None:
            depth[f["args"]["Python id"]] = 0
            continue
        p = by_id[parent]
        if not (p["ts"] <= f["ts"] and f["ts"] + f["dur"] <= p["ts"] + p["dur"] + 1e-6):
            fail(f"stacks: frame {f['args']['Python id']} outside its parent {parent}")
        depth[f["args"]["Python id"]] = depth[parent] + 1
    if max(depth.values()) != 20:
        fail(f"stacks: tree {max(depth.values())} deep, want 20")
    # every cpu_op lies inside a frame of depth 19 (so 20 frames over it)
    deep = sorted((f["ts"], f["ts"] + f["dur"]) for f in frames if depth[f["args"]["Python id"]] == 19)
    starts = [d[0] for d in deep]
    import bisect
    for op in ops:
        i = bisect.bisect_right(starts, op["ts"]) - 1
        if i < 0 or not op["ts"] + op["dur"] <= deep[i][1] + 1e-6:
            fail(f"stacks: cpu_op at {op['ts']} not under 20 frames")
    return len(frames)


def check_serving(ev, steps):
    notes = [e for e in ev if e.get("cat") == "user_annotation"]
    pattern = re.compile(r"^execute_\d+_context_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)_generation_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)$")
    if len(notes) != steps or not all(pattern.match(e["name"]) for e in notes):
        fail("serving: steps not annotated execute_<tokens>_context_<n>(...)_generation_<m>(...)")
    graphs = [e for e in ev if e.get("name") == "cudaGraphLaunch"]
    decode = sum(1 for n in notes if "_context_0(" in n["name"])
    if len(graphs) != decode:
        fail(f"serving: {len(graphs)} graph launches for {decode} decode steps")
    per_corr = collections.Counter(e["args"]["correlation"] for e in ev if e.get("cat") == "kernel")
    for g in graphs:
        if per_corr[g["args"]["correlation"]] != 32:
            fail(f"serving: graph launch {g['args']['correlation']} has {per_corr[g['args']['correlation']]} kernels")


def main():
    shape, steps, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    extra = {"dense": check_dense, "stacks": check_stacks, "serving": check_serving}[shape](ev, steps)
    print(f"check_shapes.py: {shape} {steps} steps: {len(ev)} events" + (f", {extra} frames" if extra else "") + ": ok")


if __name__ == "__main__":
    main()
