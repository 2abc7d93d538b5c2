#!/usr/bin/env python3
"""A real Kineto trace repeated end to end, as a large trace of its own shape (a shape kept aside).

    tests/bench/scale_trace.py IN.json[.gz] OUT.json --copies N

Copy k of the trace's events starts 1 ms after copy k-1 ends: every "ts" moves by k times (the
trace's span + 1 ms), and every id that ties events together moves by k times (its largest value
+ 1) so no two copies share one: flows' "id", and in "args" the correlation ("correlation",
"cid"), "External id", "Python id", "Python parent id", "Record function id" and "Ev Idx". Numbers
are read and written as their decimal text (no float rounding: a 16-digit timestamp stays
exact). The other top-level members are written once. Deterministic: the same input and N give
the same bytes.
"""
import argparse
import decimal
import gzip
import json
import os
import sys

ARG_IDS = ("correlation", "cid", "External id", "Python id", "Python parent id", "Record function id", "Ev Idx")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def encode(v, out):
    if isinstance(v, dict):
        out.append("{")
        for i, (k, x) in enumerate(v.items()):
            if i:
                out.append(", ")
            out.append(json.dumps(k))
            out.append(": ")
            encode(x, out)
        out.append("}")
    elif isinstance(v, list):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(", ")
            encode(x, out)
        out.append("]")
    elif isinstance(v, decimal.Decimal):
        out.append(str(v))
    else:  # str, int, bool, None
        out.append(json.dumps(v))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--copies", type=int, required=True)
    a = p.parse_args()
    if a.copies < 1:
        sys.exit("scale_trace.py: --copies must be at least 1")
    doc = load(a.input)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list) or not events:
        sys.exit(f"scale_trace.py: {a.input}: no traceEvents array")
    timed = [e for e in events if isinstance(e, dict) and "ts" in e]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + e.get("dur", 0) for e in timed)
    shift = end - start + 1000  # us
    top_ids = [e["id"] for e in events if isinstance(e, dict) and isinstance(e.get("id"), int)]
    id_step = max(top_ids, default=0) + 1
    arg_step = {}
    for e in events:
        args = e.get("args") if isinstance(e, dict) else None
        if isinstance(args, dict):
            for k in ARG_IDS:
                if isinstance(args.get(k), int):
                    arg_step[k] = max(arg_step.get(k, 0), args[k] + 1)
    # The output's folder made when missing; written to a temporary name, renamed when complete.
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    tmp = a.output + ".partial"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("{\n")
        for k, v in doc.items():
            if k == "traceEvents":
                continue
            out = [json.dumps(k), ": "]
            encode(v, out)
            f.write("  " + "".join(out) + ",\n")
        f.write('  "traceEvents": [\n')
        first = True
        for c in range(a.copies):
            for e in events:
                if isinstance(e, dict) and c:
                    e = dict(e)
                    if "ts" in e:
                        e["ts"] = e["ts"] + c * shift
                    if isinstance(e.get("id"), int):
                        e["id"] = e["id"] + c * id_step
                    if isinstance(e.get("args"), dict):
                        args = dict(e["args"])
                        for k, step in arg_step.items():
                            if isinstance(args.get(k), int):
                                args[k] = args[k] + c * step
                        e["args"] = args
                out = []
                encode(e, out)
                f.write(("  " if first else ",\n  ") + "".join(out))
                first = False
        f.write("\n  ]\n}\n")
    os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
