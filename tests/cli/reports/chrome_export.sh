#!/usr/bin/env bash
# tracegate export --chrome against the Chrome trace-event format's rules, checked by an
# independent checker (chrome_trace_check.py: each pid one process name, each track one thread
# name, complete slices nested per track, flows joining existing slices, counters numeric, ids in
# 0..2^31-1, ts >= 0) on the export of every real trace: ../shared/traces, tests/fixtures/real and
# the H200 recordings in tests/fixtures/gpu. First the checker itself is shown to catch each rule.
# Then the issue-19 defects on real data: a GPU never shares a pid with a host process, syncs sit
# on their own device and track, NVML samples are counters, findings are on the timeline.
# Usage: chrome_export.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
check=$(dirname "$0")/chrome_trace_check.py

# 1. The checker catches what it is meant to catch.
python3 - "$check" >"$dir/selftest" 2>&1 <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("c", sys.argv[1]); c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c)
M = lambda what, pid, tid, **args: {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": args}
X = lambda pid, tid, ts, dur, name="x": {"ph": "X", "name": name, "cat": "c", "pid": pid, "tid": tid, "ts": ts, "dur": dur}
named = [M("process_name", 1, 0, name="p"), M("thread_name", 1, 1, name="t")]
cases = {
    "valid": (named + [X(1, 1, 0, 10), X(1, 1, 2, 3), {"ph": "C", "name": "n", "pid": 1, "ts": 1, "args": {"W": 3}}], None),
    "two process names": (named + [M("process_name", 1, 0, name="q"), X(1, 1, 0, 1)], "process_name"),
    "no process name": ([M("thread_name", 1, 1, name="t"), X(1, 1, 0, 1)], "process_name"),
    "no thread name": ([M("process_name", 1, 0, name="p"), X(1, 1, 0, 1)], "thread_name"),
    "partial overlap": (named + [X(1, 1, 0, 10), X(1, 1, 5, 10)], "nesting"),
    "shorter first": (named + [X(1, 1, 0, 1), X(1, 1, 0, 10)], "order"),
    "negative tid": (named + [X(1, -5, 0, 1)], "pid/tid"),
    "tid 0": ([M("process_name", 1, 0, name="p"), M("thread_name", 1, 0, name="t"), X(1, 0, 0, 1)], "pid/tid"),
    "string pid": (named + [X("Spans", 1, 0, 1)], "pid/tid"),
    "negative ts": (named + [X(1, 1, -1.5, 1)], "ts"),
    "string counter": (named + [{"ph": "C", "name": "n", "pid": 1, "ts": 1, "args": {"W": "hot"}}], "counter"),
    "flow without start": (named + [X(1, 1, 0, 10), {"ph": "f", "cat": "a", "name": "a", "id": 1, "pid": 1, "tid": 1, "ts": 1, "bp": "e"}], "flow"),
    "flow off its slice": (named + [X(1, 1, 0, 10), {"ph": "s", "cat": "a", "name": "a", "id": 1, "pid": 1, "tid": 1, "ts": 1},
                           {"ph": "f", "cat": "a", "name": "a", "id": 1, "pid": 1, "tid": 1, "ts": 20, "bp": "e"}], "flow binding"),
    "flow back in time": (named + [X(1, 1, 0, 10), {"ph": "s", "cat": "a", "name": "a", "id": 1, "pid": 1, "tid": 1, "ts": 5},
                          {"ph": "f", "cat": "a", "name": "a", "id": 1, "pid": 1, "tid": 1, "ts": 2, "bp": "e"}], "flow time"),
}
bad = 0
for name, (events, rule) in cases.items():
    problems = c.check({"displayTimeUnit": "ns", "traceEvents": events})
    ok = not problems if rule is None else any(p.startswith(rule + ":") for p in problems)
    if not ok:
        bad += 1
        print(f"checker case '{name}': want {rule or 'no problem'}, got {problems}")
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] && ok || fail "the checker: $(cat "$dir/selftest")"

# 2. Every real trace's export keeps the rules.
traces=()
if [ -d "$shared" ]; then
  for f in "$shared"/*.json.gz "$shared"/*.sqlite; do traces+=("$f"); done
else
  echo "skipped ../shared/traces: not present beside the checkout"
fi
for f in "$fixtures"/real/*.json.gz "$fixtures"/gpu/*.json.gz; do traces+=("$f"); done
for f in "$fixtures"/gpu/*.db.gz; do
  gunzip -c "$f" >"$dir/$(basename "$f" .gz)" && traces+=("$dir/$(basename "$f" .gz)") || fail "cannot decompress $f"
done
exports=()
for f in "${traces[@]}"; do
  out="$dir/$(basename "$f").chrome.json"
  if "$tg" export "$f" --chrome "$out" >"$dir/export.out" 2>&1; then exports+=("$out"); ok
  else fail "export $(basename "$f"): $(cat "$dir/export.out")"; fi
done
if python3 "$check" "${exports[@]}" >"$dir/checked" 2>&1; then ok; else fail "$(grep -v ': ok: ' "$dir/checked" | head -40)"; fi
echo "checked $(grep -c ': ok: ' "$dir/checked") exports"

# 3. The defects of issue 19 on real data.
python3 - "$dir" >"$dir/defects" 2>&1 <<'PY'
import glob, json, os, sys
d = sys.argv[1]
fails = []
def load(name):
    path = os.path.join(d, name + ".chrome.json")
    return json.load(open(path)) if os.path.exists(path) else None
def names(doc):
    procs, threads = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name": procs[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name": threads[(e["pid"], e["tid"])] = e["args"]["name"]
    return procs, threads

# The nsys export of a 2-GPU job: processes 144 and 145, one GPU each; the source records every
# sync on device 0, and its processes include pid 1 (dumb-init).
doc = load("nsys_2gpu_export.sqlite")
if doc:
    procs, threads = names(doc)
    gpu = {n.split()[1]: p for p, n in procs.items() if n.startswith("GPU ")}
    host = {p for p, n in procs.items() if not n.startswith("GPU ") and n != "tracegate findings"}
    if sorted(gpu) != ["0", "1"]: fails.append(f"nsys: GPU processes {procs}")
    if set(gpu.values()) & host: fails.append(f"nsys: a GPU shares a pid with a host process: {procs}")
    if any(p in gpu.values() for p in (0, 1)): fails.append(f"nsys: a GPU has its device id as pid: {gpu}")
    syncs = [e for e in doc["traceEvents"] if e.get("cat") == "cuda_sync"]
    by_dev = {dev: sum(1 for e in syncs if e["pid"] == gpu[dev]) for dev in gpu}
    if not (by_dev.get("0") and by_dev.get("1")): fails.append(f"nsys: syncs per GPU {by_dev}, want both")
    if any(e["args"]["device"] != int(procs[e["pid"]].split()[1]) for e in syncs): fails.append("nsys: a sync's device differs from its process")
    stream = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    if any((e["pid"], e["tid"]) in stream for e in syncs): fails.append("nsys: a sync on a stream's track")
    if not all("sync: host waits" in threads[(e["pid"], e["tid"])] for e in syncs): fails.append("nsys: sync track names")
    host_threads = [n for (p, t), n in threads.items() if p in host]
    if not host_threads or not all(n.startswith("thread ") for n in host_threads): fails.append(f"nsys: host thread names {host_threads[:5]}")

# Kineto: syncs no longer overlap the copies of their stream (alexnet), negative tids (NCCL rank).
doc = load("kineto_alexnet_train_step.json.gz")
if doc:
    procs, threads = names(doc)
    syncs = [e for e in doc["traceEvents"] if e.get("cat") == "cuda_sync"]
    if len(syncs) != 41 or not all(threads[(e["pid"], e["tid"])].endswith("sync: host waits") for e in syncs):
        fails.append(f"alexnet: {len(syncs)} syncs, tracks {sorted({threads[(e['pid'], e['tid'])] for e in syncs})}")

# The H200 recordings: NVML samples as numeric counters on their GPU, findings on the timeline.
for name in ("resnet50_eager_b32.db", "known_workload.db"):
    doc = load(name)
    if not doc: fails.append(f"{name}: no export"); continue
    procs, threads = names(doc)
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    kinds = {e["name"] for e in counters}
    if not {"power", "temperature", "SM clock"} <= kinds: fails.append(f"{name}: counters {kinds}")
    if any(not procs.get(e["pid"], "").startswith("GPU 0") for e in counters): fails.append(f"{name}: a counter off GPU 0")
    marks = [e for e in doc["traceEvents"] if e["ph"] == "i" and e.get("cat") == "finding"]
    findings = [p for p, n in procs.items() if n == "tracegate findings"]
    if name.startswith("resnet") and (not marks or len(findings) != 1 or any(e["pid"] != findings[0] for e in marks)):
        fails.append(f"{name}: {len(marks)} finding marks, findings process {findings}")
    if name.startswith("resnet") and not any(e.get("cat") == "finding" and e["ph"] == "X" for e in doc["traceEvents"]):
        fails.append(f"{name}: no claimed interval on the findings tracks")
for f in fails: print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
[ $? = 0 ] && ok || fail "$(cat "$dir/defects")"

# 4. --no-findings exports the trace alone.
"$tg" export "$fixtures/real/kineto_alexnet_train_step.json.gz" --chrome "$dir/plain.json" --no-findings >/dev/null &&
  ! grep -q '"cat":"finding"' "$dir/plain.json" && ok || fail "--no-findings"
finish chrome_export
