#!/usr/bin/env bash
# Issue 6's GPU acceptance in one run (see docs/KERNELS.md): on a machine with a GPU,
#   1. tracegate-kernel-check: every fused kernel vs its unfused pair and the CPU reference
#      (100 random inputs each);
#   2. tracegate-kernel-bench: the seed's table of every pair, with the device-to-device copy
#      bandwidth measured in the same run (fused element-wise kernels must reach 85% of it), and
#      Conv+BN+Add+ReLU TOPS fused vs unfused at batch 32..2048;
#   3. Amdahl against reality: record the model unfused; P of res3 from the trace (predict
#      --launched-in); S from the benchmark at the model's batch; the prediction; then record it
#      with res3 fused and compare the measured gain with the prediction;
#   4. each pattern knob recorded with and without it: analyze must report the matching finding
#      exactly when the knob is on. The small recordings are kept for tests/fixtures/.
# Usage: reference_workloads.sh BUILD_DIR OUT_DIR [BATCH] [STEPS]   (exit 0 when every check holds)
#   BUILD_DIR: a build directory or a ci/gpu_bundle.sh bundle (its env.sh is sourced);
#   STEPS: which of 1-4 to run, e.g. "1 2" then "3 4" in two calls of at most 10 minutes each
#   (step 3 reads S from step 2's bench.json in OUT_DIR). Default: all.
set -u
build=$1
out=$2
batch=${3:-32}
steps=${4:-1 2 3 4}
# shellcheck disable=SC1091
[ -f "$build/env.sh" ] && . "$build/env.sh"
tg=$build/tracegate
kdir=$build
mkdir -p "$out"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
step() { echo; echo "== $*"; }
want() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# Google Benchmark names carry /iterations:50/manual_time: match on the name's parts.

if want 1; then
step "1. correctness (tracegate-kernel-check)"
"$kdir/tracegate-kernel-check" | tee "$out/check.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "tracegate-kernel-check"
fi

if want 2; then
step "2. benchmark table (tracegate-kernel-bench)"
"$kdir/tracegate-kernel-bench" --table "$out/bench_table.md" --benchmark_format=json \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json >"$out/bench.txt" 2>&1 ||
  fail "tracegate-kernel-bench (see $out/bench.txt)"
cat "$out/bench_table.md" 2>/dev/null
python3 - "$out/bench.json" <<'EOF' || fail "fused element-wise kernels below 85% of the copy bandwidth, or benchmarks skipped"
import json, sys
d = json.load(open(sys.argv[1]))
bad, checked = [], 0
for b in d["benchmarks"]:
    parts = b["name"].split("/")
    if b.get("error_occurred"):
        print(f'SKIPPED {b["name"]}: {b.get("error_message")}')
        bad.append(b["name"])
        continue
    if parts[0] == "elementwise" and "fused" in parts:
        checked += 1
        share = b["copy_bw_share"]
        print(f'{"/".join(parts[:4])}: {b["GB/s"]:.0f} GB/s = {100 * share:.1f}% of the D2D copy')
        if share < 0.85:
            bad.append(b["name"])
if checked == 0:
    print("no fused element-wise benchmark in the output")
sys.exit(1 if bad or checked == 0 else 0)
EOF
fi

if want 3; then
step "3. Amdahl: P of res3 from a recording, S from the benchmark, prediction vs measurement"
model="$kdir/tracegate-model --batch $batch --iterations 30 --warmup 5"
"$tg" record -o "$out/model_unfused.db" -- $model >"$out/model_unfused.txt" 2>&1 || fail "record unfused model"
"$tg" record -o "$out/model_res3_fused.db" -- $model --fuse res3 >"$out/model_res3_fused.txt" 2>&1 ||
  fail "record res3-fused model"
# S for res3's blocks at this batch: the benchmark's conv pair at the same shape, from step 2's
# bench.json when it has this batch (32, 256, 1024, 2048), else a run of just that pair. (P
# from the res3 range also holds res3's transition, always fused, so the prediction runs a
# little high.)
bench_s=$out/bench.json
if ! grep -q "conv_bn_add_relu/res3/batch${batch}/" "$bench_s" 2>/dev/null; then
  bench_s=$out/bench_res3_b${batch}.json
  "$kdir/tracegate-kernel-bench" --benchmark_filter="conv_bn_add_relu/res3/batch${batch}/" \
    --benchmark_format=json --benchmark_out="$bench_s" >/dev/null 2>&1 || fail "res3 benchmark at batch $batch"
fi
S=$(python3 - "$bench_s" "$batch" <<'EOF'
import json, sys
m = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    parts = b["name"].split("/")
    if parts[:3] == ["conv_bn_add_relu", "res3", "batch" + sys.argv[2]] and not b.get("error_occurred"):
        m[next(p for p in parts if p in ("fused", "unfused"))] = b["mean_us"]
print(f'{m["unfused"] / m["fused"]:.4f}')
EOF
)
[ -n "$S" ] || fail "no S: the res3 pair at batch $batch is missing from $bench_s"
echo "S (res3 blocks, batch $batch, from the benchmark) = $S"
"$tg" predict "$out/model_unfused.db" --launched-in '^res3( |$)' --speedup "${S:-1}" | tee "$out/predict.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "predict"
"$tg" analyze "$out/model_unfused.db" -q -o "$out/model_unfused.json" --batch "$batch" || fail "analyze unfused"
"$tg" analyze "$out/model_res3_fused.db" -q -o "$out/model_res3_fused.json" --batch "$batch" || fail "analyze fused"
python3 - "$out/predict.txt" "$out/model_unfused.json" "$out/model_res3_fused.json" <<'EOF' | tee "$out/amdahl.txt"
import json, re, sys
pred = float(re.search(r"overall speedup: ([0-9.]+)", open(sys.argv[1]).read()).group(1))
u = json.load(open(sys.argv[2]))["avg_latency_ms"]
f = json.load(open(sys.argv[3]))["avg_latency_ms"]
measured = u / f
print(f"unfused {u:.3f} ms, res3 fused {f:.3f} ms: measured speedup {measured:.4f}, predicted {pred:.4f}, "
      f"error {100 * (pred - measured) / measured:+.2f}%")
EOF
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the Amdahl comparison"
fi

if want 4; then
step "4. pattern knobs: the finding exactly when the knob is on"
base="$kdir/tracegate-model --batch $batch --iterations 10 --warmup 3"
# knob name | flags with the knob on | flags with it off | finding id
knobs=(
  "host_gap|--host-gap-us 200||idle_gaps"
  "split_h2d|--split-h2d 256||small_copies"
  "pageable|--pageable||pageable_copies"
  "post|--post-ms 20||slow_post"
  "single_stream||--streams 4|single_stream"
)
for k in "${knobs[@]}"; do
  IFS='|' read -r name on off finding <<<"$k"
  for state in on off; do
    flags=$on
    [ "$state" = off ] && flags=$off
    db="$out/knob_${name}_${state}.db"
    "$tg" record -o "$db" -- $base $flags >"$out/knob_${name}_${state}.txt" 2>&1 || { fail "record $name $state"; continue; }
    "$tg" analyze "$db" -q -o "$out/knob_${name}_${state}.json" --batch "$batch" || { fail "analyze $name $state"; continue; }
    has=$(python3 -c "import json,sys; print(any(f['id']=='$finding' for f in json.load(open(sys.argv[1]))['findings']))" \
      "$out/knob_${name}_${state}.json")
    expected=True
    [ "$state" = off ] && expected=False
    echo "$name $state ($flags): $finding reported: $has"
    [ "$has" = "$expected" ] || fail "$name $state: $finding reported=$has, wanted $expected"
  done
done
fi

echo
if [ "$failures" -eq 0 ]; then echo "reference_workloads: all checks passed"; else echo "reference_workloads: $failures check(s) failed"; fi
[ "$failures" -eq 0 ]
