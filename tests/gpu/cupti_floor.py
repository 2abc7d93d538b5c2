#!/usr/bin/env python3
"""The cost per call of each CUPTI feature: runs tests/gpu/cupti_floor once per configuration and
round, each in a fresh process, interleaved (round r starts at configuration r, so no
configuration always runs first), and writes the table as text and JSON.

Configurations: every one `cupti_floor --list` names (CUPTI set up in-process), and three through
tracegate's injection library as `tracegate record` uses it (the program with --config none):
tracegate_default (the default tier: the analysis' API calls with driver records),
tracegate_no_driver (the same without driver records; measured, not recommended: it loses cuBLAS
and Triton launch correlation) and tracegate_api_all (--api all).

Usage: cupti_floor.py BIN TRACEGATE OUT_DIR [--rounds 3] [--scale 1] [--budget-s 150] [--timeout-s 90]
Writes OUT_DIR/cupti_floor.json, OUT_DIR/cupti_floor.txt and OUT_DIR/cupti_floor.log (every
process's output). Exit 1 when a run failed (its cells say so), 0 otherwise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PREFIX = "cupti_floor "
TRACEGATE_CONFIGS = {
    "tracegate_default": [],
    "tracegate_no_driver": ["--no-driver-api"],
    "tracegate_api_all": ["--api", "all"],
}


def command(config, args, db):
    base = [args.bin, "--config", "none" if config in TRACEGATE_CONFIGS else config, "--scale", str(args.scale)]
    if config in TRACEGATE_CONFIGS:
        return [args.tracegate, "record", *TRACEGATE_CONFIGS[config], "-o", db, "--"] + base
    return base


def run_one(config, rnd, args, log):
    db = os.path.join(args.out, "floor_%s.db" % config)
    cmd = command(config, args, db)
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout_s)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timed out after %d s" % args.timeout_s, 124
    wall = time.monotonic() - start
    log.write("### %s round %d: %s (exit %d, %.1f s)\n%s%s\n" % (config, rnd, " ".join(cmd), rc, wall, out, err))
    if os.path.exists(db):
        os.remove(db)  # hundreds of thousands of launches: the figures are the result
    loops, extra = [], {}
    for line in out.splitlines():
        if not line.startswith(PREFIX):
            continue
        d = json.loads(line[len(PREFIX):])
        if "loop" in d:
            loops.append(d)
        else:
            extra = d
    return rc, loops, extra, wall


def fmt(v):
    return "%.3f" % v if v < 100 else "%.1f" % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("tracegate")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--budget-s", type=float, default=150.0, help="start no process after this many seconds")
    ap.add_argument("--timeout-s", type=int, default=90)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    listed = subprocess.run([args.bin, "--list"], capture_output=True, text=True, check=True).stdout.split()
    configs = listed + list(TRACEGATE_CONFIGS)
    runs, failures, extras, skipped = [], [], {}, []
    begin = time.monotonic()
    with open(os.path.join(args.out, "cupti_floor.log"), "w") as log:
        for rnd in range(args.rounds):
            for i in range(len(configs)):
                config = configs[(i + rnd) % len(configs)]
                if time.monotonic() - begin > args.budget_s:
                    skipped.append("%s round %d" % (config, rnd + 1))
                    continue
                rc, loops, extra, wall = run_one(config, rnd + 1, args, log)
                if rc != 0 or not loops:
                    failures.append("%s round %d: exit %d" % (config, rnd + 1, rc))
                for d in loops:
                    runs.append({"config": config, "round": rnd + 1, "loop": d["loop"], "calls": d["calls"],
                                 "seconds": d["seconds"], "us_per_call": d["us_per_call"], "unit": d["unit"],
                                 "wall_s": round(wall, 3)})
                if extra:
                    extras.setdefault(config, []).append(extra)
    loops = []
    for r in runs:
        if r["loop"] not in loops:
            loops.append(r["loop"])
    summary = {}
    for c in configs:
        for lp in loops:
            v = [r["us_per_call"] for r in runs if r["config"] == c and r["loop"] == lp]
            if v:
                summary.setdefault(c, {})[lp] = {"min": min(v), "median": statistics.median(v), "max": max(v),
                                                 "n": len(v)}
    for c, by_loop in summary.items():
        for lp, s in by_loop.items():
            base = summary.get("none", {}).get(lp)
            if base and c != "none":
                s["median_minus_none"] = s["median"] - base["median"]
                s["min_minus_none_min"] = s["min"] - base["min"]
    # The goal's yardstick: tracegate's default per launch against the in-process floor of the same
    # records (allowlist_kernel: launch records one cbid at a time + kernel records), its minimum.
    verdicts = []
    floor = summary.get("allowlist_kernel", {}).get("launch")
    tg = summary.get("tracegate_default", {}).get("launch")
    if floor and tg:
        ratio = tg["median"] / floor["min"]
        verdicts.append("launch: tracegate_default median %.3f us vs the floor (allowlist_kernel min) %.3f us: "
                        "%.2fx (goal <= 1.2x: %s)" % (tg["median"], floor["min"], ratio, "met" if ratio <= 1.2 else "NOT met"))
    result = {"rounds": args.rounds, "scale": args.scale, "configs": configs, "loops": loops, "summary": summary,
              "runs": runs, "records": extras, "failures": failures, "skipped_for_budget": skipped,
              "verdicts": verdicts}
    with open(os.path.join(args.out, "cupti_floor.json.tmp"), "w") as f:
        json.dump(result, f, indent=1)
    os.replace(os.path.join(args.out, "cupti_floor.json.tmp"), os.path.join(args.out, "cupti_floor.json"))
    lines = ["us per call, min/median over %d rounds (one process each, interleaved); scale %g" % (args.rounds, args.scale),
             "| configuration | " + " | ".join(loops) + " |", "| --- |" + " --- |" * len(loops)]
    for c in configs:
        cells = []
        for lp in loops:
            s = summary.get(c, {}).get(lp)
            cells.append("%s/%s" % (fmt(s["min"]), fmt(s["median"])) if s else "failed")
        lines.append("| %s | %s |" % (c, " | ".join(cells)))
    lines.append("")
    lines.append("median minus none's median, us per call:")
    lines.append("| configuration | " + " | ".join(loops) + " |")
    lines.append("| --- |" + " --- |" * len(loops))
    for c in configs:
        if c == "none":
            continue
        cells = ["%+.3f" % summary[c][lp]["median_minus_none"] if "median_minus_none" in summary.get(c, {}).get(lp, {})
                 else "-" for lp in loops]
        lines.append("| %s | %s |" % (c, " | ".join(cells)))
    if not loops:
        lines.append("no configuration produced a figure (see cupti_floor.log)")
    lines += [""] + verdicts
    for c, ex in extras.items():
        lines.append("%s: records %s" % (c, ", ".join(str(e.get("records")) for e in ex)) +
                     (" (%s)" % ex[0]["note"] if ex[0].get("note") else ""))
    if failures:
        lines.append("FAILED runs: " + "; ".join(failures))
    if skipped:
        lines.append("not run (budget %.0f s spent): %s" % (args.budget_s, "; ".join(skipped)))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "cupti_floor.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
