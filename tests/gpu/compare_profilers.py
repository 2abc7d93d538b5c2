#!/usr/bin/env python3
"""Compares a `tracegate record` of tests/gpu/resnet50_infer.py with a torch.profiler trace of
another run of the same script, per iteration. The two cannot record the same process: CUPTI
serves one profiler per process (the second gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
so each tool records its own run, and the comparison is between their iterations.

Iterations:
  - the recording: the NVTX ranges "iteration N" inside a "profiled" range; a kernel belongs to the
    iteration during which its launching API call started (correlation id, same thread);
  - the Kineto JSON: the user annotations "iteration N" (record_function; present when the trace
    has CPU activity), else the spans between the cudaDeviceSynchronize calls that end each
    iteration of the script (a trace of CUDA activity only has no annotations); a kernel belongs to
    the span its launch (runtime or driver call, by correlation id) started in.

Goal: the same kernels the same number of times in every iteration of each tool and between the
tools (per kernel name), and mean kernel time per iteration within 1%. Kernel times per name are
printed where they differ by more than 1% (run-to-run noise on short kernels; not a failure).

  compare_profilers.py RECORDING.db TORCH.json[.gz]
  compare_profilers.py --same-process [--iterations N] RECORDING.db TORCH.json[.gz]
      both recorded one process (validate.sh's coexist check): what is true then is asserted:
      tracegate's recording is complete (every iteration in "profiled" has the same kernels, and
      N iterations when given) and torch.profiler's trace has no kernel.

Prints one line per figure; exit 0 when the goal holds, 1 when it misses, 2 on unusable input.
Plain Python and SQL: it reads the store's tables and the JSON directly, not tracegate's code.
"""
import argparse
import bisect
import gzip
import json
import sqlite3
import sys
from collections import Counter

TEXT = "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"


class Unusable(Exception):
    pass


def db_iterations(path):
    """[[(kernel name, duration us)] per 'iteration N' range inside 'profiled'], how they were found."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        windows = con.execute(f"SELECT start, end FROM NVTX_EVENTS n WHERE {TEXT} = 'profiled' ORDER BY start").fetchall()
    except sqlite3.Error as e:
        raise Unusable(f"{path}: not a tracegate recording: {e}")
    if not windows:
        raise Unusable(f"{path}: no NVTX range 'profiled' (resnet50_infer.py wraps its timed iterations in one)")
    ranges = []
    for lo, hi in windows:
        ranges += con.execute(
            f"SELECT {TEXT}, start, end, globalTid FROM NVTX_EVENTS n "
            f"WHERE {TEXT} LIKE 'iteration %' AND start >= ? AND end <= ? ORDER BY start", (lo, hi)).fetchall()
    if not ranges:
        raise Unusable(f"{path}: no NVTX range 'iteration N' inside 'profiled'")
    out = []
    for _, start, end, tid in ranges:
        rows = con.execute(
            "SELECT (SELECT value FROM StringIds WHERE id = k.demangledName), k.end - k.start "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.correlationId IN ("
            "  SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.start >= ? AND r.start <= ?"
            "  AND (? IS NULL OR r.globalTid IS NULL OR r.globalTid = ?))",
            (start, end, tid, tid)).fetchall()
        out.append([(name, d / 1e3) for name, d in rows])
    return out, f"{len(ranges)} NVTX ranges 'iteration N' in 'profiled'"


def load_json(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise Unusable(f"{path}: not a Kineto JSON trace: {e}")
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    return [e for e in events if isinstance(e, dict)]


def json_iterations(path):
    events = load_json(path)
    launch_ts = {}  # correlation id -> start of the runtime / driver call that launched it
    syncs = []
    annotations = []
    kernels = []
    for e in events:
        cat, ph = e.get("cat"), e.get("ph")
        if ph != "X":
            continue
        if cat in ("cuda_runtime", "cuda_driver"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts[corr] = float(e["ts"])
            if e.get("name") == "cudaDeviceSynchronize":
                syncs.append(float(e["ts"]))
        elif cat == "user_annotation" and str(e.get("name", "")).startswith("iteration "):
            annotations.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))))
        elif cat == "kernel":
            kernels.append(e)
    spans = {}
    unplaced = 0
    if annotations:
        annotations.sort()
        how = f"{len(annotations)} user annotations 'iteration N'"
        for k in kernels:
            t = launch_ts.get((k.get("args") or {}).get("correlation"))
            i = bisect.bisect_right([a[0] for a in annotations], t) - 1 if t is not None else -1
            if i < 0 or t > annotations[i][1]:
                unplaced += 1
                continue
            spans.setdefault(i, []).append(k)
    else:
        syncs.sort()
        for k in kernels:
            t = launch_ts.get((k.get("args") or {}).get("correlation"))
            if t is None:
                unplaced += 1
                continue
            spans.setdefault(bisect.bisect_left(syncs, t), []).append(k)
        how = f"{len(spans)} spans between cudaDeviceSynchronize calls (no 'iteration N' annotations)"
    out = [[(k["name"], float(k.get("dur", 0))) for k in ks] for _, ks in sorted(spans.items())]
    if unplaced:
        how += f"; {unplaced} kernels outside every iteration left out"
    return out, how, len(kernels)


def counts(iteration):
    return Counter(name for name, _ in iteration)


def describe(tool, iters, how):
    n = len(iters)
    per = sum(len(it) for it in iters) / n if n else 0
    t = sum(d for it in iters for _, d in it) / n if n else 0
    print(f"{tool}: {n} iterations ({how}), {per:.1f} kernels/iteration, {t:.1f} us kernel time/iteration")
    return t


def same_in_every_iteration(tool, iters, fails):
    first = counts(iters[0])
    for i, it in enumerate(iters[1:], 1):
        c = counts(it)
        if c != first:
            diff = sorted(name for name in set(c) | set(first) if c.get(name, 0) != first.get(name, 0))
            fails.append(f"{tool}: iteration {i} launched other kernels than iteration 0 ({len(diff)} names differ, "
                         f"e.g. {diff[0][:80]})")
            return False
    return True


def time_per_name(iters):
    total = Counter()
    for it in iters:
        for name, d in it:
            total[name] += d
    return {name: t / len(iters) for name, t in total.items()}


def compare(db, kineto):
    ours, how_ours = db_iterations(db)
    theirs, how_theirs, _ = json_iterations(kineto)
    if not theirs:
        raise Unusable(f"{kineto}: no kernel launched in any iteration (torch.profiler recorded no CUDA activity?)")
    fails = []
    t_ours = describe("tracegate", ours, how_ours)
    t_theirs = describe("torch.profiler", theirs, how_theirs)
    ok_ours = same_in_every_iteration("tracegate", ours, fails)
    ok_theirs = same_in_every_iteration("torch.profiler", theirs, fails)
    diff = (t_ours - t_theirs) / t_theirs if t_theirs else float("inf")
    print(f"kernel time per iteration: {t_ours:.1f} vs {t_theirs:.1f} us ({100 * diff:+.2f}%, goal within 1%)")
    if abs(diff) > 0.01:
        fails.append(f"kernel time per iteration {t_ours:.1f} vs {t_theirs:.1f} us ({100 * diff:+.2f}%)")
    if ok_ours and ok_theirs:
        a, b = counts(ours[0]), counts(theirs[0])
        if a == b:
            print(f"kernels per iteration: identical ({sum(a.values())} kernels, {len(a)} names)")
        else:
            names = [n for n in sorted(set(a) | set(b)) if a.get(n, 0) != b.get(n, 0)]
            print(f"kernels per iteration: {sum(a.values())} vs {sum(b.values())}; {len(names)} kernel names differ")
            fails += [f"{n[:140]}: {a.get(n, 0)} vs {b.get(n, 0)} kernels per iteration" for n in names]
    # Per kernel name, where the two runs differ by more than 1% (short kernels vary run to run).
    po, pt = time_per_name(ours), time_per_name(theirs)
    differ = sorted((abs(po.get(n, 0) - pt.get(n, 0)), n) for n in set(po) | set(pt)
                    if abs(po.get(n, 0) - pt.get(n, 0)) > 0.01 * max(pt.get(n, 0), 1e-9))
    print(f"kernel names whose time per iteration differs by more than 1%: {len(differ)} of {len(set(po) | set(pt))}"
          + ("; largest:" if differ else ""))
    for _, n in differ[::-1][:5]:
        print(f"  {po.get(n, 0):9.1f} vs {pt.get(n, 0):9.1f} us  {n[:110]}")
    return fails


def same_process(db, kineto, iterations):
    ours, how_ours = db_iterations(db)
    theirs, _, n_kernels = json_iterations(kineto)
    fails = []
    describe("tracegate", ours, how_ours)
    print(f"torch.profiler: {n_kernels} kernels in its trace")
    same_in_every_iteration("tracegate", ours, fails)
    if any(not it for it in ours):
        fails.append("tracegate: an iteration without kernels")
    if iterations is not None and len(ours) != iterations:
        fails.append(f"tracegate: {len(ours)} iterations in 'profiled', the script ran {iterations}")
    if n_kernels:
        fails.append(f"torch.profiler recorded {n_kernels} kernels in the same process: CUPTI took a second "
                     "subscriber? (the check asserts what CUPTI documents: one per process)")
    else:
        print("torch.profiler: no kernel, as CUPTI's one-subscriber rule makes it (tracegate held CUPTI)")
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--same-process", action="store_true")
    ap.add_argument("--iterations", type=int)
    ap.add_argument("recording")
    ap.add_argument("kineto")
    args = ap.parse_args()
    try:
        fails = (same_process(args.recording, args.kineto, args.iterations) if args.same_process
                 else compare(args.recording, args.kineto))
    except Unusable as e:
        print(f"compare_profilers: {e}")
        return 2
    for f in fails[:20]:
        print("FAIL:", f)
    print("compare_profilers:", "FAILED" if fails else "passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
