#!/usr/bin/env python3
"""Writes a GPU-bound data-parallel job whose what-if answers are known (tests/cli/job/job_predict.sh).

Usage: gen_job_replay.py OUT_DIR [--ranks N] [--iterations I] [--straggler R] [--late-us L]

Every rank runs, per iteration, on one true clock (T = the iteration's base time, in ns):
  host thread (in this order)
    ProfilerStep#k       [T - 30us, E + 15us)
    cudaLaunchKernel     [T - 25us, T - 20us)  -> gemm_compute_kernel  [T, T + C_r)        stream 7
    cudaEventRecord      [T - 18us, T - 16us)     (on stream 7: its work is the compute kernel)
    cudaStreamWaitEvent  [T - 15us, T - 13us)     (stream 40 waits for it: a cuda_sync row naming the record)
    cudaLaunchKernel     [T - 12us, T - 7us)   -> all-reduce           [T + C_r, E)         stream 40
    cudaLaunchKernel     [T - 6us, T - 1us)    -> overlap_kernel       [T + C_r, T + C_r + O) stream 7
    cudaDeviceSynchronize [T, E + 10us)
  C_r = C, and C + L on the straggler; E = T + max_r C_r + D: every rank leaves the all-reduce once
  the last has arrived, D after; the next iteration's T is E + 65us (the host's 20 us between
  markers). So an iteration lasts max_r C_r + D + 45us, on every rank.
Each rank writes its own clock (true + r * 37 us) and distributedInfo.rank. The all-reduce carries
PyTorch's collective metadata with Seq = k.

OUT_DIR.params.json holds what the checker recomputes the answers from: C, L, D, O, the ranks'
compute times, the iterations, the host's fixed 45 us per iteration.
"""
import argparse
import json
import os

C_NS = 2_000_000
D_NS = 1_000_000
O_NS = 400_000
T0_NS = 1_700_000_000_000_000_000
HOST_NS = 45_000  # per iteration: 30 us before T, 15 us after the all-reduce
GAP_NS = 20_000   # between one marker's end and the next marker's start
AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "void gemm_compute_kernel<float>(float const*, float*)"
OVERLAP = "void overlap_kernel<float>(float const*, float*)"


def us(ns):
    return f"{ns // 1000}.{ns % 1000:03d}"


def rank_text(rank, a, compute):
    skew = rank * 37_000
    max_c = max(compute)
    c = compute[rank]
    pid = tid = 1000 + rank
    events = []
    corr = 1

    def ev(cat, name, p, t, start, dur, args):
        events.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                      % (cat, json.dumps(name), p, t, us(start + skew), us(dur), json.dumps(args)))

    t = T0_NS
    for k in range(a.iterations):
        e = t + max_c + D_NS
        ev("user_annotation", f"ProfilerStep#{k}", pid, tid, t - 30_000, e + 15_000 - (t - 30_000), {})

        def launch(name, start, end, stream, at, extra=None):
            nonlocal corr
            kargs = {"device": 0, "stream": stream, "correlation": corr, "context": 1, "grid": [8, 1, 1],
                     "block": [256, 1, 1]}
            kargs.update(extra or {})
            ev("kernel", name, 0, stream, start, end - start, kargs)
            ev("cuda_runtime", "cudaLaunchKernel", pid, tid, at, 5_000, {"correlation": corr, "cbid": 211})
            corr += 1

        launch(GEMM, t, t + c, 7, t - 25_000)
        record = corr
        ev("cuda_runtime", "cudaEventRecord", pid, tid, t - 18_000, 2_000, {"correlation": record, "cbid": 135})
        corr += 1
        ev("cuda_runtime", "cudaStreamWaitEvent", pid, tid, t - 15_000, 2_000, {"correlation": corr, "cbid": 147})
        ev("cuda_sync", "Stream Wait Event", 0, 40, t - 14_000, 1_000,
           {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": record,
            "wait_on_cuda_event_id": k, "stream": 40, "correlation": corr, "device": 0, "context": 1})
        corr += 1
        meta = {"Collective name": "allreduce", "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20,
                "Group size": a.ranks, "dtype": "Float", "Process Group Name": "0",
                "Process Group Description": "default_pg", "Process Group Ranks": json.dumps(list(range(a.ranks))),
                "Seq": k}
        launch(AR, t + c, e, 40, t - 12_000, meta)
        launch(OVERLAP, t + c, t + c + a.overlap_us * 1000, 7, t - 6_000)
        ev("cuda_runtime", "cudaDeviceSynchronize", pid, tid, t, e + 10_000 - t, {"correlation": corr, "cbid": 165})
        corr += 1
        t = e + 15_000 + GAP_NS + 30_000
    head = {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_000_000_000,
                                  "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": a.ranks}}
    return json.dumps(head)[:-1] + ', "traceEvents": [\n' + ",\n".join(events) + "\n]}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--straggler", type=int, default=2)
    ap.add_argument("--late-us", type=int, default=300)
    ap.add_argument("--overlap-us", type=int, default=O_NS // 1000)
    a = ap.parse_args()
    if a.overlap_us * 1000 >= D_NS:
        ap.error("--overlap-us: the overlap kernel must end inside the all-reduce")
    compute = [C_NS + (a.late_us * 1000 if r == a.straggler else 0) for r in range(a.ranks)]
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.ranks):
        with open(os.path.join(a.out, f"rank-{r}.json"), "w") as f:
            f.write(rank_text(r, a, compute))
    with open(a.out.rstrip("/") + ".params.json", "w") as f:
        json.dump({"compute_ns": compute, "D_ns": D_NS, "O_ns": a.overlap_us * 1000, "host_ns": HOST_NS,
                   "iterations": a.iterations, "ranks": a.ranks, "straggler": a.straggler}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
