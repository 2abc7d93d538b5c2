#!/usr/bin/env python3
"""The host_gap knob's check (reference_workloads.sh step 4): the GPU idle time the knob adds.

The mini model is host-bound on the H200's VM (about 1 ms of GPU work in a 4 ms iteration at batch
32), so `idle_gaps` fires with the knob off too: "the finding exactly when the knob is on" cannot
hold. What the knob does is specific: it busy-waits host_gap_us before each of N launches per
iteration (tracegate-model prints "host gap: G us before each of N launches per iteration (X ms
...)"). The GPU then idles for that wait minus the work still queued when it began (the previous
layer's kernels), so tracegate's idle time per iteration must grow by between --min (0.5) and
--max (1.05) of the injected X ms: never more than the host added (the 5% is noise), and at least
half of it (a layer's GPU time at batch 32 is well under half of a 200 us gap).

Idle per iteration from a report: phases.idle.mean_ms (the instants of an iteration with no GPU
work of any iteration, outside pre/post: what idle_gaps reports).

Usage: knob_idle.py ON.json OFF.json MODEL_ON.txt [--min 0.5] [--max 1.05]
Exit 0: within bounds and idle_gaps reported with the knob on; 1: not; 2: unreadable input.
"""
import argparse
import json
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: {e}")


def idle_ms(doc):
    """(idle ms per iteration: the report's idle phase mean, idle_gaps reported)."""
    ms = doc["phases"]["idle"]["mean_ms"]
    if not isinstance(ms, (int, float)):
        raise ValueError("no idle phase mean_ms")
    return float(ms), any(f.get("id") == "idle_gaps" for f in doc.get("findings", []))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("on")
    ap.add_argument("off")
    ap.add_argument("model_on")
    ap.add_argument("--min", type=float, default=0.5)
    ap.add_argument("--max", type=float, default=1.05)
    a = ap.parse_args(argv)
    try:
        text = open(a.model_on).read()
    except OSError as e:
        print(f"knob_idle.py: {a.model_on}: {e}", file=sys.stderr)
        return 2
    m = re.search(r"host gap: (\d+) us before each of (\d+) launches per iteration", text)
    if not m:
        print(f"knob_idle.py: {a.model_on}: no 'host gap: ... launches per iteration' line", file=sys.stderr)
        return 2
    gap_us, sites = int(m.group(1)), int(m.group(2))
    injected = gap_us * sites / 1000.0
    try:
        on, on_found = idle_ms(load(a.on))
        off, _ = idle_ms(load(a.off))
    except (ValueError, KeyError, TypeError) as e:
        print(f"knob_idle.py: {a.on} / {a.off}: {e!s}", file=sys.stderr)
        return 2
    added = on - off
    ratio = added / injected if injected > 0 else float("inf")
    ok = on_found and a.min <= ratio <= a.max
    print(f"host_gap: GPU idle {off:.3f} -> {on:.3f} ms per iteration (+{added:.3f} ms) for {sites} x {gap_us} us = "
          f"{injected:.3f} ms of host gaps: {100 * ratio:.0f}% of them (goal {100 * a.min:.0f}-{100 * a.max:.0f}%); "
          f"idle_gaps reported with the knob on: {on_found}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
