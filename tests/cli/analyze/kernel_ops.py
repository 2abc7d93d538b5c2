#!/usr/bin/env python3
"""The report's kernel `op` against the raw JSON: an independent recomputation (not tracegate's code).

For every Kineto trace given that has cpu_op events, each kernel's launch is the runtime/driver
call with the same `correlation` in its args (the first such call in the file when several
processes reuse the id; the kernel's own args `pid`, when present, picks the process); its op is
the innermost cpu_op on that call's pid/tid whose [ts, ts + dur) contains the call's ts (the one
that starts last; of two that start together, the shorter). Per kernel name, the op most of its
launches have (ties: the op whose name sorts first), None when none has one. Checks, for every
row of the report's kernel_table and top_kernels:
  - `op` equals that op (null, with an `op_reason`, when it is None);
  - `class` is there.
Report names are demangled: a raw name that is not among them is matched through c++filt (a
row whose name is a raw name is that name).
Usage: kernel_ops.py TRACEGATE TRACE... (exit 1 on a mismatch). Traces without cpu_op events
are skipped with a printed reason.
"""
import bisect
import collections
import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile

CPU_OP = {"cpu_op", "Operator"}
CALLS = {"cuda_runtime", "Runtime", "cuda_driver", "Driver"}
KERNELS = {"kernel", "Kernel"}


def ns(value):
    return decimal.Decimal(str(value)) * 1000


def expected_ops(path):
    """{raw kernel name: most frequent op or None}, or None when the trace has no cpu_op."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    ops = collections.defaultdict(list)  # (pid, tid) -> [(start, -end, name)]
    calls = {}  # correlation -> [(pid, tid, ts)] in file order
    kernels = []  # (name, correlation, pid or None)
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cat in CPU_OP:
            start = ns(e["ts"])
            ops[(e.get("pid"), e.get("tid"))].append((start, start + ns(e.get("dur", 0)), e.get("name", "")))
        elif cat in CALLS and "correlation" in args:
            calls.setdefault(args["correlation"], []).append((e.get("pid"), e.get("tid"), ns(e["ts"])))
        elif cat in KERNELS:
            kernels.append((e.get("name", ""), args.get("correlation"), args.get("pid")))
    if not ops:
        return None
    starts, reach = {}, {}
    for key, v in ops.items():
        v.sort(key=lambda o: (o[0], -o[1]))  # by start, the outer first (stable: file order)
        starts[key] = [o[0] for o in v]
        reach[key], most = [], None  # the latest end among ops[0..i]
        for o in v:
            most = o[1] if most is None else max(most, o[1])
            reach[key].append(most)

    def innermost(pid, tid, t):
        v = ops.get((pid, tid))
        if not v:
            return None
        # Of the ops that start at or before t, the last one in that order still open at t;
        # none before j is open once the latest end among ops[0..j] is at or before t.
        for j in range(bisect.bisect_right(starts[(pid, tid)], t) - 1, -1, -1):
            if reach[(pid, tid)][j] <= t:
                return None
            if v[j][1] > t:
                return v[j][2]
        return None

    counts = collections.defaultdict(collections.Counter)
    seen = set()
    for name, corr, pid in kernels:
        seen.add(name)
        candidates = calls.get(corr, [])
        if pid is not None and any(c[0] == pid for c in candidates):
            candidates = [c for c in candidates if c[0] == pid]
        if not candidates:
            continue
        op = innermost(*candidates[0])
        if op is not None:
            counts[name][op] += 1
    out = {}
    for name in seen:
        c = counts.get(name)
        out[name] = min(c, key=lambda op: (-c[op], op)) if c else None
    return out


def demangled(names):
    todo = [n for n in names if n.startswith("_Z")]
    if not todo:
        return {}
    run = subprocess.run(["c++filt"], input="\n".join(todo) + "\n", capture_output=True, text=True, check=True)
    return dict(zip(todo, run.stdout.splitlines()))


def main():
    tg, traces = sys.argv[1], sys.argv[2:]
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in traces:
            ops = expected_ops(path)
            label = os.path.basename(path)
            if ops is None:
                print(f"skip {label}: no cpu_op events")
                continue
            # Merge the raw names that demangle alike (the report's rows are demangled names).
            by_report_name = collections.defaultdict(list)
            names = demangled(ops)
            for raw in ops:
                by_report_name[names.get(raw, raw)].append(raw)
            report = os.path.join(tmp, "report.json")
            subprocess.run([tg, "analyze", path, "-o", report, "-q"], check=True)
            with open(report) as f:
                doc = json.load(f)
            rows = [("kernel_table", r) for r in doc.get("kernel_table", [])] + \
                   [("top_kernels", r) for r in doc.get("top_kernels", [])]
            linked = 0
            for section, row in rows:
                # A name tracegate leaves mangled (its demangler does not know it) is a raw name.
                raws = [row["name"]] if row["name"] in ops else by_report_name.get(row["name"])
                if raws is None:
                    print(f"FAIL {label}: {section} row {row['name'][:80]!r} is no kernel name of the trace")
                    failures += 1
                    continue
                if len(raws) > 1:
                    print(f"skip {label}: {section} row {row['name'][:60]!r} merges {len(raws)} raw names")
                    continue
                want = ops[raws[0]]
                got = row.get("op", "absent")
                if got != want:
                    print(f"FAIL {label}: {section} {row['name'][:80]!r}: op {got!r}, raw trace says {want!r}")
                    failures += 1
                if got is None and not row.get("op_reason"):
                    print(f"FAIL {label}: {section} {row['name'][:80]!r}: null op without op_reason")
                    failures += 1
                if not row.get("class"):
                    print(f"FAIL {label}: {section} {row['name'][:80]!r}: no class")
                    failures += 1
                linked += want is not None
                checked += 1
            print(f"{label}: {len(rows)} rows, {linked} with an op")
    print(f"kernel_ops: {checked} rows checked, {failures} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
