#!/usr/bin/env python3
"""Writes the traces of one multi-rank job with known answers (tests/cli/job/job*.sh).

Usage: gen_ranks.py OUT_DIR [--ranks N] [--iterations I] [--straggler R] [--late-us L]
                            [--overlap-us O] [--step-us P] [--name rank-{r}.json] [--no-rank-info]
                            [--skew-us S] [--no-seq] [--no-metadata] [--old-names] [--gzip]
                            [--first-step R:K ...] [--missing R:K ...] [--nsys]

Every rank runs, per iteration k (times in ns, on one true clock):
  compute kernel  [T_k, T_k + C_r)                   stream 7; C_r = C, and C + L on the straggler
  all-reduce      [T_k + C_r, E_k)                   stream 40; E_k = T_k + max C_r + D: every rank
                                                     leaves the collective at the same instant
  overlap kernel  [T_k + C_r, T_k + C_r + O)         stream 7, during the all-reduce
  ProfilerStep#k  [T_k, T_k + P) on the host, with a cudaLaunchKernel for each kernel; P = 5 ms, or
                  --step-us (a job whose straggler makes every rank's iterations longer)
and writes it on its own clock, true + skew_r (skews from 0 to 100 us, the straggler's included;
--skew-us scales them: ranks on hosts whose clocks differ by seconds). The all-reduce kernels
carry the collective metadata PyTorch writes (Collective name, In/Out msg nelems, Group size,
dtype, Process Group Name/Description/Ranks, Seq).

What real jobs' traces look like besides (tests/cli/job/job_variants.sh):
  --no-seq        PyTorch before the Seq argument: collectives matched by their order in a step
  --no-metadata   no collective arguments at all: NCCL kernels known by their names only
  --old-names     NCCL before 2.19's kernel names (ncclKernel_AllReduce_RING_LL_Sum_float)
  --gzip          rank files gzip'd (*.json.gz)
  --first-step R:K  rank R's profile starts at step K (its steps 0..K-1 are not in its trace)
  --missing R:K   rank R's all-reduce of step K is not in its trace (a lost event)
  --nsys          Nsight Systems SQLite exports instead (rank-N.sqlite, schema of
                  tests/fixtures/nsys/small_export.sql): NCCL's NVTX ranges with their payloads
                  (communicator ID, message size, ranks) say what each kernel is, NVTX
                  "iteration_k" ranges the steps, and each rank's session starts at its own time

OUT_DIR.expected.json (beside the directory: not a trace of the job) holds the answers: per rank its
clock_offset_ns (onto rank 0's clock: skew_0 - skew_r), wait_ms (its waits for the last rank over
the shared all-reduces, per iteration of its own), comm_ms, compute_ms, overlap_ratio, exposed_ms
(the all-reduce with no compute beside it: max C + D - C_r - O, at least 0, per call), its
collectives, last arrivals and lateness; the straggler; the job latency; the job's all-reduce row
(every rank's calls and time, bandwidths of the mean call) and comm_exposed's P (min(exposed,
compute) of rank 0, the slowest by the tie rule, over the iteration; null when it stays under
0.05). Computed here from the construction, not by tracegate.
"""
import argparse
import gzip
import json
import os
import re
import sqlite3

C_NS = 2_000_000       # compute per iteration
D_NS = 1_000_000       # the all-reduce once every rank has arrived
O_NS = 400_000         # compute overlapping the all-reduce (--overlap-us)
P_NS = 5_000_000       # iteration (ProfilerStep) length
T0_NS = 1_700_000_000_000_000_000  # a Unix-epoch start, as Kineto writes
NELEMS = 1 << 20
NEW_NAME = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
OLD_NAME = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
COMM_ID = 8_412_779_015_336_124_929  # NCCL's communicator ID: the same on every rank


def us(ns):
    """Kineto's microseconds with three decimals: exact nanoseconds."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def skew_ns(rank, skew_us=100):
    # Deterministic clock skews in [0, skew_us] us, distinct per rank (0 to 100 us by default).
    return (rank * 37_123) % 100_001 * skew_us // 100


def short_name(name):
    return name.split("(")[0]


def rank_plan(rank, a, compute):
    """What rank `rank` ran, on the true clock: [(step, start, has_all_reduce)]."""
    first = a.first_step.get(rank, 0)
    return [(k, T0_NS + k * a.step_us * 1000, (rank, k) not in a.missing) for k in range(first, a.iterations)]


def rank_kernels(rank, a, compute):
    """The rank's steps and kernels on the true clock: (steps, [(name, start, end, stream, args)])."""
    max_c = max(compute)
    c = compute[rank]
    steps, kernels = [], []
    for k, t, has_ar in rank_plan(rank, a, compute):
        steps.append((k, t))
        kernels.append(("void gemm_compute_kernel<float>(float const*, float*)", t, t + c, 7, {}))
        if has_ar:
            meta = {} if a.no_metadata else {
                "Collective name": "allreduce", "In msg nelems": NELEMS, "Out msg nelems": NELEMS,
                "Group size": a.ranks, "dtype": "Float", "In split size": "[]", "Out split size": "[]",
                "Process Group Name": "0", "Process Group Description": "default_pg",
                "Process Group Ranks": json.dumps(list(range(a.ranks)))}
            if not a.no_metadata and not a.no_seq:
                meta["Seq"] = k
            kernels.append((OLD_NAME if a.old_names else NEW_NAME, t + c, t + max_c + D_NS, 40, meta))
        kernels.append(("void overlap_compute_kernel<float>(float const*, float*)", t + c, t + c + a.overlap_us * 1000, 7, {}))
    return steps, kernels


def kineto_text(rank, a, compute, skew):
    steps, kernels = rank_kernels(rank, a, compute)
    events = []
    host_pid = host_tid = 1000 + rank
    corr = 1
    # Events in the order the original generator wrote them: per step its marker, then each kernel
    # followed by its launch.
    kernels_by_step = {}
    for kern in kernels:
        k = max(s for s, t in steps if t <= kern[1])
        kernels_by_step.setdefault(k, []).append(kern)
    for k, t in steps:
        events.append(("user_annotation", f"ProfilerStep#{k}", host_pid, host_tid, t - 30_000, a.step_us * 1000, {}))
        for name, start, end, stream, args in kernels_by_step.get(k, []):
            kargs = {"device": 0, "stream": stream, "correlation": corr, "context": 1, "grid": [8, 1, 1],
                     "block": [256, 1, 1]}
            kargs.update(args)
            events.append(("kernel", name, 0, stream, start, end - start, kargs))
            events.append(("cuda_runtime", "cudaLaunchKernel", host_pid, host_tid, start - 20_000, 5_000,
                           {"correlation": corr, "cbid": 211}))
            corr += 1
    out = []
    for cat, name, pid, tid, start, dur, args in events:
        out.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                   % (cat, json.dumps(name), pid, tid, us(start + skew), us(dur), json.dumps(args)))
    head = {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_000_000_000,
                                  "computeMajor": 9, "computeMinor": 0, "numSms": 132}]}
    if not a.no_rank_info:
        head["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": a.ranks}
    return json.dumps(head)[:-1] + ', "traceEvents": [\n' + ",\n".join(out) + "\n]}\n"


def nsys_schema():
    sql = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "nsys",
                            "small_export.sql")).read()
    sql = re.sub(r"--[^\n]*", "", sql)
    return [m.group(0) for m in re.finditer(r"CREATE TABLE[^;]*;", sql)]


def write_nsys(path, rank, a, compute, skew):
    """An Nsight Systems export of one rank's process: nsys's times count from its session's start,
    so `skew` (the session's start on the true clock, negated) is whatever it is."""
    steps, kernels = rank_kernels(rank, a, compute)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    for stmt in nsys_schema():
        db.execute(stmt)
    db.execute("ALTER TABLE NVTX_EVENTS ADD COLUMN jsonText TEXT")
    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)",
                   [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2024.2.1.106"),
                    ("EXPORT_SCHEMA_VERSION", "3.11.0"), ("EXPORT_SCHEMA_VERSION_MAJOR", "3")])
    pid = 4000 + rank
    gpid = (1 << 48) | (pid << 24)
    gtid = gpid | pid
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (gpid, pid))
    strings = {}

    def sid(text):
        if text not in strings:
            strings[text] = 100 + len(strings)
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[text], text))
        return strings[text]

    nvtx = [(0, None, 75, "NCCL", gtid, 1, None),
            (skew + T0_NS - 2_000_000, skew + T0_NS - 1_900_000, 59, "ncclCommInitRank", gtid, 1,
             json.dumps({"NCCL communicator ID": COMM_ID, "No. of ranks": a.ranks, "Rank": rank, "CUDA device": 0}))]
    for k, t in steps:
        nvtx.append((t - 30_000 + skew, t - 30_000 + a.step_us * 1000 + skew, 59, f"iteration_{k}", gtid, 0, None))
    corr = 1
    for name, start, end, stream, args in kernels:
        # One thread launches one kernel at a time: the overlap kernel after the all-reduce's
        # ncclAllReduce range (the Kineto traces launch both at once: correlation ids pair them).
        launch = start - (10_000 if "overlap" in name else 20_000) + skew
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0, NULL)",
                   (launch, launch + 5_000, gtid, corr, sid("cudaLaunchKernel_v7000")))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                   "(?, ?, 0, 1, ?, ?, ?, ?, ?, 32, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, ?)",
                   (start + skew, end + skew, stream, corr, gpid, sid(name), sid(short_name(name)), corr))
        if stream == 40 and not a.no_metadata:
            nvtx.append((launch - 2_000, launch + 8_000, 59, "ncclAllReduce", gtid, 1,
                         json.dumps({"NCCL communicator ID": COMM_ID, "Message size [bytes]": NELEMS * 4,
                                     "Reduction operation": "ncclSum"})))
        corr += 1
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", nvtx)
    db.commit()
    db.close()


def expected_answers(a, compute, skews):
    """The job's answers from the construction (docs/RULES.md, "Across ranks")."""
    max_c = max(compute)
    overlap = a.overlap_us * 1000
    plans = [rank_plan(r, a, compute) for r in range(a.ranks)]
    steps = [len(p) for p in plans]
    calls = [sum(1 for _, _, has in p if has) for p in plans]
    has = [{k for k, _, h in p if h} for p in plans]
    waits = [0] * a.ranks
    last = [0] * a.ranks
    lateness = [0] * a.ranks
    shared = 0
    for k in range(a.iterations):
        on = [r for r in range(a.ranks) if k in has[r]]
        if len(on) < 2:
            continue
        shared += 1
        latest = max(compute[r] for r in on)
        for r in on:
            waits[r] += latest - compute[r]
        at_latest = [r for r in on if compute[r] == latest]
        if len(at_latest) == 1:
            others = [compute[r] for r in on if r != at_latest[0]]
            last[at_latest[0]] += 1
            lateness[at_latest[0]] += latest - max(others)
    straggler = max(range(a.ranks), key=lambda r: (last[r], -r)) if max(last) > 0 else None
    metadata = not a.no_metadata
    seq = metadata and not a.no_seq and not a.nsys
    expected = {"ranks": [], "straggler": straggler, "shared_collectives": shared,
                "matched_by": "seq" if seq else "step", "job_latency_ms": a.step_us / 1e3}
    for r in range(a.ranks):
        comm = max_c + D_NS - compute[r]  # one all-reduce
        expected["ranks"].append({
            "rank": r, "file": a.name.format(r=r),
            "clock_offset_ns": skews[0] - skews[r],
            "wait_ms": waits[r] / steps[r] / 1e6,
            "comm_ms": calls[r] * comm / steps[r] / 1e6,
            "compute_ms": (compute[r] + overlap) / 1e6,
            "overlap_ratio": min(overlap, comm) / comm,
            "exposed_ms": calls[r] * (comm - min(overlap, comm)) / steps[r] / 1e6,
            "last_arrivals": last[r],
            "lateness_ns": lateness[r],
            "iterations": steps[r],
            "collectives": calls[r]})
    # Every rank runs one all-reduce of NELEMS floats per step it has, over all the ranks.
    total_ns = sum(n * (max_c + D_NS - c) for n, c in zip(calls, compute))
    count = sum(calls)
    nbytes = NELEMS * 4 if metadata else None
    algbw = nbytes * count / total_ns if nbytes else None  # bytes per ns = GB/s
    expected["collectives"] = [{
        "collective": "allreduce" if metadata else short_name(OLD_NAME if a.old_names else NEW_NAME),
        "dtype": ("Byte" if a.nsys else "Float") if metadata else None,
        "message_bytes": nbytes, "group_size": a.ranks if metadata else None, "ranks": a.ranks, "count": count,
        "count_per_rank": calls[0] if len(set(calls)) == 1 else None, "count_min": min(calls),
        "count_max": max(calls), "total_ns": total_ns, "mean_ns": total_ns / count,
        "algbw_gbs": algbw, "busbw_gbs": algbw * 2 * (a.ranks - 1) / a.ranks if algbw else None}]
    e0 = expected["ranks"][0]
    p = min(e0["exposed_ms"], e0["compute_ms"]) / (a.step_us / 1e3)
    expected["comm_exposed_share"] = p if p >= 0.05 else None
    return expected


def rank_steps(text):
    r, k = text.split(":")
    return int(r), int(k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--straggler", type=int, default=2)
    ap.add_argument("--late-us", type=int, default=300)
    ap.add_argument("--overlap-us", type=int, default=O_NS // 1000)
    ap.add_argument("--step-us", type=int, default=P_NS // 1000, help="iteration (ProfilerStep) length")
    ap.add_argument("--name", help="file name of rank {r} (default rank-{r}.json, .json.gz, .sqlite)")
    ap.add_argument("--no-rank-info", action="store_true", help="leave distributedInfo out")
    ap.add_argument("--skew-us", type=int, default=100, help="the largest clock skew between ranks")
    ap.add_argument("--no-seq", action="store_true")
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--old-names", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--first-step", type=rank_steps, action="append", default=[], metavar="R:K")
    ap.add_argument("--missing", type=rank_steps, action="append", default=[], metavar="R:K")
    ap.add_argument("--nsys", action="store_true")
    ap.add_argument("--expected", help="where the answers go (default: OUT_DIR.expected.json, beside the traces)")
    a = ap.parse_args()
    if a.step_us * 1000 < C_NS + a.late_us * 1000 + D_NS:
        ap.error("--step-us: the iteration must hold the compute, the lateness and the all-reduce")
    a.first_step = dict(a.first_step)
    a.missing = set(a.missing)
    if a.name is None:
        a.name = "rank-{r}.sqlite" if a.nsys else "rank-{r}.json.gz" if a.gzip else "rank-{r}.json"
    os.makedirs(a.out, exist_ok=True)
    compute = [C_NS + (a.late_us * 1000 if r == a.straggler else 0) for r in range(a.ranks)]
    skews = [skew_ns(r, a.skew_us) for r in range(a.ranks)]
    if a.nsys:  # times from each session's start: about a second after the job's, per rank apart
        skews = [-(T0_NS - 1_000_000_000 - r * 1_234_567_891) + s for r, s in enumerate(skews)]
    for r in range(a.ranks):
        path = os.path.join(a.out, a.name.format(r=r))
        if a.nsys:
            write_nsys(path, r, a, compute, skews[r])
        else:
            text = kineto_text(r, a, compute, skews[r])
            with (gzip.open(path, "wt") if a.gzip else open(path, "w")) as f:
                f.write(text)
    expected = expected_answers(a, compute, skews)
    with open(a.expected or a.out.rstrip("/") + ".expected.json", "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
