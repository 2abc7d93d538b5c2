#!/usr/bin/env python3
"""One case of predict_pairs.sh: the replay's predicted gain against the gain measured between
before and after recordings of the mini model, read with plain SQL (not tracegate's code).

measured: the mean duration of the NVTX ranges named "iteration" (the model's measured iterations;
warm-up ones are named "warmup") over the before runs, over the same for the after runs.
predicted: base_latency_ms / predicted_latency_ms of `tracegate predict --json` (its replay), and
amdahl_speedup from the same JSON.
Goal: |predicted gain - measured gain| <= 20% of |measured gain| (gain = speedup - 1); when
|measured gain| < 2%, <= 1% (of the step) instead.

Prints one line per case: case, S, measured, predicted, Amdahl, error, verdict. Exit 0 when the goal
holds, 1 when not, 2 on unreadable input (one line naming the file).
"""
import argparse
import json
import sqlite3
import statistics
import sys


class InputError(Exception):
    pass


def iteration_ns(path):
    """Durations (ns) of the NVTX ranges named "iteration": the name inline (text) or in StringIds."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = con.execute(
            "SELECT n.\"end\" - n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "WHERE COALESCE(n.text, s.value) = 'iteration' AND n.\"end\" > n.start").fetchall()
    except sqlite3.Error as e:
        raise InputError(f"predict_pairs.py: {path}: not a tracegate recording ({e})") from None
    if not rows:
        raise InputError(f"predict_pairs.py: {path}: no NVTX range named 'iteration'")
    return [r[0] for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--speedup", type=float, required=True)
    ap.add_argument("--prediction", required=True)
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    a = ap.parse_args()
    try:
        p = json.load(open(a.prediction))
    except (OSError, ValueError) as e:
        print(f"predict_pairs.py: {a.prediction}: {e}")
        return 2
    try:
        before = statistics.mean(v for f in a.before for v in iteration_ns(f))
        after = statistics.mean(v for f in a.after for v in iteration_ns(f))
    except InputError as e:
        print(e)
        return 2
    measured = before / after
    predicted = p["base_latency_ms"] / p["predicted_latency_ms"]
    amdahl = p.get("amdahl_speedup")
    mg, pg = measured - 1, predicted - 1
    err = abs(pg - mg)
    small = abs(mg) < 0.02
    ok = err <= (0.01 if small else 0.2 * abs(mg))
    basis = "1% of the step (measured gain under 2%)" if small else f"20% of the measured gain ({0.2 * abs(mg) * 100:.2f} points)"
    print(f"{a.case}: S {a.speedup:g}; measured {before / 1e6:.3f} -> {after / 1e6:.3f} ms/iteration "
          f"(gain {mg * 100:+.2f}%); replay gain {pg * 100:+.2f}%; Amdahl "
          f"{'n/a' if amdahl is None else f'{(amdahl - 1) * 100:+.2f}%'}; error {err * 100:.2f} points, "
          f"allowed {basis}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
