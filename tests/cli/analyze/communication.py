#!/usr/bin/env python3
"""Known answers for the communication figures, recomputed from the raw Kineto file in plain
Python (not tracegate's code).

For each trace: every collective kernel (PyTorch's "Collective name" in its args, else a name the
communication pattern matches) is in ranks[0].collective_calls in time order; the collectives
table's rows hold the right counts and total times, message bytes = max(In, Out msg nelems) x
dtype size exactly, algbw = bytes x count / total_ns and busbw = algbw x NCCL's factor to 1e-9
relative; comm_ms, compute_ms and overlap_ratio agree with unions per device clipped to the
report's iteration spans, to 1e-9 relative. Then the same trace written to a tracegate store
(convert) and to Chrome JSON (export) must give the same collectives.
Usage: communication.py TRACEGATE TRACE|--synthetic [EXPECTED_COLLECTIVE_KERNELS] (exit 1 on a
mismatch). --synthetic writes a small trace of its own (synthetic() says what is in it).
"""
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

COMM = re.compile("nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv|cross_device_reduce")
DTYPE = {"Byte": 1, "Char": 1, "Bool": 1, "Short": 2, "Int": 4, "Long": 8, "Half": 2, "Float": 4, "Double": 8,
         "BFloat16": 2, "ComplexFloat": 8, "ComplexDouble": 16}


def factor(name, n):
    c = re.sub("[^a-z]", "", name.lower())
    if "allreduce" in c:
        return 2 * (n - 1) / n
    if "allgather" in c or "reducescatter" in c or "alltoall" in c:
        return (n - 1) / n
    if c.startswith(("broadcast", "reduce", "send", "recv")):
        return 1.0
    return None


def kernels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    base = int(doc.get("baseTimeNanoseconds", 0))
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() != "kernel":
            continue
        s = base + int(decimal.Decimal(e["ts"]) * 1000)
        args = e.get("args") or {}
        meta = "Collective name" in args
        comm = meta or bool(COMM.search(e["name"].split("(")[0].lower()))
        out.append({"start": s, "end": s + int(decimal.Decimal(e["dur"]) * 1000), "device": args.get("device", e.get("pid")),
                    "comm": comm, "meta": meta, "args": args})
    return out, doc.get("distributedInfo", {}).get("rank")


def union(iv):
    out = []
    for a, b in sorted(iv):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def length(u):
    return sum(b - a for a, b in u)


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def check(tg, path, expected, tmp):
    bad = []
    out = os.path.join(tmp, "r.json")
    subprocess.run([tg, "analyze", path, "-q", "-o", out], check=True)
    r = json.load(open(out))
    ks, rank = kernels(path)
    comm = sorted((k for k in ks if k["comm"]), key=lambda k: k["start"])
    rk = r["ranks"][0]
    calls = rk["collective_calls"]
    if expected is not None and len(comm) != expected:
        bad.append(f"raw file has {len(comm)} collective kernels, expected {expected}")
    if len(calls) != len(comm):
        bad.append(f"{len(calls)} collective calls, raw file has {len(comm)}")
    if rk["rank"] != rank:
        bad.append(f"rank {rk['rank']} != distributedInfo.rank {rank}")
    rows = {}
    for k, c in zip(comm, calls):
        a = k["args"]
        if (c["start_ns"], c["end_ns"]) != (k["start"], k["end"]):
            bad.append(f"call at {c['start_ns']} != raw {k['start']}")
        nbytes = None
        if k["meta"]:
            nelems = max(int(a.get("In msg nelems", -1)), int(a.get("Out msg nelems", -1)))
            nbytes = nelems * DTYPE[a["dtype"]] if nelems >= 0 and a.get("dtype") in DTYPE else None
            if c["name"] != a["Collective name"] or c["group"] != a.get("Process Group Name") or c["seq"] != a.get("Seq"):
                bad.append(f"call {c} does not carry the raw metadata {a}")
        if c["bytes"] != nbytes:
            bad.append(f"call at {k['start']}: bytes {c['bytes']} != {nbytes}")
        key = (c["name"], a.get("dtype") if k["meta"] else None, nbytes, int(a["Group size"]) if k["meta"] else None)
        row = rows.setdefault(key, [0, 0])
        row[0] += 1
        row[1] += k["end"] - k["start"]
    if len(r["collectives"]) != len(rows):
        bad.append(f"{len(r['collectives'])} collective rows != {len(rows)}")
    for row in r["collectives"]:
        key = (row["collective"], row["dtype"], row["message_bytes"], row["group_size"])
        if key not in rows:
            bad.append(f"row {key} not in the raw file")
            continue
        count, total = rows[key]
        if row["count"] != count or not close(row["total_ms"], total / 1e6):
            bad.append(f"row {key}: count/total {row['count']}/{row['total_ms']} != {count}/{total / 1e6}")
        if key[2] is None:
            if row["algbw_gbs"] is not None or not row.get("message_bytes_reason"):
                bad.append(f"row {key}: no size, but a bandwidth or no reason")
            continue
        algbw = key[2] * count / total
        if not close(row["algbw_gbs"], algbw):
            bad.append(f"row {key}: algbw {row['algbw_gbs']} != {algbw}")
        f = factor(key[0], key[3])
        if f is not None and not close(row["busbw_gbs"], algbw * f):
            bad.append(f"row {key}: busbw {row['busbw_gbs']} != {algbw * f}")
    spans = union([[i["start_ns"], i["end_ns"]] for i in r["iteration_table"]])
    comm_ns = compute_ns = overlap_ns = 0
    for dev in {k["device"] for k in ks}:
        cu = intersect(union([[k["start"], k["end"]] for k in ks if k["device"] == dev and k["comm"]]), spans)
        pu = intersect(union([[k["start"], k["end"]] for k in ks if k["device"] == dev and not k["comm"]]), spans)
        comm_ns, compute_ns = comm_ns + length(cu), compute_ns + length(pu)
        overlap_ns += length(intersect(cu, pu))
    n = len(r["iteration_table"])
    for key, want in (("comm_ms", comm_ns / 1e6 / n), ("compute_ms", compute_ns / 1e6 / n),
                      ("overlap_ratio", overlap_ns / comm_ns if comm_ns else None)):
        if want is None:
            if rk[key] is not None or not rk.get(key + "_reason"):
                bad.append(f"{key}: expected null with a reason, got {rk[key]}")
        elif not close(rk[key], want):
            bad.append(f"{key} {rk[key]} != {want}")
    if rk["wait_ms"] is not None or not rk.get("wait_ms_reason"):
        bad.append("wait_ms: expected null with a reason for a single rank")
    # One classification everywhere: the timeline colours exactly these kernels as collectives
    # (matched to the raw kernels by their start and end), metadata-only ones included.
    tl = r["timeline"]
    by_time = {(k["start"], k["end"]): k for k in ks}
    shown = colls = 0
    for lane in tl["lanes"]:
        for off, dur, kind, name in lane["items"]:
            k = by_time.get((tl["start_ns"] + off, tl["start_ns"] + off + dur))
            if k is None or kind not in ("kernel", "collective"):
                continue
            shown += 1
            colls += kind == "collective"
            if (kind == "collective") != k["comm"]:
                bad.append(f"timeline: {name} at +{off} ns drawn as {kind}")
    in_span = sum(1 for k in comm if tl["start_ns"] <= k["start"] < tl["end_ns"])
    if shown == 0 or colls != in_span:
        bad.append(f"timeline: {shown} kernels matched the raw file, {colls} collectives of {in_span}")
    # The metadata survives a tracegate store and a Chrome export.
    for cmd, flag, name in (("convert", "-o", "t.db"), ("export", "--chrome", "t.json")):
        conv = os.path.join(tmp, name)
        subprocess.run([tg, cmd, path, flag, conv], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([tg, "analyze", conv, "-q", "-o", out], check=True)
        again = json.load(open(out))
        if again["collectives"] != r["collectives"]:
            bad.append(f"{cmd}: the collectives differ after the round trip")
    return bad


def synthetic(path):
    """Two ProfilerStep iterations on two devices: NCCL kernels by old and new names without
    metadata, collectives with metadata (Seq, several dtypes and group sizes; one whose name says
    nothing of communication), compute beside
    communication on the same device and on another one (which must not count as overlap)."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
           "ts": 1000.0 + 1000 * i, "dur": 900.0} for i in (1, 2)]
    meta = lambda name, dtype, n_in, n_out, group, seq: {
        "Collective name": name, "dtype": dtype, "In msg nelems": n_in, "Out msg nelems": n_out,
        "Group size": group, "Process Group Name": "3", "Process Group Ranks": "[0, 1, 2, 3]", "Seq": seq}
    seq = 0
    for i in (1, 2):
        t0 = 1000 * (i + 1)
        ks = [("gemm_kernel", 0, 10.5, 100.25, {}),
              ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 80.125, 50.5, {}),
              ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 0, 200.0, 30.0, {}),
              ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 300.0, 40.333,
               meta("_allgather_base", "BFloat16", 1000, 4000, 4, seq)),
              ("vectorized_elementwise_kernel", 0, 320.0, 100.0, {}),
              ("ncclDevKernel_ReduceScatter_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 500.0, 20.0,
               meta("reduce_scatter_tensor", "Half", 8000, 1000, 8, seq + 1)),
              ("other_device_gemm", 1, 490.0, 60.0, {}),
              ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 0, 700.0, 10.0,
               meta("send", "Float", 250, 0, 2, seq + 2)),
              ("ncclDevKernel_Gather(ncclDevKernelArgsStorage<4096ul>)", 0, 720.0, 10.0,
               meta("gather", "Float", 250, 1000, 4, seq + 3)),
              # A collective by its metadata alone (a custom communication kernel).
              ("fused_exchange_kernel<float>", 0, 740.0, 12.0, meta("allreduce", "Float", 64, 64, 4, seq + 4))]
        seq += 5
        for name, dev, off, dur, args in ks:
            args = dict(args, device=dev, stream=7, correlation=len(ev))
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": dev, "tid": 7, "ts": t0 + off, "dur": dur,
                       "args": args})
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": 2, "world_size": 4}, "traceEvents": ev}
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    tg, path = sys.argv[1], sys.argv[2]
    expected = int(sys.argv[3]) if len(sys.argv) > 3 else None
    with tempfile.TemporaryDirectory() as tmp:
        if path == "--synthetic":
            path = os.path.join(tmp, "synthetic_rank2.json")
            synthetic(path)
        bad = check(tg, path, expected, tmp)
    for b in bad[:20]:
        print(f"{path}: {b}")
    print(f"{path}: {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
