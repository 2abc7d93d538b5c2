#!/usr/bin/env python3
"""LLM serving steps (docs/SERVING.md) against the raw JSON: an independent recomputation in plain
Python (not tracegate's code) over the shared vLLM traces.

For the graph-replay trace (kineto_vllm_decode_graph_replay_mi300.json.gz):
  - the user_annotation events whose names follow vLLM's step grammar
    execute_<tokens>_context_<prefill requests>[(...)]_generation_<decode requests>[(...)] must be
    exactly one decode step with 32 decode requests, and the report's iteration_table must be that
    one step (step_kind decode, decode_requests 32, prefill_requests 0, tokens as annotated),
    its serving section one decode group of one step;
  - graph replay share: the kernels whose `correlation` is that of a cudaGraphLaunch /
    hipGraphLaunch / cuGraphLaunch runtime call, their summed durations (ns, exact decimal
    arithmetic on ts/dur in microseconds) over the summed durations of every kernel: the report's
    serving.graph_replay kernel_ns, total_kernel_ns and kernel_time_ratio must equal them exactly.
For the graph-capture trace (kineto_vllm_decode_graph_capture_mi300.json.gz): its capture_<n>_<MODE>
annotations are counted (serving.capture_steps) and are no steps (serving.steps 0).
And a hand-made SGLang trace (both forms per step, nested and overlapping): four steps, their
kinds, tokens and request counts, and the groups.
Usage: serving.py TRACEGATE SHARED_TRACES_DIR [REPORT_DIR] (exit 1 on a mismatch; a shared trace
that is absent is skipped with a printed line).
"""
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

VLLM = re.compile(r"^execute_(\d+)_context_(\d+)(\([^)]*\))?_generation_(\d+)(\([^)]*\))?$")
CAPTURE = re.compile(r"^capture_(\d+)_([A-Z_]+)$")
GRAPH_LAUNCH = re.compile(r"^(cuda|cu|hip)GraphLaunch(_.*)?$")


def ns(value):
    return int((decimal.Decimal(str(value)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def load(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


OUT = tempfile.mkdtemp()  # serving.sh passes a folder to keep the reports in (it validates them)


def report(tg, path):
    out = os.path.join(OUT, os.path.basename(path).split(".")[0] + ".json")
    subprocess.run([tg, "analyze", path, "-o", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def synthetic(tg):
    """A hand-made SGLang trace: each step written as step[...] with vLLM's execute_... inside or
    overlapping it, plus one step[...] alone; each step launches one kernel."""
    events, corr = [], 0
    steps = [  # (ts us, dur us, step name, execute name or None, execute offset, execute dur)
        (1000, 100, "step[EXTEND bs=2 toks=300]", "execute_300_context_2_generation_0", 10, 80),
        (2000, 40, "step[DECODE bs=2]", "execute_2_context_0_generation_2(sq2sk600sqsq2sqsk600)", 5, 50),
        (3000, 50, "step[DECODE bs=2]", "execute_2_context_0_generation_2(sq2sk602sqsq2sqsk602)", 0, 50),
        (4000, 30, "step[DECODE bs=3 toks=3]", None, 0, 0),
    ]
    for ts, dur, name, inner, off, idur in steps:
        corr += 1
        events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": dur})
        if inner:
            events.append({"ph": "X", "cat": "user_annotation", "name": inner, "pid": 7, "tid": 8,
                           "ts": ts + off, "dur": idur})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
                       "ts": ts + 1, "dur": 2, "args": {"correlation": corr}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts + 5, "dur": 10,
                       "args": {"correlation": corr, "device": 0, "stream": 7}})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sglang_synthetic.trace.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        r = report(tg, path)
    rows = r["iteration_table"]
    check("sglang: steps", [(x["step_kind"], x["tokens"], x["prefill_requests"], x["decode_requests"])
                            for x in rows],
          [("prefill", 300, 2, 0), ("decode", 2, 0, 2), ("decode", 2, 0, 2), ("decode", 3, 0, 3)])
    check("sglang: decode_context_tokens", [x["decode_context_tokens"] for x in rows], [None, 600, 602, None])
    check("sglang: step_form", r["iteration_source"]["step_form"], "vllm+sglang")
    # The second step's execute_ ends 15 us after its step[...]: one step to the later end.
    check("sglang: second step's host span us", rows[1]["host_step_ms"], 0.055)
    groups = r["serving"]["groups"]
    check("sglang: groups", [(g["kind"], g["token_bucket_min"], g["count"], g["tokens"]) for g in groups],
          [("prefill", 256, 1, 300), ("decode", 2, 3, 7)])
    print(f"sglang synthetic: {len(rows)} steps, groups {[(g['kind'], g['count']) for g in groups]}")


failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: report {got!r}, raw JSON {want!r}")


def replay(tg, path):
    events = load(path)
    steps = []
    for e in events:
        if e.get("cat") == "user_annotation" and e.get("ph") == "X":
            m = VLLM.match(e.get("name", ""))
            if m:
                steps.append((int(m.group(1)), int(m.group(2)), int(m.group(4))))
    if len(steps) != 1:
        failures.append(f"expected one vLLM step annotation in the raw trace, found {len(steps)}")
        return
    tokens, prefill, decode = steps[0]
    if prefill != 0 or decode != 32:
        failures.append(f"the raw step is not a decode step of 32 requests: {steps[0]}")
    calls = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], e.get("name", ""))
    total = graph = graph_kernels = 0
    launches = set()
    for e in events:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        d = ns(e["dur"])
        total += d
        corr = e.get("args", {}).get("correlation")
        if GRAPH_LAUNCH.match(calls.get(corr, "")):
            graph += d
            graph_kernels += 1
            launches.add(corr)
    r = report(tg, path)
    rows = r["iteration_table"]
    check("iterations", len(rows), 1)
    if rows:
        row = rows[0]
        check("step_kind", row.get("step_kind"), "decode")
        check("decode_requests", row.get("decode_requests"), decode)
        check("prefill_requests", row.get("prefill_requests"), prefill)
        check("tokens", row.get("tokens"), tokens)
    check("iteration_source.step_form", r["iteration_source"].get("step_form"), "vllm")
    sv = r.get("serving") or {}
    check("serving.steps", sv.get("steps"), 1)
    groups = sv.get("groups", [])
    check("serving groups", [(g["kind"], g["count"], g["tokens"]) for g in groups], [("decode", 1, tokens)])
    g = sv.get("graph_replay", {})
    check("graph_replay.kernel_ns", g.get("kernel_ns"), graph)
    check("graph_replay.total_kernel_ns", g.get("total_kernel_ns"), total)
    check("graph_replay.kernels", g.get("kernels"), graph_kernels)
    check("graph_replay.launches", g.get("launches"), len(launches))
    check("graph_replay.kernel_time_ratio", g.get("kernel_time_ratio"), graph / total)
    check("kernels.total_ns", r["kernels"]["total_ns"], total)
    md_path = os.path.join(OUT, "replay.md")
    subprocess.run([tg, "analyze", path, "-q", "--md", md_path], check=True, stdout=subprocess.DEVNULL)
    with open(md_path) as f:
        md = f.read()
    for line in ("<summary>Serving steps</summary>", "| decode | 32-63 | 1 |",
                 f"Graph replays: {100 * graph / total:.1f}% of kernel time ({graph_kernels} kernels from 1 graph launch)."):
        if line not in md:
            failures.append(f"the Markdown report has no line {line!r}")
    print(f"replay: 1 decode step, {decode} decode requests, {tokens} tokens; graph replays "
          f"{graph} of {total} kernel ns ({graph_kernels} kernels, {len(launches)} launch) = {graph / total!r}")


def capture(tg, path):
    events = load(path)
    names = [e["name"] for e in events if e.get("cat") == "user_annotation" and e.get("ph") == "X"
             and CAPTURE.match(e.get("name", "")) and e.get("dur", 0) >= 0]
    r = report(tg, path)
    sv = r.get("serving") or {}
    check("capture: serving.capture_steps", sv.get("capture_steps"), len(names))
    check("capture: serving.steps", sv.get("steps"), 0)
    check("capture: step_form", r["iteration_source"].get("step_form"), None)
    print(f"capture: {len(names)} capture annotations {sorted(set(names))}, no steps")


def trtllm(tg):
    """A hand-made TensorRT-LLM trace: NVTX-style step ranges of both forms (the PyTorch executor's
    `[Executor] _forward_step N: P ctx reqs, D gen reqs`, the C++ batch manager's `executeStep: ...`),
    each launching one kernel. Kinds from the request counts, tokens unknown (null), and the
    groups by kind with no token bucket."""
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 7, "ts": 1, "dur": 1}]
    names = [f"[Executor] _forward_step {i}: {1 if i % 4 == 0 else 0} ctx reqs, 16 gen reqs" for i in range(8)]
    names += ["executeStep: 2 ctx reqs, 0 gen reqs", "executeStep: 0 ctx reqs, 5 gen reqs"]
    for i, name in enumerate(names):
        ts = 1000 + 1000 * i
        events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": 500})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": ts + 10,
                       "dur": 5, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts + 20, "dur": 400,
                       "args": {"correlation": i + 1, "device": 0, "stream": 7}})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trtllm_synthetic.trace.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        r = report(tg, path)
    rows = r["iteration_table"]
    want = []
    for name in names:
        m = re.search(r"(\d+) ctx reqs, (\d+) gen reqs$", name)
        p, g = int(m.group(1)), int(m.group(2))
        want.append(("mixed" if p and g else "prefill" if p else "decode", None, p, g))
    check("trtllm: steps", [(x["step_kind"], x["tokens"], x["prefill_requests"], x["decode_requests"]) for x in rows],
          want)
    check("trtllm: step_form", r["iteration_source"]["step_form"], "trtllm")
    groups = r["serving"]["groups"]
    check("trtllm: groups", [(g["kind"], g["token_bucket_min"], g["count"], g["tokens"]) for g in groups],
          [("prefill", None, 1, None), ("decode", None, 7, None), ("mixed", None, 2, None)])
    print(f"trtllm synthetic: {len(rows)} steps, groups {[(g['kind'], g['count']) for g in groups]}")


def main():
    global OUT
    tg, shared = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        OUT = sys.argv[3]
    synthetic(tg)
    trtllm(tg)
    for name, fn in (("kineto_vllm_decode_graph_replay_mi300.json.gz", replay),
                     ("kineto_vllm_decode_graph_capture_mi300.json.gz", capture)):
        path = os.path.join(shared, name)
        if not os.path.exists(path):
            print(f"skip {name}: {shared} has no such file (../shared/traces absent)")
            continue
        fn(tg, path)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
