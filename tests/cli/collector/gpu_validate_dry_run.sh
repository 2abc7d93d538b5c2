#!/usr/bin/env bash
# tests/gpu/validate.sh without a GPU (TRACEGATE_VALIDATE_DRY_RUN=1), so the first GPU minute is
# not spent on a typo: every part runs against the build directory, tests/tools' fakes stand in
# for the GPU (fake_known_workload, fake_nvml), and the checks that need real GPU programs fail
# their own row only. It asserts the summary's shape, that record_known.sh passes against the
# fake (kernel names in an anonymous namespace, warm-ups, samples moved to the CUDA device by
# UUID), that timeouts and the part budget are honoured, and that each part leaves one archive.
# The GPU scripts are also syntax-checked. Usage: gpu_validate_dry_run.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$(dirname "$tg")
for s in "$repo"/tests/gpu/*.sh "$repo"/ci/gpu_bundle.sh; do
  bash -n "$s" && ok || fail "syntax: $s"
done
python3 -m py_compile "$repo/tests/gpu/compare_profilers.py" "$repo/tests/gpu/resnet50_infer.py" && ok ||
  fail "python syntax in tests/gpu"
if [ -z "$(find "$bin" -maxdepth 3 -name fake_known_workload -type f | head -1)" ]; then
  fail "no fake_known_workload under $bin (built by tests/tools)"; finish gpu_validate_dry_run; exit
fi

# Parts 1-3 with a short budget: the GPU-only checks fail fast (no programs, no GPU), and the
# budget cuts what is left; what matters is that each part gets through and says so.
TRACEGATE_VALIDATE_DRY_RUN=1 TRACEGATE_VALIDATE_BUDGET_S=40 TRACEGATE_VALIDATE_KEEP_RAW=1 TRACEGATE_VALIDATE_REPEATS=1 \
  timeout 120 bash "$repo/tests/gpu/validate.sh" "$bin" "$dir/out" >"$dir/log" 2>&1
rc=$?
[ "$rc" = 1 ] && ok || fail "dry run exit $rc, want 1 (GPU checks fail without a GPU): $(tail -20 "$dir/log")"
sum=$dir/out/summary.md
[ -s "$sum" ] && ok || fail "no summary.md"
head -1 "$sum" | grep -q '^| check | goal | measured | result |$' && ok || fail "summary header: $(head -2 "$sum")"
for id in environment preflight record_known record_known_visible coexist kernel_check kernel_bench conv_tops \
    amdahl_run amdahl knobs overhead_launch overhead_resnet resnet_eager_b1 resnet_eager_b32 resnet_compile_b1 \
    resnet_compile_b32 compare_eager_compile; do
  grep -qE "^\| $id \| .* \| (pass|FAIL|SKIPPED)" "$sum" && ok || fail "no row for $id in summary.md"
done
for p in 1 2 3; do
  grep -q "^| \*\*part $p\*\* |.*dry run" "$sum" && ok || fail "part $p not started"
  grep -qE "^\| part $p \| \| [0-9]+ check" "$sum" && ok || fail "part $p not finished"
  [ -s "$dir/out/raw_part$p.tar.gz" ] && ok || fail "no raw_part$p.tar.gz"
done
# record_known.sh passes against the fake: its checks and the record / merge / UUID path hold.
grep -qE '^\| record_known \|.*\| pass \|$' "$sum" && ok ||
  fail "record_known did not pass against the fake: $(cat "$dir/out/raw/part1/record_known.log")"
grep -qE '^\| record_known_visible \|.*\| pass \|$' "$sum" && ok || fail "record_known_visible did not pass"
grep -q 'known_fma_kernel\[0\]: CUDA events 1.0000 ms, recorded 1.0000 ms' "$dir/out/raw/part1/record_known.log" && ok ||
  fail "record_known did not compare the timed launches after the warm-up"
grep -q 'NVML samples: [1-9][0-9]* on devices \[0\]' "$dir/out/raw/part1/record_known.log" && ok ||
  fail "samples not moved to CUDA device 0 by UUID: $(grep -i samples "$dir/out/raw/part1/record_known.log")"
grep -qE '^\| preflight \|.*\| pass \|$' "$sum" && ok || fail "the preflight row did not pass"
# The budget: a part never runs past it (40 s here) by more than one check's kill margin.
for p in 1 2 3; do
  s=$(sed -n "s/^| part $p | | [0-9]* check(s) failed, \([0-9]*\) s |.*/\1/p" "$sum")
  [ -n "$s" ] && [ "$s" -le 60 ] && ok || fail "part $p took ${s:-?} s with a 40 s budget"
done
# A part whose budget is spent skips what is left, with a row each, and still finishes.
TRACEGATE_VALIDATE_DRY_RUN=1 TRACEGATE_VALIDATE_BUDGET_S=12 timeout 60 bash "$repo/tests/gpu/validate.sh" "$bin" "$dir/out2" 1 \
  >"$dir/log2" 2>&1
[ $? = 1 ] && ok || fail "a spent budget must fail the part"
[ "$(grep -c '| SKIPPED |$' "$dir/out2/summary.md")" = 9 ] && ok || fail "want 9 skipped rows: $(cat "$dir/out2/summary.md")"
[ -s "$dir/out2/raw_part1.tar.gz" ] && [ ! -e "$dir/out2/raw" ] && ok || fail "part 1 not packed: $(ls "$dir/out2")"
# Recordings come back gzip'd inside the archive (record_known keeps its known.db).
tar -tzf "$dir/out/raw_part1.tar.gz" | grep -qx 'raw/part1/record_known/known.db.gz' && ok ||
  fail "known.db not gzip'd in raw_part1.tar.gz: $(tar -tzf "$dir/out/raw_part1.tar.gz" | grep record_known)"
# Over the archive's limit, the largest recordings are left out first, and the summary says which.
TRACEGATE_VALIDATE_DRY_RUN=1 TRACEGATE_VALIDATE_BUDGET_S=40 TRACEGATE_VALIDATE_ARCHIVE_KB=10 timeout 120 \
  bash "$repo/tests/gpu/validate.sh" "$bin" "$dir/out3" 1 >"$dir/log3" 2>&1
grep -qE '^raw_part1\.tar\.gz: left out to stay under 10 KiB, largest first: part1/[^ ]+\.db\.gz \([0-9]+ KiB\)' "$dir/out3/summary.md" && ok ||
  fail "no note of what was left out: $(tail -3 "$dir/out3/summary.md")"
[ "$(stat -c %s "$dir/out3/raw_part1.tar.gz")" -le $((10 << 10)) ] && ok || fail "raw_part1.tar.gz over 10 KiB"
tar -tzf "$dir/out3/raw_part1.tar.gz" | grep -q 'record_known.log$' && ok || fail "the logs must stay in the archive"
finish gpu_validate_dry_run
