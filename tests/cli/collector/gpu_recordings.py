#!/usr/bin/env python3
"""The ResNet-50 recordings of the first GPU run (tests/fixtures/gpu/resnet50_{eager,compile}_b32.db)
against a recomputation in plain Python / SQL from the .db files (not tracegate's code):

  - iterations: the outermost NVTX ranges whose names match the default iteration regex. GPU work
    (kernels, copies, memsets) belongs to the range that contains the start of the API call that
    launched it (same process, same correlation id). A span runs from the range's start to the
    later of its end and its work's end, and starts no earlier than the previous span ends; the
    latency is the span's length.
  - warm-up (docs/RULES.md, "Warm-up iterations"), by brute force: the longest prefix of w
    iterations, 1 <= w <= min(n // 2, n - 3), each more than 2x the median of the other n - w.
  - analyze (default --skip auto, and --skip 0): iteration_source.skipped and warmup (dropped
    indexes, names, latencies, median), latency_samples_ms (the kept spans, separated again from
    the first kept one), the text / Markdown / HTML warm-up line; the idle finding's gaps lie in
    the kept spans.
  - compare eager -> compile: the per-iteration GPU time and launches of the kernel families
    torch.compile removed (cuDNN's bn_fw_inf, PyTorch's element-wise add and clamp (relu)) and
    added (Inductor's triton_poi_fused_..._add_relu_N), over the kernels of the kept iterations;
    the text and Markdown name them and say that both sides had warm-up dropped.
Usage: gpu_recordings.py TRACEGATE DIR   (DIR holds the .db files; outputs are written there)
On a GPU, fresh recordings of tests/gpu/resnet50_infer.py (named as above) are checked the same
way with GPU_RECORDINGS_ANY_WARMUP=1 (their warm-up may be longer than iteration 0).
Exit 1 with one line per failed check.
"""
import html
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys

ITERATION = re.compile(r"^(ProfilerStep#\d+|iter(ation)?([ _#:-]*\d+)?|step[ _#:-]*\d+)$", re.I)
TOL = 1e-9
bad = []


def check(ok, what):
    if not ok:
        bad.append(what)


def pid_of(global_id):
    return (global_id >> 24) & 0xFFFFFF


def iterations(db):
    """(name, marker start, marker end, work end) of every iteration, by start; and the kernels'
    (iteration or None, name, start, end) rows."""
    con = sqlite3.connect(db)
    strings = dict(con.execute("SELECT id, value FROM StringIds"))
    ranges = []
    for start, end, text, text_id, tid in con.execute("SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS"):
        name = text if text is not None else strings.get(text_id, "")
        if end is not None and end > start and ITERATION.search(name):
            ranges.append((start, end, name, pid_of(tid)))
    outer = [r for r in ranges if not any(o is not r and o[3] == r[3] and o[0] <= r[0] and r[1] <= o[1]
                                          and (o[0], -o[1]) < (r[0], -r[1]) for o in ranges)]
    outer.sort()
    assert len({r[3] for r in outer}) == 1, "one process with markers expected"
    pid = outer[0][3]
    calls = {(pid_of(t), c): s for s, t, c in
             con.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")}

    def owner(t):
        for i, (s, e, _, _) in enumerate(outer):
            if s <= t < e:
                return i
        return None

    ends = [r[1] for r in outer]
    kernels = []
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        name_col = "demangledName" if table.endswith("KERNEL") else "0"
        for s, e, gpid, corr, name in con.execute(f"SELECT start, end, globalPid, correlationId, {name_col} FROM {table}"):
            call = calls.get((pid_of(gpid), corr))
            if pid_of(gpid) != pid:
                it = None  # another process's work
            elif call is not None:
                it = owner(call)
            else:
                it = owner(s)
                if it is None and e > s:
                    it = owner(e - 1)
            if it is not None:
                ends[it] = max(ends[it], e)
            if table.endswith("KERNEL"):
                kernels.append((it, strings.get(name, ""), s, e))
    return [(r[2], r[0], r[1], ends[i]) for i, r in enumerate(outer)], kernels


def spans(its):
    out, prev = [], None
    for _, start, _, end in its:
        s = start if prev is None else max(start, prev)
        e = max(end, s)
        out.append((s, e))
        prev = e
    return out


def warmup(lat):
    n, best = len(lat), 0
    if n < 4:
        return 0, None
    for w in range(1, min(n // 2, n - 3) + 1):
        if all(x > 2 * statistics.median(lat[w:]) for x in lat[:w]):
            best = w
    return best, statistics.median(lat[best:] if best else lat[1:])


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def close(a, b, what):
    check(abs(a - b) <= TOL * max(1.0, abs(b)), f"{what}: tracegate {a!r}, recomputed {b!r}")


def check_analyze(tg, d, name):
    db = os.path.join(d, name + ".db")
    its, _ = iterations(db)
    lat = [e - s for s, e in spans(its)]
    w, median = warmup(lat)
    # The shipped recordings drop iteration 0 alone; a fresh recording (GPU_RECORDINGS_ANY_WARMUP=1)
    # may drop more, and is then checked against the recomputation all the same.
    check(w == 1 or (w >= 1 and os.environ.get("GPU_RECORDINGS_ANY_WARMUP")),
          f"{name}: recomputed warm-up {w}, expected iteration 0 alone")
    kept = spans(its[w:])
    out = os.path.join(d, name)
    text = run(tg, "analyze", db, "-o", out + ".json", "--md", out + ".md", "--html", out + ".html")
    run(tg, "analyze", db, "--skip", "0", "-q", "-o", out + ".all.json")
    r = json.load(open(out + ".json"))
    src = r["iteration_source"]
    check(src["found"] == len(its) and src["skipped"] == w, f"{name}: found/skipped {src['found']}/{src['skipped']}")
    wj = src["warmup"]
    check(wj["mode"] == "auto" and wj["factor"] == 2, f"{name}: warmup mode/factor {wj['mode']}/{wj['factor']}")
    close(wj["median_ms"], median / 1e6, f"{name}: warm-up median")
    check([x["index"] for x in wj["dropped"]] == list(range(w)), f"{name}: dropped {wj['dropped']}")
    for x, (nm, s, _, _), l in zip(wj["dropped"], its, lat):
        check(x["name"] == nm, f"{name}: dropped name {x['name']} != {nm}")
        close(x["latency_ms"], l / 1e6, f"{name}: dropped latency")
    samples = r["latency_samples_ms"]
    check(len(samples) == len(kept), f"{name}: {len(samples)} samples, {len(kept)} kept")
    for a, (s, e) in zip(samples, kept):
        close(a, (e - s) / 1e6, f"{name}: kept latency")
    close(r["avg_latency_ms"], statistics.mean((e - s) for s, e in kept) / 1e6, f"{name}: avg_latency_ms")
    r0 = json.load(open(out + ".all.json"))
    check(r0["iteration_source"]["skipped"] == 0 and r0["iteration_source"]["warmup"]["mode"] == "fixed",
          f"{name}: --skip 0 dropped {r0['iteration_source']['skipped']}")
    for a, b in zip(r0["latency_samples_ms"], lat):
        close(a, b / 1e6, f"{name}: --skip 0 latency")
    first = "the first" if w == 1 else f"the first {w}"
    line = f"dropped {first} of {len(its)} iterations (--skip auto): {its[0][0]} {lat[0] / 1e6:.3f} ms"
    check(line in wj["summary"], f"{name}: summary {wj['summary']!r}")
    check("warm-up: " + wj["summary"] in text, f"{name}: text report lacks the warm-up line")
    md = open(out + ".md").read()
    check(f"**Warm-up** {line}"
          in md, f"{name}: Markdown lacks the warm-up row")
    check(html.escape(wj["summary"], quote=False) in open(out + ".html").read() or wj["summary"] in
          open(out + ".html").read(), f"{name}: HTML lacks the warm-up summary")
    # Every gap the idle finding names lies inside the kept spans.
    for f in r["findings"]:
        if f["id"] != "idle_gaps":
            continue
        for g in r["devices"][0]["gaps"]["in_iterations"]["largest"]:
            s, e = g["start_ns"], g["start_ns"] + g["duration_ns"]
            check(any(a <= s and e <= b for a, b in kept), f"{name}: idle gap [{s}, {e}) outside the kept spans")
        for v in f["involved"]:
            check(v["time_ms"] * 1e6 <= max(e - s for s, e in kept), f"{name}: idle finding names a {v['time_ms']} ms gap")
    return its, w


def family(name):
    """Independent of tracegate's family names: substrings of the raw demangled names."""
    if "bn_fw_inf_1C11_kernel_NCHW" in name:
        return "cudnn::bn_fw_inf_1C11_kernel_NCHW"
    if "vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>" in name:
        return "at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>"
    if name.startswith("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar"):
        return "at::native::vectorized_elementwise_kernel<launch_clamp_scalar>"
    if re.fullmatch(r"triton_poi_fused__native_batch_norm_legit_no_training_add_relu_\d+", name):
        return "triton_poi_fused__native_batch_norm_legit_no_training_add_relu_*"
    return None


def per_iteration(d, name, w):
    its, kernels = iterations(os.path.join(d, name + ".db"))
    kept = len(its) - w
    ms, launches = {}, {}
    for it, nm, s, e in kernels:
        f = family(nm)
        if f is None or it is None or it < w:
            continue
        ms[f] = ms.get(f, 0) + (e - s) / 1e6 / kept
        launches[f] = launches.get(f, 0) + 1 / kept
    return ms, launches


def check_compare(tg, d, w_eager, w_compile):
    eager, comp = (os.path.join(d, n + ".db") for n in ("resnet50_eager_b32", "resnet50_compile_b32"))
    out = os.path.join(d, "compare")
    text = run(tg, "compare", eager, comp, "--json", out + ".json", "--md", out + ".md")
    c = json.load(open(out + ".json"))
    fams = {f["name"]: f for f in c["kernel_families"]}
    base_ms, base_n = per_iteration(d, "resnet50_eager_b32", w_eager)
    new_ms, new_n = per_iteration(d, "resnet50_compile_b32", w_compile)
    md = open(out + ".md").read()
    for name, change in (("cudnn::bn_fw_inf_1C11_kernel_NCHW", "removed"),
                         ("at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>", "removed"),
                         ("at::native::vectorized_elementwise_kernel<launch_clamp_scalar>", "removed"),
                         ("triton_poi_fused__native_batch_norm_legit_no_training_add_relu_*", "added")):
        f = fams.get(name)
        if f is None:
            bad.append(f"compare: family {name} not in kernel_families")
            continue
        check(f["change"] == change, f"compare: {name} {f['change']}, expected {change}")
        close(f["base_ms_per_iteration"], base_ms.get(name, 0), f"compare: {name} base ms/iter")
        close(f["new_ms_per_iteration"], new_ms.get(name, 0), f"compare: {name} new ms/iter")
        close(f["base_launches_per_iteration"], base_n.get(name, 0), f"compare: {name} base launches/iter")
        close(f["new_launches_per_iteration"], new_n.get(name, 0), f"compare: {name} new launches/iter")
        check(name in text, f"compare: the text output does not name {name}")
        # A row of the families' table (a long name cut to 56 characters in the middle, its
        # variants as xN), and the whole name in the folded full names.
        short = name if len(name) <= 56 else name[:26] + "..." + name[-27:]
        check(re.search(r"^\| `" + re.escape(short) + r"`( ×\d+)? \| " + change + r" \|", md, re.M) is not None
              and f"`{name}`" in md, f"compare: the Markdown does not list {name} as {change}")
    for side, w in (("base", w_eager), ("new", w_compile)):
        check(c[side]["warmup_skipped"] == w, f"compare: {side} warm-up {c[side]['warmup_skipped']}")
        check(f"warm-up, {side}: dropped the first" in text, f"compare: text lacks the {side} warm-up line")
        check(f"Warm-up, {side}: dropped the first" in md, f"compare: Markdown lacks the {side} warm-up line")
    check(f"{w_eager} warm-up dropped" in text.splitlines()[1], "compare: the base line does not say warm-up was dropped")


def main():
    tg, d = sys.argv[1], sys.argv[2]
    _, w_eager = check_analyze(tg, d, "resnet50_eager_b32")
    _, w_compile = check_analyze(tg, d, "resnet50_compile_b32")
    check_compare(tg, d, w_eager, w_compile)
    for b in bad:
        print("FAIL:", b)
    print(f"gpu_recordings.py: {len(bad)} failed checks")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
