#!/usr/bin/env bash
# tests/gpu/cupti_floor.py and tests/gpu/overhead.sh without a GPU, so the device minutes are not
# spent on a typo: stand-ins for cupti_floor, tracegate record, launch_bound, the PyTorch script and
# nsys print what the real programs print, with figures fixed in advance, and the tables, JSON and
# goals are checked against those figures (recomputed here in plain Python from the rows).
# Usage: gpu_overhead_dry_run.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$repo" || exit 1
python3 -m py_compile tests/gpu/cupti_floor.py tests/gpu/overhead_summary.py tests/gpu/resnet50_infer.py && ok ||
  fail "python syntax in tests/gpu"
bash -n tests/gpu/overhead.sh && ok || fail "syntax: overhead.sh"

# --- the stand-ins -------------------------------------------------------------------------------
cat >"$dir/fake_floor" <<'PY'
#!/usr/bin/env python3
# cupti_floor: per-call figures from the configuration, the round (a counter per configuration)
# and whether tracegate (FAKE_TRACED) runs it.
import json, os, sys
a = sys.argv[1:]
if a == ["--list"]:
    print("\n".join(["none", "kernel", "allowlist_kernel"]))
    sys.exit(0)
config = a[a.index("--config") + 1]
key = config + os.environ.get("FAKE_TRACED", "")
if os.environ.get("FAKE_FAIL") == key:
    sys.exit(1)
counter = os.path.join(os.environ["FAKE_DIR"], "count_" + key)
k = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(k + 1))
extra = {"none": 0.0, "kernel": 0.5, "allowlist_kernel": 1.0}[config] + (0.4 if os.environ.get("FAKE_TRACED") else 0.0)
for loop, base in (("cudaGetLastError", 0.05), ("launch", 2.0), ("launch+sync", 8.0)):
    us = base + extra + 0.1 * (k % 3)
    print("cupti_floor " + json.dumps({"config": config, "loop": loop, "calls": 1000, "seconds": us * 1e-3,
                                       "us_per_call": us, "unit": "call"}))
print("cupti_floor " + json.dumps({"config": config, "records": 7, "buffers": 1, "note": ""}))
PY
cat >"$dir/fake_tracegate" <<'SH'
#!/usr/bin/env bash
# tracegate record [OPTIONS] -o DB -- CMD...: touches DB, runs CMD with FAKE_TRACED set.
shift
traced=1
while [ "$1" != "--" ]; do
  case $1 in -o) db=$2; shift ;; --no-driver-api) traced=2 ;; esac
  shift
done
shift
echo "a recording" >"$db"
FAKE_TRACED=$traced exec "$@"
SH
cat >"$dir/fake_launch_bound" <<'SH'
#!/usr/bin/env bash
us=4.000; [ -n "${FAKE_TRACED:-}" ] && us=4.600; [ -n "${FAKE_NSYS:-}" ] && us=5.500
echo "launch_bound: 200000 launches in 0.800 s, $us us/launch"
SH
cat >"$dir/fake_python" <<'PY'
#!/usr/bin/env python3
# resnet50_infer.py's output: per round "... ms/iter" and, with --iter-times, every iteration.
import os, sys
a = sys.argv[2:]
opt = lambda n, d: a[a.index(n) + 1] if n in a else d
batch, iters, rounds = int(opt("--batch", "1")), int(opt("--iters", "50")), int(opt("--rounds", "1"))
tiny = "--tiny" in a
if tiny:
    iters = int(opt("--tiny", "0"))
ms = 0.02 if tiny else {32: 5.0, 256: 40.0}[batch]
if os.environ.get("FAKE_TRACED"):
    ms += 0.004 if tiny else {32: 0.3, 256: 0.1}[batch]
if "--torch-profiler" in a:
    ms += 0.01 if tiny else 2.0
    open(opt("--torch-profiler", ""), "w").write("{}")
if os.environ.get("FAKE_NSYS"):
    ms += 0.006 if tiny else 0.5
for r in range(rounds):
    times = [ms] * iters
    if r == 0 and not tiny and os.environ.get("FAKE_TRACED") and os.environ.get("FAKE_OUTLIER"):
        times[3] = 3 * ms
    mode = "tiny" if tiny else "eager"
    total = sum(times) / 1e3
    print(f"resnet50 {mode} batch {batch}: {iters} iterations in {total:.3f} s, {total / iters * 1e3:.3f} ms/iter")
    if "--iter-times" in a:
        print(f"resnet50 {mode} batch {batch} iteration ms: " + " ".join(f"{t:.3f}" for t in times))
PY
cat >"$dir/fake_nsys" <<'SH'
#!/usr/bin/env bash
# nsys profile ... -o OUT CMD...: runs CMD, then fails as the nsys beside Nsight Compute does.
shift
while [ "$1" != "-o" ]; do shift; done
shift 2
FAKE_NSYS=1 "$@"
echo "nsys: cannot make a report of the .qdstrm" >&2
exit 1
SH
chmod +x "$dir"/fake_*
export FAKE_DIR=$dir

# --- cupti_floor.py ------------------------------------------------------------------------------
python3 tests/gpu/cupti_floor.py "$dir/fake_floor" "$dir/fake_tracegate" "$dir/floor" --rounds 3 --scale 0.5 \
  >"$dir/floor.out" 2>&1
[ $? = 0 ] && ok || fail "cupti_floor.py: $(cat "$dir/floor.out")"
[ -s "$dir/floor/cupti_floor.json" ] && [ -s "$dir/floor/cupti_floor.txt" ] && ok || fail "no cupti_floor.json/.txt"
ls "$dir"/floor/*.db >/dev/null 2>&1 && fail "recordings left behind" || ok
# Round r starts at configuration r: 6 configurations, 3 rounds, each configuration once a round.
order=$(grep -o '^### [a-z_]* round [0-9]' "$dir/floor/cupti_floor.log" | awk '{print $2 $4}' | tr '\n' ' ')
[ "$order" = "none1 kernel1 allowlist_kernel1 tracegate_default1 tracegate_no_driver1 tracegate_api_all1 kernel2 allowlist_kernel2 tracegate_default2 tracegate_no_driver2 tracegate_api_all2 none2 allowlist_kernel3 tracegate_default3 tracegate_no_driver3 tracegate_api_all3 none3 kernel3 " ] &&
  ok || fail "not interleaved: $order"
grep -q -- '--config none --scale 0.5' "$dir/floor/cupti_floor.log" && grep -q 'fake_tracegate record --api all -o' "$dir/floor/cupti_floor.log" &&
  grep -q 'fake_tracegate record --no-driver-api -o' "$dir/floor/cupti_floor.log" && ok || fail "commands: $(grep '^###' "$dir/floor/cupti_floor.log")"
# The figures: rounds 0.0, 0.1, 0.2 over the base, so min = base, median = base + 0.1.
python3 - "$dir/floor/cupti_floor.json" <<'PY' && ok || fail "cupti_floor.json figures"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
def near(a, b): return abs(a - b) < 1e-9
want = {("none", "launch"): (2.0, 2.1), ("kernel", "launch"): (2.5, 2.6), ("allowlist_kernel", "launch"): (3.0, 3.1),
        ("tracegate_default", "launch"): (2.4, 2.5), ("tracegate_api_all", "launch+sync"): (8.4, 8.5),
        ("none", "cudaGetLastError"): (0.05, 0.15)}
for (c, lp), (mn, md) in want.items():
    assert near(s[c][lp]["min"], mn) and near(s[c][lp]["median"], md) and s[c][lp]["n"] == 3, (c, lp, s[c][lp])
assert near(s["kernel"]["launch"]["median_minus_none"], 0.5)
assert len(d["runs"]) == 6 * 3 * 3 and not d["failures"] and not d["skipped_for_budget"]
assert d["verdicts"] == ["launch: tracegate_default median 2.500 us vs the floor (allowlist_kernel min) 3.000 us: 0.83x (goal <= 1.2x: met)"], d["verdicts"]
assert d["records"]["none"][0]["records"] == 7
PY
grep -qx '| none | 0.050/0.150 | 2.000/2.100 | 8.000/8.100 |' "$dir/floor/cupti_floor.txt" && ok ||
  fail "table row: $(cat "$dir/floor/cupti_floor.txt")"
grep -qx '| allowlist_kernel | +1.000 | +1.000 | +1.000 |' "$dir/floor/cupti_floor.txt" && ok || fail "delta row"
# A failing configuration fails its cells and the exit code, not the others.
rm -f "$dir"/count_*
FAKE_FAIL=kernel python3 tests/gpu/cupti_floor.py "$dir/fake_floor" "$dir/fake_tracegate" "$dir/floor2" --rounds 1 \
  >"$dir/floor2.out" 2>&1
[ $? = 1 ] && ok || fail "a failed configuration must fail the run"
grep -q '^| kernel | failed | failed | failed |$' "$dir/floor2/cupti_floor.txt" && grep -q '^FAILED runs: kernel round 1: exit 1$' "$dir/floor2/cupti_floor.txt" &&
  grep -q '^| none | 0.050/0.050 |' "$dir/floor2/cupti_floor.txt" && ok || fail "failed cells: $(cat "$dir/floor2/cupti_floor.txt")"
# The budget: nothing starts once it is spent, and the table says what was not run.
python3 tests/gpu/cupti_floor.py "$dir/fake_floor" "$dir/fake_tracegate" "$dir/floor3" --rounds 2 --budget-s 0 >/dev/null 2>&1
grep -q '^not run (budget 0 s spent): none round 1; kernel round 1;' "$dir/floor3/cupti_floor.txt" && ok ||
  fail "budget: $(cat "$dir/floor3/cupti_floor.txt")"

# --- overhead.sh ---------------------------------------------------------------------------------
run_overhead() {  # OUT SET [ENV=VALUE...]
  local o=$1 s=$2
  shift 2
  env OVERHEAD_PYTHON="$dir/fake_python" OVERHEAD_NSYS="$dir/fake_nsys" "$@" \
    bash tests/gpu/overhead.sh "$dir/fake_tracegate" "$dir/fake_launch_bound" "$o" 2 "$s" >"$o.out" 2>&1
}
run_overhead "$dir/ovh" all
rc=$?
[ "$rc" = 0 ] && ok || fail "overhead.sh exit $rc: $(tail -30 "$dir/ovh.out")"
tsv=$dir/ovh/overhead.tsv
# launch_bound: 2 rounds x (none, tracegate, nsys, none again); each PyTorch workload: one process
# per configuration (torch_tiny 2 rounds inside it, b32 5, b256 3).
for w_n in launch_bound:8 torch_tiny:10 resnet50_b32:25 resnet50_b256:15; do
  [ "$(grep -c "^${w_n%:*}	" "$tsv")" = "${w_n#*:}" ] && ok || fail "${w_n%:*}: $(grep -c "^${w_n%:*}	" "$tsv") rows, want ${w_n#*:}"
done
[ "$(cut -f1,2 "$tsv" | grep -c '^launch_bound	nsys$')" = 2 ] && ok || fail "nsys's figures (the program's own) must count though nsys failed"
[ "$(awk -F'\t' '$1 == "resnet50_b32" && NF == 64' "$dir/ovh/iterations.tsv" | wc -l)" = 25 ] && ok ||
  fail "iterations.tsv: want 25 rows of 60 iterations for b32"
[ -s "$dir/ovh/resnet_b32.db" ] && [ -s "$dir/ovh/resnet_b32.torch.json" ] && ok || fail "validate.sh part 3 needs resnet_b32.db and .torch.json"
[ ! -e "$dir/ovh/lb.db" ] && [ ! -e "$dir/ovh/resnet_b256.db" ] && ok || fail "large recordings left behind"
sum=$dir/ovh/overhead_summary.txt
for line in \
  'launch_bound: untraced median 4.000 us/launch; A/A spread 0.00%' \
  '  launch_bound/tracegate: median 4.600 us/launch of 2 (+15.0% vs untraced; counts: beyond the A/A spread); process wall' \
  '  resnet50_b32: tracegate 5.300 vs torch.profiler 7.000 ms/iter: tracegate below torch.profiler' \
  '  resnet50_b32: tracegate 5.300 vs nsys 5.500 ms/iter: tracegate below nsys' \
  '  goal no outlier iterations the untraced runs do not show: met (0 iterations over 2x the untraced median; an untraced process had up to 0)' \
  '  goal overhead within the A/A spread or < 1%: met (+0.25% vs spread 0.00%)' \
  '  torch_tiny: tracegate 0.024 vs torch.profiler 0.030 ms/iter: tracegate below torch.profiler'; do
  grep -qF -- "$line" "$sum" && ok || fail "summary lacks: $line"
done
grep -q 'per iteration: median 5.300, p90 5.300, max 5.300 ms, 0 of 300 over 2x the untraced median' "$sum" && ok ||
  fail "b32 per-iteration line: $(grep 'b32/tracegate' "$sum")"
# Independent recomputation of the tracegate effects from overhead.tsv.
python3 - "$tsv" "$dir/ovh/overhead_summary.json" <<'PY' && ok || fail "summary JSON vs recomputation"
import csv, json, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1]), delimiter="\t") if r[3] not in ("-",)]
j = json.load(open(sys.argv[2]))
for w in ("launch_bound", "torch_tiny", "resnet50_b32", "resnet50_b256"):
    un = statistics.median([float(r[3]) for r in rows if r[0] == w and r[1] in ("none", "none again")])
    tg = statistics.median([float(r[3]) for r in rows if r[0] == w and r[1] == "tracegate"])
    got = j[w]["configs"]["tracegate"]["effect_pct"]
    assert abs(got - 100 * (tg / un - 1)) < 1e-9, (w, got)
PY
# The per-launch goal against cupti_floor's minimum, and an outlier the untraced runs do not show.
run_overhead "$dir/ovh2" launch OVERHEAD_FLOOR_JSON="$dir/floor/cupti_floor.json"
grep -qF 'goal us per launch at most 1.2x the cupti_floor minimum: met (4.600 us vs floor 3.000 us: 1.53x)' "$dir/ovh2/overhead_summary.txt" &&
  fail "1.53x must not meet 1.2x" || ok
grep -qF 'goal us per launch at most 1.2x the cupti_floor minimum: NOT met (4.600 us vs floor 3.000 us: 1.53x)' "$dir/ovh2/overhead_summary.txt" &&
  ok || fail "floor goal: $(cat "$dir/ovh2/overhead_summary.txt")"
run_overhead "$dir/ovh3" resnet FAKE_OUTLIER=1
[ $? = 1 ] && ok || fail "an unexplained outlier must fail"
grep -qF 'goal no outlier iterations the untraced runs do not show: NOT met (1 iterations over 2x the untraced median; an untraced process had up to 0)' \
  "$dir/ovh3/overhead_summary.txt" && ok || fail "outlier goal: $(cat "$dir/ovh3/overhead_summary.txt")"
# No nsys: its configuration is left out, said once.
run_overhead "$dir/ovh4" launch OVERHEAD_NSYS=none
grep -q '^nsys: not found, its configuration is not run$' "$dir/ovh4.out" && ! grep -q 'nsys' "$dir/ovh4/overhead.tsv" && ok ||
  fail "without nsys: $(head -3 "$dir/ovh4.out")"
# --- floor_step.sh: the one prepared device command, on a stand-in bundle --------------------------
mkdir -p "$dir/bundle/tests/gpu"
ln -s "$dir/fake_tracegate" "$dir/bundle/tracegate"
ln -s "$dir/fake_floor" "$dir/bundle/tests/gpu/cupti_floor"
ln -s "$dir/fake_launch_bound" "$dir/bundle/tests/gpu/launch_bound"
rm -f "$dir"/count_*
OVERHEAD_PYTHON="$dir/fake_python" OVERHEAD_NSYS="$dir/fake_nsys" FLOOR_SCALE=0.1   bash tests/gpu/floor_step.sh "$dir/bundle" "$dir/step" >"$dir/step.out" 2>&1
rc=$?
# The floor's launch minimum (3.0 us, allowlist_kernel) against launch_bound under tracegate (4.6):
# the per-launch goal is not met, so the step says so in its exit code.
[ "$rc" = 1 ] && ok || fail "floor_step.sh exit $rc: $(tail -20 "$dir/step.out")"
[ "$(cd "$dir/step" && ls | tr '\n' ' ')" = "env.txt floor.txt overhead.txt raw.tar.gz summary.txt " ] && ok ||
  fail "what comes back: $(ls "$dir/step")"
tar -tzf "$dir/step/raw.tar.gz" | sort | tr '\n' ' ' | grep -q 'raw/floor/cupti_floor.json .*raw/ovh/iterations.tsv raw/ovh/overhead.log raw/ovh/overhead.tsv raw/ovh/overhead_summary.json raw/ovh/overhead_summary.txt raw/ovh/resnet_b32.db.gz' &&
  ok || fail "raw.tar.gz: $(tar -tzf "$dir/step/raw.tar.gz" | tr '\n' ' ')"
tar -tzf "$dir/step/raw.tar.gz" | grep -q 'torch.json\|torch_tiny' && fail "torch traces or torch_tiny in the step" || ok
grep -q '^cupti_floor (exit 0):$' "$dir/step/summary.txt" && grep -q '^| tracegate_default |' "$dir/step/summary.txt" &&
  grep -q '^overhead.sh (exit 1):$' "$dir/step/summary.txt" &&
  grep -qF 'goal us per launch at most 1.2x the cupti_floor minimum: NOT met' "$dir/step/summary.txt" &&
  grep -qF 'resnet50_b256: untraced median 40.000 ms/iter' "$dir/step/summary.txt" && ok ||
  fail "summary.txt: $(cat "$dir/step/summary.txt")"
finish gpu_overhead_dry_run
