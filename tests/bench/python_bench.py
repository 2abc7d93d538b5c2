#!/usr/bin/python3
"""The Python module against the CLI on the generated 10^6-event Kineto file (docs/PERFORMANCE.md,
"The Python module"). Goals (issue 21): tracegate.load + analyze within 10% of `tracegate analyze`,
and the kernel table as a DataFrame at >= 10 M rows/s.

    PYTHONPATH=build/python /usr/bin/python3 tests/bench/python_bench.py [BUILD] [EVENTS] [RUNS]

BUILD (default build) holds tracegate, tracegate-gen-kineto and python/; EVENTS default 10^6;
each measurement is the best of RUNS (default 5), the CLI and Python runs alternated so that both
see the same load. The input is generated into $TRACEGATE_BENCH_DIR/gen<N> (default
/tmp/tracegate-bench/gen<N>) as compare_tools.sh does.
"""

import os
import re
import subprocess
import sys
import tempfile
import time


def main(build="build", events="1000000", runs="5"):
    events, runs = int(events), int(runs)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(build, "python"))
    import tracegate as tg

    with open(os.path.join(here, "gen_kineto.h")) as f:
        gen = re.search(r"kGeneratorVersion = (\d+);", f.read()).group(1)
    bench_dir = os.path.join(os.environ.get("TRACEGATE_BENCH_DIR", "/tmp/tracegate-bench"), "gen" + gen)
    os.makedirs(bench_dir, exist_ok=True)
    trace = os.path.join(bench_dir, f"kineto_{events}.json")
    if not os.path.exists(trace):
        subprocess.run([os.path.join(build, "tracegate-gen-kineto"), "--events", str(events), "-o", trace], check=True)
    cli = os.path.join(build, "tracegate")
    out = tempfile.mkdtemp()

    def timed(f):
        t0 = time.perf_counter()
        r = f()
        return time.perf_counter() - t0, r

    def run_cli(*extra):
        subprocess.run([cli, "analyze", trace, "-q", "--commit", "bench", *extra], check=True,
                       stdout=subprocess.DEVNULL)

    results = {k: [] for k in ("cli", "cli_o", "py_load_analyze", "py_file", "py_write", "py_dict")}
    load = os.getloadavg()
    for _ in range(runs):
        results["cli"].append(timed(run_cli)[0])
        results["cli_o"].append(timed(lambda: run_cli("-o", os.path.join(out, "cli.json")))[0])
        s, report = timed(lambda: tg.analyze(tg.load(trace), commit="bench"))
        results["py_load_analyze"].append(s)
        results["py_file"].append(timed(lambda: tg.analyze(trace, commit="bench"))[0])
        results["py_write"].append(timed(lambda: report.write_json(os.path.join(out, "py.json")))[0])
        results["py_dict"].append(timed(lambda: tg.analyze(trace, commit="bench").dict)[0])
        del report
    t = tg.load(trace)
    rows = t.counts["kernels"]
    frames = [timed(lambda: t.kernels)[0] for _ in range(runs)]
    all_tables = [timed(lambda: [t.table(n) for n in tg.TABLES])[0] for _ in range(runs)]
    load_after = os.getloadavg()
    best = {k: min(v) for k, v in results.items()}

    size_mb = os.path.getsize(trace) / 1e6
    print(f"input: {trace} ({size_mb:.1f} MB, {sum(t.counts.values()):,} kept events, {rows:,} kernels)")
    print(f"load average before {load[0]:.2f} {load[1]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f}; "
          f"best of {runs}")
    print("| measurement | time | vs the CLI |")
    print("| --- | --- | --- |")
    cli_s = best["cli"]
    print(f"| `tracegate analyze -q` (process, load + analysis) | {cli_s:.3f} s | 1.00x |")
    print(f"| `tracegate analyze -q -o report.json` | {best['cli_o']:.3f} s | {best['cli_o'] / cli_s:.2f}x |")
    print(f"| `tracegate.analyze(tracegate.load(f))` (the report document built; its iteration rows on first read) | {best['py_load_analyze']:.3f} s | "
          f"{best['py_load_analyze'] / cli_s:.2f}x |")
    print(f"| `tracegate.analyze(f)` | {best['py_file']:.3f} s | {best['py_file'] / cli_s:.2f}x |")
    print(f"| `tracegate.analyze(f).dict` (the document as Python objects) | {best['py_dict']:.3f} s | "
          f"{best['py_dict'] / cli_s:.2f}x |")
    print(f"| `report.write_json(path)` | {best['py_write']:.3f} s | |")
    print(f"| `trace.kernels` ({rows:,} rows x {len(t.columns('kernels'))} columns) | {min(frames) * 1e3:.1f} ms | "
          f"{rows / min(frames) / 1e6:.1f} M rows/s |")
    print(f"| every table as a DataFrame ({sum(t.counts.values()):,} rows) | {min(all_tables) * 1e3:.1f} ms | "
          f"{sum(t.counts.values()) / min(all_tables) / 1e6:.1f} M rows/s |")
    ratio = best["py_load_analyze"] / cli_s
    rate = rows / min(frames) / 1e6
    print(f"goals: load + analyze {ratio:.2f}x the CLI (<= 1.10: {'met' if ratio <= 1.10 else 'MISSED'}); "
          f"kernel DataFrame {rate:.1f} M rows/s (>= 10: {'met' if rate >= 10 else 'MISSED'})")
    return 0 if ratio <= 1.10 and rate >= 10 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
