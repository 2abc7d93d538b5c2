#!/usr/bin/env python3
"""Writes the Kineto traces of one multi-rank job with known answers (tests/cli/job*.sh).

Usage: gen_ranks.py OUT_DIR [--ranks N] [--iterations I] [--straggler R] [--late-us L]
                            [--overlap-us O] [--step-us P] [--name rank-{r}.json] [--no-rank-info]

Every rank runs, per iteration k (times in ns, on one true clock):
  compute kernel  [T_k, T_k + C_r)                   stream 7; C_r = C, and C + L on the straggler
  all-reduce      [T_k + C_r, E_k)                   stream 40; E_k = T_k + max C_r + D: every rank
                                                     leaves the collective at the same instant
  overlap kernel  [T_k + C_r, T_k + C_r + O)         stream 7, during the all-reduce
  ProfilerStep#k  [T_k, T_k + P) on the host, with a cudaLaunchKernel for each kernel; P = 5 ms, or
                  --step-us (a job whose straggler makes every rank's iterations longer)
and writes it on its own clock, true + skew_r (skews from 0 to 100 us, the straggler's included). The
all-reduce kernels carry the collective metadata PyTorch writes (Collective name, In/Out msg
nelems, Group size, dtype, Process Group Name/Description/Ranks, Seq).

OUT_DIR.expected.json (beside the directory: not a trace of the job) holds the answers: per rank its clock_offset_ns (onto rank 0's clock:
skew_0 - skew_r), wait_ms (max C - C_r per iteration), comm_ms, compute_ms, overlap_ratio,
exposed_ms (the all-reduce with no compute beside it: max C + D - C_r - O, at least 0) and the
collectives; the straggler, its last arrivals and its lateness; the job latency; the job's
all-reduce row (every rank's calls and time, bandwidths of the mean call) and comm_exposed's P
(min(exposed, compute) of rank 0, the slowest by the tie rule, over the iteration; null when it
stays under 0.05).
"""
import argparse
import json
import os

C_NS = 2_000_000       # compute per iteration
D_NS = 1_000_000       # the all-reduce once every rank has arrived
O_NS = 400_000         # compute overlapping the all-reduce (--overlap-us)
P_NS = 5_000_000       # iteration (ProfilerStep) length
T0_NS = 1_700_000_000_000_000_000  # a Unix-epoch start, as Kineto writes
NELEMS = 1 << 20


def us(ns):
    """Kineto's microseconds with three decimals: exact nanoseconds."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def skew_ns(rank):
    # Deterministic clock skews in [0, 100] us, distinct per rank: offsets between ranks up to 100 us.
    return (rank * 37_123) % 100_001


def rank_events(rank, ranks, iterations, compute, skew, overlap, step):
    events = []
    corr = 1
    host_pid, host_tid = 1000 + rank, 1000 + rank

    def kernel(name, start, end, stream, args=None):
        nonlocal corr
        a = {"device": 0, "stream": stream, "correlation": corr, "context": 1, "grid": [8, 1, 1], "block": [256, 1, 1]}
        a.update(args or {})
        events.append(("kernel", name, 0, stream, start, end - start, a))
        events.append(("cuda_runtime", "cudaLaunchKernel", host_pid, host_tid, start - 20_000, 5_000,
                       {"correlation": corr, "cbid": 211}))
        corr += 1

    max_c = max(compute)
    for k in range(iterations):
        t = T0_NS + k * step
        c = compute[rank]
        events.append(("user_annotation", f"ProfilerStep#{k}", host_pid, host_tid, t - 30_000, step, {}))
        kernel("void gemm_compute_kernel<float>(float const*, float*)", t, t + c, 7)
        kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
               t + c, t + max_c + D_NS, 40,
               {"Collective name": "allreduce", "In msg nelems": NELEMS, "Out msg nelems": NELEMS,
                "Group size": ranks, "dtype": "Float", "In split size": "[]", "Out split size": "[]",
                "Process Group Name": "0", "Process Group Description": "default_pg",
                "Process Group Ranks": json.dumps(list(range(ranks))), "Seq": k})
        kernel("void overlap_compute_kernel<float>(float const*, float*)", t + c, t + c + overlap, 7)
    out = []
    for cat, name, pid, tid, start, dur, args in events:
        out.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                   % (cat, json.dumps(name), pid, tid, us(start + skew), us(dur), json.dumps(args)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--straggler", type=int, default=2)
    ap.add_argument("--late-us", type=int, default=300)
    ap.add_argument("--overlap-us", type=int, default=O_NS // 1000)
    ap.add_argument("--step-us", type=int, default=P_NS // 1000, help="iteration (ProfilerStep) length")
    ap.add_argument("--name", default="rank-{r}.json")
    ap.add_argument("--no-rank-info", action="store_true", help="leave distributedInfo out")
    ap.add_argument("--expected", help="where the answers go (default: OUT_DIR.expected.json, beside the traces)")
    a = ap.parse_args()
    if a.step_us * 1000 < C_NS + a.late_us * 1000 + D_NS:
        ap.error("--step-us: the iteration must hold the compute, the lateness and the all-reduce")
    os.makedirs(a.out, exist_ok=True)
    compute = [C_NS + (a.late_us * 1000 if r == a.straggler else 0) for r in range(a.ranks)]
    max_c = max(compute)
    overlap = a.overlap_us * 1000
    expected = {"ranks": [], "straggler": a.straggler if a.late_us > 0 else None,
                "shared_collectives": a.iterations, "matched_by": "seq",
                "job_latency_ms": a.step_us / 1e3}
    for r in range(a.ranks):
        head = {"schemaVersion": 1,
                "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_000_000_000,
                                      "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
                }
        if not a.no_rank_info:
            head["distributedInfo"] = {"backend": "nccl", "rank": r, "world_size": a.ranks}
        body = ",\n".join(rank_events(r, a.ranks, a.iterations, compute, skew_ns(r), overlap, a.step_us * 1000))
        text = json.dumps(head)[:-1] + ', "traceEvents": [\n' + body + "\n]}\n"
        with open(os.path.join(a.out, a.name.format(r=r)), "w") as f:
            f.write(text)
        comm = max_c + D_NS - compute[r]
        expected["ranks"].append({
            "rank": r, "file": a.name.format(r=r),
            "clock_offset_ns": skew_ns(0) - skew_ns(r),
            "wait_ms": (max_c - compute[r]) / 1e6,
            "comm_ms": comm / 1e6,
            "compute_ms": (compute[r] + overlap) / 1e6,
            "overlap_ratio": min(overlap, comm) / comm,
            "exposed_ms": (comm - min(overlap, comm)) / 1e6,
            "last_arrivals": a.iterations if (r == a.straggler and a.late_us > 0) else 0,
            "lateness_ns": a.iterations * a.late_us * 1000 if r == a.straggler else 0,
            "collectives": a.iterations})
    # Every rank runs one all-reduce of NELEMS floats per iteration over all the ranks.
    total_ns = sum(a.iterations * (max_c + D_NS - c) for c in compute)
    calls = a.ranks * a.iterations
    algbw = NELEMS * 4 * calls / total_ns  # bytes per ns = GB/s
    expected["collectives"] = [{"collective": "allreduce", "dtype": "Float", "message_bytes": NELEMS * 4,
                                "group_size": a.ranks, "ranks": a.ranks, "count": calls,
                                "count_per_rank": a.iterations, "total_ns": total_ns, "mean_ns": total_ns / calls,
                                "algbw_gbs": algbw, "busbw_gbs": algbw * 2 * (a.ranks - 1) / a.ranks}]
    exposed0 = max_c + D_NS - compute[0] - min(overlap, max_c + D_NS - compute[0])
    p = min(exposed0, compute[0] + overlap) / (a.step_us * 1000)
    expected["comm_exposed_share"] = p if p >= 0.05 else None
    with open(a.expected or a.out.rstrip("/") + ".expected.json", "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
