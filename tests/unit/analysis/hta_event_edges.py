#!/usr/bin/env python3
"""Independent count of the cross-stream event edges HTA's critical path builds on a Kineto trace
(critical_path_hta_test.cpp pastes its output as constants). Plain Python over the JSON, nothing
from tracegate: for every cuda_sync event naming its event's record (wait_on_stream and
wait_on_cuda_event_record_corr_id > -1), the event's work is the GPU event launched last (by the
launch call's ts) onto (device, wait_on_stream) before the cudaEventRecord call; a "Stream Wait
Event" makes the first GPU event its cudaStreamWaitEvent's thread launches onto the waiting stream
afterwards wait for it, an "Event Sync" makes the host call with the sync's correlation wait for it.

usage: hta_event_edges.py TRACE.json.gz [--delay CORR] [--gap CORR CORR]
"""
import gzip
import json
import sys


def main(argv):
    doc = json.load(gzip.open(argv[1]))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    xs = [e for e in events if e.get("ph") == "X" and isinstance(e.get("args"), dict)]
    gpu = {}  # correlation -> GPU event
    for e in xs:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in e["args"]:
            gpu.setdefault(e["args"]["correlation"], e)
    calls = {}  # correlation -> runtime call
    for e in xs:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]:
            calls[e["args"]["correlation"]] = e
    launches = []  # (call ts, correlation, device, stream, pid, tid)
    for c, e in calls.items():
        if c in gpu:
            g = gpu[c]["args"]
            launches.append((e["ts"], c, g.get("device"), g.get("stream"), e["pid"], e["tid"]))
    launches.sort()
    waits, syncs = [], []
    for e in xs:
        a = e["args"]
        if e.get("cat") != "cuda_sync" or a.get("wait_on_stream", -1) < 0:
            continue
        rec_corr = a.get("wait_on_cuda_event_record_corr_id", -1)
        if rec_corr < 0 or rec_corr not in calls or a["correlation"] not in calls:
            continue
        rec_ts = calls[rec_corr]["ts"]
        before = [l for l in launches if l[2] == a["device"] and l[3] == a["wait_on_stream"] and l[0] < rec_ts]
        if not before:
            continue
        src = before[-1][1]
        call = calls[a["correlation"]]
        if a["cuda_sync_kind"] == "Stream Wait Event":
            after = [l for l in launches if l[2] == a["device"] and l[3] == a["stream"] and l[0] > call["ts"]
                     and l[4] == call["pid"] and l[5] == call["tid"]]
            if after:
                waits.append((src, after[0][1], gpu[src]["name"][:30], gpu[after[0][1]]["name"][:30]))
        elif a["cuda_sync_kind"] == "Event Sync":
            syncs.append((src, a["correlation"], call["name"]))
    print("stream wait edges (event's work corr -> waiting work corr):", len(waits))
    for w in waits:
        print("  ", w)
    print("event sync edges (event's work corr -> host call corr):", len(syncs))
    for s in syncs:
        print("  ", s)
    i = 2
    while i < len(argv):
        if argv[i] == "--delay":  # a GPU event's start minus its launch call's start, us
            c = int(argv[i + 1])
            print("launch delay of", c, ":", gpu[c]["ts"] - calls[c]["ts"], "us")
            i += 2
        elif argv[i] == "--gap":  # the second GPU event's start minus the first's end, us
            c1, c2 = int(argv[i + 1]), int(argv[i + 2])
            print("gap", c1, "->", c2, ":", gpu[c2]["ts"] - gpu[c1]["ts"] - gpu[c1]["dur"], "us")
            i += 3
        else:
            raise SystemExit("unknown option " + argv[i])


if __name__ == "__main__":
    main(sys.argv)
