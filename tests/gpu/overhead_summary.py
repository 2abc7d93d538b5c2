#!/usr/bin/env python3
"""The summary of tests/gpu/overhead.sh: per workload and configuration the median of the
programs' own figures, the A/A spread (what the two untraced processes, none and none again,
differ by), each configuration's effect against the untraced median and whether it exceeds that
spread, per-iteration statistics where every iteration was timed (median, p90, max, outliers over
2x the untraced median), and the goals of issue 32:
  - resnet50_b256 (GPU-bound): tracegate's effect within the A/A spread, or under 1%;
  - resnet50_b32 (host-bound): tracegate's median at or below torch.profiler's and nsys's, and no
    more iterations over 2x the untraced median than an untraced process shows;
  - torch_tiny: tracegate at or below torch.profiler;
  - launch_bound: tracegate's us per launch at most 1.2x cupti_floor's minimum for the same records
    (allowlist_kernel's launch loop), with --floor cupti_floor.json.
Usage: overhead_summary.py OUT_DIR [--floor cupti_floor.json]. Prints the summary, writes
OUT_DIR/overhead_summary.json; exit 1 when a goal that could be judged is not met.
"""
import argparse
import json
import os
import statistics
import sys

UNTRACED = ("none", "none again")


def pct(a, b):
    return 100.0 * (a / b - 1.0)


def p90(v):
    s = sorted(v)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--floor")
    args = ap.parse_args()
    fig, unit, wall, order = {}, {}, {}, []
    for line in open(os.path.join(args.out, "overhead.tsv")):
        w, c, run, value, u, ws = line.rstrip("\n").split("\t")
        if (w, c) not in order:
            order.append((w, c))
        if value in ("-",):
            continue
        fig.setdefault((w, c), []).append(float(value))
        unit[w] = u
        wall.setdefault((w, c), {})[run] = float(ws)
    iters, per_run = {}, {}
    path = os.path.join(args.out, "iterations.tsv")
    if os.path.exists(path):
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            vals = [float(x) for x in f[4:] if x]
            iters.setdefault((f[0], f[1]), []).extend(vals)
            per_run.setdefault((f[0], f[1], f[2]), []).extend(vals)
    workloads = []
    for w, _ in order:
        if w not in workloads:
            workloads.append(w)
    result, lines, failed = {}, [], []
    for w in workloads:
        r = result.setdefault(w, {"configs": {}})
        med = {c: statistics.median(v) for (ww, c), v in fig.items() if ww == w}
        untraced = [x for c in UNTRACED for x in fig.get((w, c), [])]
        base = statistics.median(untraced) if untraced else None
        spread = None
        if all(c in med for c in UNTRACED):
            a, b = med["none"], med["none again"]
            spread = 100.0 * abs(a - b) / ((a + b) / 2)
        r["untraced_median"], r["aa_spread_pct"] = base, spread
        lines.append("%s: untraced median %s %s; A/A spread %s" % (
            w, "%.3f" % base if base else "-", unit.get(w, ""), "%.2f%%" % spread if spread is not None else "- (needs none and none again)"))
        it_base = None
        it_untraced = [x for c in UNTRACED for x in iters.get((w, c), [])]
        if it_untraced:
            it_base = statistics.median(it_untraced)
        for (ww, c) in order:
            if ww != w:
                continue
            if c not in med:
                lines.append("  %s/%s: no figure (the run failed or was not run)" % (w, c))
                r["configs"][c] = None
                continue
            d = {"median": med[c], "min": min(fig[(w, c)]), "max": max(fig[(w, c)]), "n": len(fig[(w, c)]),
                 "wall_s_median": statistics.median(wall[(w, c)].values())}
            text = "  %s/%s: median %.3f %s of %d" % (w, c, med[c], unit[w], d["n"])
            if base and c not in UNTRACED:
                d["effect_pct"] = pct(med[c], base)
                d["beyond_aa_spread"] = spread is not None and abs(d["effect_pct"]) > spread
                text += " (%+.1f%% vs untraced; %s)" % (d["effect_pct"], "counts: beyond the A/A spread" if d["beyond_aa_spread"]
                                                         else "within the A/A spread" if spread is not None else "no A/A spread")
            v = iters.get((w, c))
            if v and it_base:
                d["iterations"] = {"n": len(v), "median_ms": statistics.median(v), "p90_ms": p90(v), "max_ms": max(v),
                                   "over_2x_untraced_median": sum(1 for x in v if x > 2 * it_base)}
                i = d["iterations"]
                text += "; per iteration: median %.3f, p90 %.3f, max %.3f ms, %d of %d over 2x the untraced median" % (
                    i["median_ms"], i["p90_ms"], i["max_ms"], i["over_2x_untraced_median"], i["n"])
            text += "; process wall %.1f s" % d["wall_s_median"]
            r["configs"][c] = d
            lines.append(text)
        cfg = r["configs"]
        t = cfg.get("tracegate")
        goals = r.setdefault("goals", [])

        def goal(name, ok, detail):
            goals.append({"goal": name, "met": ok, "detail": detail})
            lines.append("  goal %s: %s (%s)" % (name, "met" if ok else "NOT met", detail))
            if not ok:
                failed.append("%s: %s" % (w, name))

        if t and w == "resnet50_b256":
            ok = (spread is not None and not t["beyond_aa_spread"]) or abs(t["effect_pct"]) < 1.0
            goal("overhead within the A/A spread or < 1%", ok, "%+.2f%% vs spread %s" % (
                t["effect_pct"], "%.2f%%" % spread if spread is not None else "-"))
        for other in ("torch.profiler", "nsys"):
            o = cfg.get(other)
            if t and o and w in ("resnet50_b32", "torch_tiny"):
                ok = t["median"] <= o["median"]
                lines.append("  %s: tracegate %.3f vs %s %.3f %s: tracegate %s %s" % (
                    w, t["median"], other, o["median"], unit[w], "below" if ok else "NOT below", other))
                goal("at or below " + other, ok, "median %.3f vs %.3f %s" % (t["median"], o["median"], unit[w]))
        if t and w == "resnet50_b32" and "iterations" in t:
            worst = max([sum(1 for x in per_run[k] if x > 2 * it_base) for k in per_run
                         if k[0] == w and k[1] in UNTRACED] or [0])
            got = t["iterations"]["over_2x_untraced_median"]
            goal("no outlier iterations the untraced runs do not show", got <= worst,
                 "%d iterations over 2x the untraced median; an untraced process had up to %d" % (got, worst))
        if t and w == "launch_bound" and args.floor:
            try:
                f = json.load(open(args.floor))["summary"]["allowlist_kernel"]["launch"]["min"]
            except (OSError, KeyError, ValueError):
                f = None
            if f:
                ratio = t["median"] / f
                goal("us per launch at most 1.2x the cupti_floor minimum", ratio <= 1.2,
                     "%.3f us vs floor %.3f us: %.2fx" % (t["median"], f, ratio))
    with open(os.path.join(args.out, "overhead_summary.json.tmp"), "w") as fh:
        json.dump(result, fh, indent=1)
    os.replace(os.path.join(args.out, "overhead_summary.json.tmp"), os.path.join(args.out, "overhead_summary.json"))
    print("\n".join(lines))
    if failed:
        print("goals not met: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
