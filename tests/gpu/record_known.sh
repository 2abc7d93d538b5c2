#!/usr/bin/env bash
# GPU test: `tracegate record` a program whose work is known (known_workload.cu) and check that the
# recording holds exactly that work: the same kernels the same number of times, kernel durations
# within a few percent of the program's CUDA-event timings, the copies, the memset, the
# synchronisations, the NVTX range, the graph launches with their graph ids, the memory peak, and
# no lost data; the NVML samples on the same clock as the activity and on the CUDA device ids.
# Usage: record_known.sh TRACEGATE KNOWN_WORKLOAD [KEEP_DIR]
# (KEEP_DIR: keep the recording and the program's output there, e.g. $OUT/record_known).
# Without a GPU, tests/tools' fake_known_workload stands in for KNOWN_WORKLOAD (validate.sh's dry run).
set -u
tg=$1
known=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

if ! "$tg" record -o "$dir/known.db" -- "$known" >"$dir/record.out" 2>"$dir/record.err"; then
  echo "FAIL: tracegate record exited $?"
  cat "$dir/record.out" "$dir/record.err"
  exit 1
fi
cat "$dir/record.out" "$dir/record.err"
if [ $# -ge 3 ]; then mkdir -p "$3" && cp "$dir/known.db" "$dir/record.out" "$dir/record.err" "$3/"; fi

# Warnings of the collector or the launcher ("tracegate: ...") fail the test.
if grep -q '^tracegate: ' "$dir/record.err"; then
  echo "FAIL: tracegate warned:"
  grep '^tracegate: ' "$dir/record.err"
  exit 1
fi

python3 - "$dir/known.db" "$dir/record.out" <<'EOF'
import sqlite3, sys
from collections import Counter, defaultdict

db, program_out = sys.argv[1], sys.argv[2]
fails = []
def check(cond, msg):
    if not cond:
        fails.append(msg)

# What the program says it did (its stdout passes through `tracegate record`).
event_ms = defaultdict(list)
warmups = Counter()
graph_kernels, copies, memsets, ranges, allocated_mb = {}, Counter(), Counter(), set(), 0
for line in open(program_out):
    f = line.split()
    if not f:
        continue
    if f[0] == "kernel":
        event_ms[f[1]].append(float(f[2]))
    elif f[0] == "warmup":
        warmups[f[1]] += int(f[2])
    elif f[0] == "graph_kernel":
        graph_kernels[f[1]] = int(f[2])
    elif f[0] == "copy":
        copies[(f[1], int(f[2]))] += 1
    elif f[0] == "memset":
        memsets[int(f[1])] += 1
    elif f[0] == "range":
        ranges.add(f[1])
    elif f[0] == "allocated_mb":
        allocated_mb = int(f[1])
check(event_ms and copies and memsets and ranges, "the program's output lists no work: " + program_out)

con = sqlite3.connect(db)
q = lambda sql: con.execute(sql).fetchall()
name = lambda i: con.execute("SELECT value FROM StringIds WHERE id = ?", (i,)).fetchone()[0]

# Kernels: exactly the launched ones. The workload's kernels sit in an anonymous namespace, so the
# demangled names read "(anonymous namespace)::known_fma_kernel(float*, unsigned long, int)": the
# short name is the last scope of what precedes the argument list.
def short_name(demangled):
    base = demangled.replace("(anonymous namespace)::", "")
    return base.split("(")[0].split("<")[0].split("::")[-1]
kernels = defaultdict(list)
for start, end, name_id, graph_id, graph_node in q(
        "SELECT start, end, demangledName, graphId, graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"):
    kernels[short_name(name(name_id))].append((start, end, graph_id, graph_node))
expected = Counter({k: len(v) for k, v in event_ms.items()}) + Counter(graph_kernels) + warmups
got = Counter({k: len(v) for k, v in kernels.items()})
check(got == expected, f"kernels: recorded {dict(got)}, the program launched {dict(expected)}")

# Durations: the i-th timed launch of each kernel (after its untimed warm-ups, which take module
# loading out of the timings) against its CUDA-event time, within 3% (+5 us for the event's own
# resolution and the launch between the event and the kernel).
for k, times in event_ms.items():
    for i, (ms, rec) in enumerate(zip(times, kernels.get(k, [])[warmups[k]:])):
        cupti_ms = (rec[1] - rec[0]) / 1e6
        slack = 0.03 * ms + 0.005
        print(f"{k}[{i}]: CUDA events {ms:.4f} ms, recorded {cupti_ms:.4f} ms, difference {100 * (cupti_ms - ms) / ms:+.2f}%")
        check(abs(cupti_ms - ms) <= slack, f"{k}[{i}]: recorded {cupti_ms:.4f} ms, CUDA events {ms:.4f} ms")
    for rec in kernels.get(k, []):
        check(rec[2] is None, f"{k}: launched directly but recorded with graph id {rec[2]}")

# Graph launches keep one graph id and one node id.
for k, n in graph_kernels.items():
    recs = kernels.get(k, [])
    ids = {(r[2], r[3]) for r in recs}
    check(len(ids) == 1 and None not in next(iter(ids), (None,)), f"{k}: graph/node ids {ids}, expected one pair")

# Copies and memsets (copyKind: 1 HtoD, 2 DtoH, 8 DtoD).
kinds = {1: "HtoD", 2: "DtoH", 8: "DtoD"}
got_copies = Counter((kinds.get(c, str(c)), b) for c, b in q("SELECT copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
check(got_copies == copies, f"copies: recorded {dict(got_copies)}, the program made {dict(copies)}")
got_memsets = Counter(b for (b,) in q("SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"))
check(got_memsets == memsets, f"memsets: recorded {dict(got_memsets)}, the program made {dict(memsets)}")

# Synchronisations: the stream sync (3), the event syncs (1) and the device sync (4) are there.
sync_types = {t for (t,) in q("SELECT syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")}
check({1, 3, 4} <= sync_types, f"sync types recorded {sorted(sync_types)}, expected 1, 3 and 4 among them")

# Runtime API calls (driver calls only where the program or a library calls the driver itself),
# each kernel matched by correlation id to its launch.
api = dict(q("SELECT eventClass, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY eventClass"))
print(f"API calls: {api.get(0, 0)} runtime, {api.get(1, 0)} driver")
check(api.get(0, 0) > 0, f"no runtime API calls recorded: {api}")
unmatched = q("""SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS
                 (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId)""")[0][0]
check(unmatched == 0, f"{unmatched} kernels without their launching API call")

# The NVTX range.
texts = {t for (t,) in q("SELECT COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) FROM NVTX_EVENTS")}
check(ranges <= texts, f"NVTX ranges recorded {texts}, expected {ranges}")

# Devices, the process, the memory peak, no lost data.
gpus = q("SELECT name, smCount FROM TARGET_INFO_GPU")
check(len(gpus) >= 1 and gpus[0][1] > 0, f"devices: {gpus}")
check(len(q("SELECT pid FROM PROCESSES")) == 1, f"processes: {q('SELECT pid, name FROM PROCESSES')}")
meta = dict(q("SELECT key, value FROM tracegate_metadata"))
peak = float(meta.get("memory_peak_mb", "0"))
check(peak >= allocated_mb, f"memory_peak_mb {peak}, the program allocated {allocated_mb} MiB")
check(meta.get("memory_peak_mb_source") == "cupti allocations", f"memory_peak_mb_source: {meta.get('memory_peak_mb_source')}")
check("cupti_missed" not in meta, f"the collector missed: {meta.get('cupti_missed')}")
quality = {k: n for k, n in q("SELECT key, count FROM tracegate_quality") if n}
for bad in ("source_dropped_records", "trace_incomplete", "unmatched_correlation", "unmatched_range_end"):
    check(bad not in quality, f"data quality: {bad} = {quality.get(bad)}")
print("quality counters:", quality or "none")

# Telemetry: NVML samples on the activity's clock and on CUDA's device ids (NVML's index is
# remapped by UUID: under CUDA_VISIBLE_DEVICES they differ). Another clock is off by minutes to
# decades; the first sample may come a moment after the first kernel on a loaded machine (the
# sampler starts beside the program), so the samples must overlap the kernels and start within
# 10 s of them, not bracket them to the nanosecond.
samples = q("SELECT min(time), max(time), count(*) FROM tracegate_samples")[0]
sample_devices = {d for (d,) in q("SELECT DISTINCT deviceId FROM tracegate_samples")}
gpu_ids = {i for (i,) in q("SELECT id FROM TARGET_INFO_GPU")}
k_first, k_last = q("SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
print(f"NVML samples: {samples[2]} on devices {sorted(sample_devices)}; CUDA devices {sorted(gpu_ids)}; "
      f"telemetry: {meta.get('record.telemetry')}")
check(samples[2] > 0, f"no NVML samples: {meta.get('record.telemetry')}")
if samples[2] and k_first is not None:
    check(samples[0] <= k_last and samples[1] >= k_first and abs(samples[0] - k_first) < 10_000_000_000,
          f"samples {samples[0]}..{samples[1]} do not overlap the kernels {k_first}..{k_last}: another clock?")
check(sample_devices <= gpu_ids, f"samples on devices {sorted(sample_devices)}, CUDA devices are {sorted(gpu_ids)}")
uuids = {k: v for k, v in meta.items() if k.startswith("cuda_device_uuid.")}
check(len(uuids) >= 1, "no cuda_device_uuid.* metadata: samples cannot be matched to CUDA devices")
print("device UUIDs:", uuids, "device table from:", meta.get("cupti_device_source"))

for f in fails:
    print("FAIL:", f)
print(f"record_known: {'FAILED' if fails else 'passed'}")
sys.exit(1 if fails else 0)
EOF
