#!/usr/bin/env python3
"""Graphs traced back to their ops (analyze --capture; docs/SERVING.md), recomputed in plain Python
over the raw JSON, not with tracegate's code.

On the shared vLLM pair (kineto_vllm_decode_graph_replay_mi300.json.gz replaying the graph that
kineto_vllm_decode_graph_capture_mi300.json.gz captured):
  - the capture: the kernel launch calls (cuda/cu/hip[Ext][Module]LaunchKernel...) its capturing
    thread makes between hipStreamBeginCapture and hipStreamEndCapture, in call order; for each, the
    innermost cpu_op of its thread that holds the call's start (the latest start; the shorter on a
    tie) and the innermost python_function frame that is neither a built-in ("<...>") nor under
    torch/ or triton/;
  - the replay: the kernels carrying the hipGraphLaunch's correlation id, in start order;
  - the i-th kernel takes the i-th launch's op and frame. The report's
    serving.graph_replay.capture must say every graph kernel was mapped, and its ops list must equal
    the (op, frame) -> (kernels, summed ns) table computed here, exactly; the kernel table's op of
    a kernel name that only the graph ran must be the op its kernels took (when one op dominates).
  - without --capture: capture null with a reason, and those kernels' op null with a reason that
    names the graph replay.
A generated serving run with its capture (tracegate-gen-kineto --serving --capture-out): the ops and
kernel time per op equal the generator's known answers.
Hand-made CUDA-like pairs (launch calls without kernel names): two graphs of the same size with
other ops, told apart by the step's tokens and the capture sizes; a graph matched by its launch
count; one with no captured graph of as many launches; and the errors (a capture trace holding no
capture, a replay holding no graph launch: exit 2, one line naming the problem, no output file).
Usage: graph_capture.py TRACEGATE SHARED_TRACES_DIR REPORT_DIR (exit 1 on a mismatch; the shared pair
is skipped with a printed line when absent).
"""
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

LAUNCH = re.compile(r"^(cuda|cu|hip)(Ext)?(Module|HccModule)?Launch(Cooperative)?Kernel(Ex|ExC)?(_.*)?$")
GRAPH_LAUNCH = re.compile(r"^(cuda|cu|hip)GraphLaunch(_.*)?$")
BEGIN = re.compile(r"^(cuda|cu|hip)StreamBeginCapture(ToGraph)?(_.*)?$")
END = re.compile(r"^(cuda|cu|hip)StreamEndCapture(_.*)?$")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: report {got!r}, raw JSON {want!r}")


def ns(value):
    return int((decimal.Decimal(str(value)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def op_base(op):
    for cut in (", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "):
        op = op.split(cut)[0]
    return op


def framework(frame):
    if not frame or frame.startswith("<"):
        return True
    return re.search(r"(^|/)(torch|triton)/", frame.split("(")[0]) is not None


def innermost(ranges, t):
    """ranges: (start ns, end ns, name); the innermost holding t (latest start, shorter on a tie)."""
    best = None
    for s, e, n in ranges:
        if s <= t < e and (best is None or s > best[0] or (s == best[0] and e < best[1])):
            best = (s, e, n)
    return best[2] if best else None


def caller_frame(frames, t):
    holding = sorted([(s, -(e - s), n) for s, e, n in frames if s <= t < e])
    for s, negdur, n in reversed(holding):
        if not framework(n):
            return n
    return None


def captured_launches(events):
    """Per capture (begin..end on one thread): [(op, frame)] in call order."""
    calls = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"]
    by_thread = defaultdict(list)
    for e in calls:
        by_thread[(e["pid"], e["tid"])].append(e)
    ops = defaultdict(list)
    frames = defaultdict(list)
    for e in events:
        if e.get("ph") != "X":
            continue
        key = (e.get("pid"), e.get("tid"))
        if e.get("cat") == "cpu_op":
            ops[key].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
        elif e.get("cat") == "python_function":
            frames[key].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    graphs = []
    for key, rows in by_thread.items():
        rows.sort(key=lambda e: ns(e["ts"]))
        depth, current = 0, None
        for e in rows:
            if BEGIN.match(e["name"]):
                depth += 1
                if depth == 1:
                    current = []
                    graphs.append((ns(e["ts"]), current))
            elif END.match(e["name"]):
                depth = max(0, depth - 1)
            elif depth > 0 and LAUNCH.match(e["name"]):
                t = ns(e["ts"])
                current.append((innermost(ops[key], t), caller_frame(frames[key], t)))
    return [g for _, g in sorted(graphs, key=lambda x: x[0]) if g]


def run(tg, args, out=None):
    cmd = [tg, "analyze"] + args + (["-o", out, "-q"] if out else [])
    return subprocess.run(cmd, capture_output=True, text=True)


def analyzed(what, tg, args, out):
    """The report `analyze ARGS -o OUT` wrote, or None (with the failure recorded)."""
    r = run(tg, args, out)
    if r.returncode != 0:
        failures.append(f"{what}: analyze {' '.join(args[1:])} failed: {r.stderr.strip()}")
        return None
    with open(out) as f:
        return json.load(f)


def shared_pair(tg, shared, reports):
    replay = os.path.join(shared, "kineto_vllm_decode_graph_replay_mi300.json.gz")
    capture = os.path.join(shared, "kineto_vllm_decode_graph_capture_mi300.json.gz")
    if not (os.path.exists(replay) and os.path.exists(capture)):
        print("skip the shared vLLM pair: absent")
        return
    graphs = captured_launches(load(capture))
    events = load(replay)
    calls = {e["args"]["correlation"]: e["name"] for e in events
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    graph_kernels = defaultdict(list)
    for e in events:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            corr = e["args"].get("correlation")
            if GRAPH_LAUNCH.match(calls.get(corr, "")):
                graph_kernels[corr].append(e)
    check("shared: graph launches", len(graph_kernels), 1)
    check("shared: captured graphs", len(graphs), 1)
    table = defaultdict(lambda: [0, 0])
    ops_by_name = defaultdict(Counter)
    mapped = 0
    for corr, kernels in graph_kernels.items():
        kernels.sort(key=lambda e: ns(e["ts"]))
        match = [g for g in graphs if len(g) == len(kernels)]
        check(f"shared: captured graphs with {len(kernels)} launches", len(match), 1)
        if len(match) != 1:
            continue
        for k, (op, frame) in zip(kernels, match[0]):
            key = (op_base(op) if op else None, frame)
            table[key][0] += 1
            table[key][1] += ns(k["dur"])
            ops_by_name[k["name"]][op_base(op) if op else None] += 1
            mapped += 1
    out = os.path.join(reports, "vllm_replay_with_capture.json")
    doc = analyzed("shared", tg, [replay, "--capture", capture], out)
    if doc is None:
        return
    cap = doc["serving"]["graph_replay"]["capture"]
    check("shared: kernels mapped", (cap["kernels_mapped"], cap["kernels"]), (mapped, sum(map(len, graph_kernels.values()))))
    check("shared: launches mapped", (cap["launches_mapped"], cap["launches"]), (1, 1))
    got = sorted((o["op"], o["frame"], o["kernels"], o["kernel_ns"]) for o in cap["ops"])
    want = sorted((op, frame, n, d) for (op, frame), (n, d) in table.items())
    check("shared: ops table", got, want)
    check("shared: mapped kernel ns", cap["kernel_ns"], sum(d for _, d in table.values()))
    rows = {row["name"]: row for row in doc["kernel_table"]}
    graph_names = {k["name"] for ks in graph_kernels.values() for k in ks}
    other_names = {e["name"] for e in events if e.get("cat") == "kernel"} - graph_names
    checked = 0
    for name, ops in ops_by_name.items():
        if name in other_names or name not in rows:
            continue
        (top, n), *rest = ops.most_common()
        if rest and rest[0][1] == n:
            continue  # a tie: the report's rule (the first by name) is not recomputed here
        check(f"shared: kernel table op of {name[:40]}", rows[name]["op"], top)
        checked += 1
    print(f"shared vLLM pair: {mapped} graph kernels mapped to {len(table)} (op, frame) pairs; "
          f"{checked} kernel-table rows checked")
    # Without --capture: the replay says it cannot name them.
    out = os.path.join(reports, "vllm_replay_without_capture.json")
    doc = analyzed("shared", tg, [replay], out)
    if doc is None:
        return
    g = doc["serving"]["graph_replay"]
    check("shared: capture without --capture", g.get("capture", "absent"), None)
    check("shared: capture_reason", "capture_reason" in g, True)
    reasons = {row.get("op_reason") for row in doc["kernel_table"] if row["name"] in graph_names - other_names}
    check("shared: op reasons of graph kernels without --capture",
          all(x and "graph replay" in x for x in reasons), True)


def event(cat, name, ts, dur, pid=1, tid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def synthetic(tg, reports):
    """Captures of 8 and 16 tokens (two launches each, other ops), of 4 tokens (three launches);
    a replay of three graph launches: a 12-token step with two kernels (the 16-token graph: the
    smallest capture size holding 12), a 3-kernel one (by its count), a 5-kernel one (no match)."""
    cap, corr = [], 0

    def capture(size, t0, ops):
        nonlocal corr
        cap.append(event("user_annotation", f"capture_{size}_FULL", t0, 900))
        cap.append(event("cuda_runtime", "cudaStreamBeginCapture", t0 + 1, 1, correlation=corr + 1000))
        for i, op in enumerate(ops):
            corr += 1
            ts = t0 + 10 + 100 * i
            cap.append(event("cpu_op", op, ts, 50))
            cap.append(event("python_function", "model.py(12): forward", ts - 1, 60))
            cap.append(event("python_function", "torch/nn/modules/module.py(1): _call_impl", ts, 40))
            cap.append(event("cuda_runtime", "cudaLaunchKernel", ts + 5, 3, correlation=corr))
        cap.append(event("cuda_runtime", "cudaStreamEndCapture", t0 + 800, 1, correlation=corr + 2000))

    capture(8, 1000, ["aten::mm", "aten::add"])
    capture(16, 2000, ["aten::bmm", "aten::relu"])
    capture(4, 3000, ["aten::layer_norm", "aten::mm", "aten::gelu"])
    rep = [event("cpu_op", "aten::empty", 100, 10)]  # a profiler trace with ops: annotations are no ops
    launches = [("execute_12_context_0_generation_12", 10000, ["k_a", "k_b"]),
                ("execute_3_context_0_generation_3", 20000, ["k_c", "k_d", "k_e"]),
                ("execute_7_context_0_generation_7", 30000, ["k_f"] * 5)]
    for n, (step, t0, kernels) in enumerate(launches):
        c = 500 + n
        rep.append(event("user_annotation", step, t0, 5000))
        rep.append(event("cuda_runtime", "cudaGraphLaunch", t0 + 10, 20, correlation=c))
        for i, k in enumerate(kernels):
            rep.append(event("kernel", k, t0 + 100 + 100 * i, 50, pid=0, tid=7, correlation=c, device=0, stream=7))
    with tempfile.TemporaryDirectory() as d:
        cpath, rpath = os.path.join(d, "capture.json"), os.path.join(d, "replay.json")
        with open(cpath, "w") as f:
            json.dump({"traceEvents": cap}, f)
        with open(rpath, "w") as f:
            json.dump({"traceEvents": rep}, f)
        out = os.path.join(reports, "synthetic_replay_with_capture.json")
        doc = analyzed("synthetic", tg, [rpath, "--capture", cpath], out)
        if doc is None:
            return
        c = doc["serving"]["graph_replay"]["capture"]
        check("synthetic: counts", (c["graphs"], c["launches"], c["launches_mapped"], c["kernels"], c["kernels_mapped"]),
              (3, 3, 2, 10, 5))
        check("synthetic: matched by", c["matched_by"], {"launch_count": 1, "launch_count_and_capture_size": 1})
        check("synthetic: unmatched", c["unmatched"], {"no_graph_with_as_many_launches": 1, "ambiguous": 0})
        got = sorted((o["op"], o["frame"], o["kernels"], o["kernel_ns"]) for o in c["ops"])
        want = sorted((op, "model.py(12): forward", 1, 50000)
                      for op in ["aten::bmm", "aten::relu", "aten::layer_norm", "aten::mm", "aten::gelu"])
        check("synthetic: ops", got, want)
        rows = {row["name"]: row for row in doc["kernel_table"]}
        check("synthetic: k_a op and class (the 16-token graph's)", (rows["k_a"]["op"], rows["k_a"]["class"]),
              ("aten::bmm", "gemm"))
        check("synthetic: k_e op (by count)", rows["k_e"]["op"], "aten::gelu")
        check("synthetic: k_f unmatched", (rows["k_f"]["op"], "graph replay" in rows["k_f"].get("op_reason", "")),
              (None, True))
        # Errors: exit 2, one line naming the problem, and no report written.
        bad = os.path.join(d, "bad.json")
        r = run(tg, [rpath, "--capture", rpath], bad)
        check("error: capture without captures",
              (r.returncode, rpath in r.stderr, "no graph capture" in r.stderr, len(r.stderr.strip().splitlines()),
               os.path.exists(bad)), (2, True, True, 1, False))
        r = run(tg, [cpath, "--capture", cpath], bad)
        check("error: replay without graph launches",
              (r.returncode, "no graph launch" in r.stderr, len(r.stderr.strip().splitlines()), os.path.exists(bad)),
              (2, True, 1, False))
    print(f"synthetic pair: {c['kernels_mapped']} of {c['kernels']} kernels mapped, {c['matched_by']}")


def generated(tg, reports):
    """tracegate-gen-kineto --serving --capture-out: decode graphs captured per token bucket with
    other attention ops below and above 32 tokens; the report's ops must equal the known answers."""
    gen = os.path.join(os.path.dirname(tg), "tracegate-gen-kineto")
    if not os.access(gen, os.X_OK):
        failures.append(f"no {gen} (build the tracegate-gen-kineto target)")
        return
    with tempfile.TemporaryDirectory() as d:
        trace, capture, answers = (os.path.join(d, n) for n in ("run.json", "capture.json", "answers.json"))
        subprocess.run([gen, "--serving", "300", "--seed", "5", "-o", trace, "--answers", answers,
                        "--capture-out", capture], check=True, capture_output=True)
        with open(answers) as f:
            want = json.load(f)["capture"]
        out = os.path.join(reports, "generated_serving_with_capture.json")
        doc = analyzed("generated", tg, [trace, "--capture", capture], out)
    if doc is None:
        return
    c = doc["serving"]["graph_replay"]["capture"]
    check("generated: counts", (c["graphs"], c["launches"], c["launches_mapped"], c["kernels_mapped"]),
          (want["graphs"], want["launches"], want["launches"], want["kernels_mapped"]))
    check("generated: matched by", c["matched_by"],
          {"launch_count": want["launch_count"], "launch_count_and_capture_size": want["launch_count_and_capture_size"]})
    check("generated: ops", {o["op"]: [o["kernels"], o["kernel_ns"]] for o in c["ops"]}, want["ops"])
    check("generated: frames", {o["frame"] for o in c["ops"]}, {want["frame"]})
    print(f"generated run: {c['kernels_mapped']} replayed kernels of {c['launches']} decode steps mapped by "
          f"capture size to {c['graphs']} graphs")


def main():
    tg, shared, reports = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(reports, exist_ok=True)
    shared_pair(tg, shared, reports)
    synthetic(tg, reports)
    generated(tg, reports)
    for f in failures:
        print("MISMATCH", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
