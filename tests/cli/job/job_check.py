#!/usr/bin/env python3
"""A job report against the answers tests/gen/gen_ranks.py computed from its construction (not by
tracegate): per rank its clock offset (exact), waits, communication, compute and overlap (1e-12),
collectives, last arrivals; the job's shared collectives and how they were matched; the
per-collective row; the straggler finding (its rank, last arrivals and lateness to the ns, P);
compute_imbalance (fires at max / mean - 1 >= 0.10; its ratio, P = max / latency, S = max / mean);
and the data-quality warnings the job must carry (and no others of the cross-rank step).
Usage: job_check.py JOB.json EXPECTED.json [--warn KEY=COUNT ...]  (exit 1 on a mismatch)
"""
import json
import sys


def close(a, b, tol=1e-12):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def main():
    job, exp = (json.load(open(p)) for p in sys.argv[1:3])
    warn = dict((w.split("=")[0], int(w.split("=")[1])) for w in sys.argv[3:] if "=" in w)
    bad = []
    ranks, want = job["ranks"], exp["ranks"]
    if [r["rank"] for r in ranks] != [e["rank"] for e in want]:
        bad.append(f"ranks {[r['rank'] for r in ranks]} != {[e['rank'] for e in want]}")
        want = []
    for r, e in zip(ranks, want):
        if not r["file"].endswith(e["file"]):
            bad.append(f"rank {e['rank']}: file {r['file']} != {e['file']}")
        if r["clock_offset_ns"] != e["clock_offset_ns"]:
            bad.append(f"rank {e['rank']}: clock_offset_ns {r['clock_offset_ns']} != {e['clock_offset_ns']}")
        for key in ("wait_ms", "comm_ms", "compute_ms", "overlap_ratio"):
            if not close(r.get(key), e[key]):
                bad.append(f"rank {e['rank']}: {key} {r.get(key)} != {e[key]}")
        for key in ("collectives", "last_arrivals", "iterations"):
            if r.get(key) != e[key]:
                bad.append(f"rank {e['rank']}: {key} {r.get(key)} != {e[key]}")
    j = job["job"]
    if j["shared_collectives"] != exp["shared_collectives"] or j["matched_by"] != exp["matched_by"]:
        bad.append(f"job {j['shared_collectives']} by {j['matched_by']!r} != "
                   f"{exp['shared_collectives']} by {exp['matched_by']!r}")
    rows, wrows = j["collectives"], exp["collectives"]
    if len(rows) != len(wrows):
        bad.append(f"{len(rows)} job collective rows != {len(wrows)}")
    for row, w in zip(rows, wrows):
        for key in ("collective", "dtype", "message_bytes", "group_size", "ranks", "count", "count_per_rank",
                    "count_min", "count_max"):
            if row.get(key) != w[key]:
                bad.append(f"collective row: {key} {row.get(key)!r} != {w[key]!r}")
        if round(row["total_ms"] * 1e6) != w["total_ns"]:
            bad.append(f"collective row: total_ms {row['total_ms']} != {w['total_ns']} ns")
        for key in ("algbw_gbs", "busbw_gbs"):
            if not close(row.get(key), w[key]):
                bad.append(f"collective row: {key} {row.get(key)} != {w[key]}")
    s = [f for f in job["findings"] if f["id"] == "straggler"]
    if exp["straggler"] is None:
        if s:
            bad.append(f"a straggler finding where none is: {s[0]['summary']}")
    elif len(s) != 1:
        bad.append(f"no straggler finding (rank {exp['straggler']} expected)")
    else:
        e = want[exp["straggler"]] if want else None
        v = s[0]["involved"]
        if [(x["kind"], x["name"]) for x in v] != [("rank", str(exp["straggler"]))]:
            bad.append(f"straggler involved {v}")
        elif e and (v[0]["count"] != e["last_arrivals"] or round(v[0]["time_ms"] * 1e6) != e["lateness_ns"]):
            bad.append(f"straggler {v[0]} != {e['last_arrivals']} arrivals, {e['lateness_ns']} ns")
        elif e and not close(s[0]["amdahl"]["share"], e["lateness_ns"] / e["iterations"] / 1e6 / exp["job_latency_ms"]):
            bad.append(f"straggler P {s[0]['amdahl']['share']}")
    # compute_imbalance: the rank with the most compute over the ranks' mean, 10% or more.
    imb = [f for f in job["findings"] if f["id"] == "compute_imbalance"]
    if want:
        compute = [e["compute_ms"] for e in want]
        most, mean = max(compute), sum(compute) / len(compute)
        if most / mean - 1 < 0.10:
            if imb:
                bad.append(f"a compute_imbalance finding where none is: {imb[0]['summary']}")
        elif len(imb) != 1:
            bad.append(f"no compute_imbalance finding ({most} ms vs the mean {mean} ms)")
        else:
            f = imb[0]
            if f["involved"][0]["name"] != str(compute.index(most)) or not close(f["evidence"][0]["value"], most / mean - 1):
                bad.append(f"compute_imbalance {f['involved']} {f['evidence']}")
            if not close(f["amdahl"]["share"], min(1, most / exp["job_latency_ms"])) or not close(f["amdahl"]["speedup"], most / mean):
                bad.append(f"compute_imbalance P/S {f['amdahl']}")
    counters = {c["key"]: c["count"] for c in job["data_quality"]["counters"]}
    for key in ("collective_match_doubtful", "collective_counts_differ", "rank_from_file_order"):
        if counters.get(key, 0) != warn.get(key, 0):
            bad.append(f"data quality {key}: {counters.get(key, 0)} != {warn.get(key, 0)}")
    for b in bad[:20]:
        print(f"{sys.argv[1]}: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
