#!/usr/bin/env bash
# predict DIR: a job's ranks replayed together, each all-reduce ending once its last rank has
# arrived. Traces from tests/gen/gen_job_replay.py (a GPU-bound data-parallel step with a
# straggler and skewed clocks); every predicted iteration is checked, to the nanosecond, against
# the answer recomputed here from the generator's parameters (not by tracegate):
#   iteration = max_r C'_r + D' + 45 us on every rank replayed with the job;
#   a rank replayed alone keeps its recorded all-reduce (wait included): C'_r + (max C - C_r + D) + 45 us.
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
gen="$fixtures/../gen/gen_job_replay.py"
cd "$dir"

python3 "$gen" job --ranks 4 --straggler 2 --late-us 300 --iterations 4 || fail "generator"

# check NAME PREDICTION.json KIND SPEEDUP [RANK]: every rank's iterations against the construction.
check() {
  python3 - "$root/reports/schema/tracegate.prediction.v1.schema.json" job.params.json "$@" <<'PY' && ok || fail "$3"
import json, sys
import jsonschema
schema, params, name, path, kind, s = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])
only = int(sys.argv[7]) if len(sys.argv) > 7 else None
p = json.load(open(path))
jsonschema.Draft202012Validator(json.load(open(schema))).validate(p)
q = json.load(open(params))
c, d, host = q["compute_ns"], q["D_ns"], q["host_ns"]
half_up = lambda x: int(x + 0.5)  # llround for positive values
max_c = max(c)
changed = [only is None or r == only for r in range(len(c))]
if kind == "gemm":
    c2 = [half_up(c[r] / s) if changed[r] else c[r] for r in range(len(c))]
    job = max(c2) + d + host
    alone = [c2[r] + (max_c - c[r]) + d + host for r in range(len(c))]
elif kind == "comm":
    job = max_c + half_up(d / s) + host
    alone = [c[r] + half_up((max_c - c[r] + d) / s) + host for r in range(len(c))]
base = max_c + d + host
errors = []
assert len(p["job"]["ranks"]) == len(c), p["job"]["ranks"]
for r, rank in enumerate(p["job"]["ranks"]):
    assert rank["rank"] == r and rank["changed"] == changed[r], rank
    assert rank["coupled_collectives"] == q["iterations"], rank
    assert len(rank["iterations"]) == q["iterations"], rank["iterations"]
    for it in rank["iterations"]:
        want = (base, alone[r], job)
        got = (it["base_ns"], it["alone_ns"], it["predicted_ns"])
        if got != want:
            errors.append(f"rank {r} iteration {it['index']}: (base, alone, job) {got}, want {want}")
j = p["job"]
if j["collectives_coupled"] != q["iterations"]:
    errors.append(f"collectives_coupled {j['collectives_coupled']}, want {q['iterations']}")
if abs(p["base_latency_ms"] - base / 1e6) > 1e-9 or abs(p["predicted_latency_ms"] - job / 1e6) > 1e-9:
    errors.append(f"latency {p['base_latency_ms']} -> {p['predicted_latency_ms']}, want {base / 1e6} -> {job / 1e6}")
if abs(j["alone_latency_ms"] - max(alone) / 1e6) > 1e-9:
    errors.append(f"alone_latency_ms {j['alone_latency_ms']}, want {max(alone) / 1e6}")
if errors:
    print(name + ":\n  " + "\n  ".join(errors))
    sys.exit(1)
PY
}

# Every rank's GEMMs 15% faster: the job gains what the straggler gains; each rank alone would
# claim its own GEMMs' gain with its recorded wait kept.
"$tg" predict job --kernels gemm_compute --speedup 1.15 --skip 0 --json all.json > all.txt || fail "predict job"
check "every rank's GEMMs" all.json gemm 1.15
grep -q "^job replay: 4 ranks, 4 collectives coupled across ranks" all.txt && ok || fail "the summary line: $(head -1 all.txt)"
grep -q "^job: mean 3.345 ms -> 3.045 ms: speedup 1.0985 (+9.9%)" all.txt && ok || fail "the job line: $(grep '^job:' all.txt)"
# The job's critical path as recorded: rank 0's iterations (the slowest, by the tie rule) cross at
# every all-reduce to the straggler, whose GEMM and launch are on the path; rank 0 keeps the
# transfer, the sync's wake-up and its host time after it.
python3 - job.params.json all.json <<'PY' && ok || fail "the job's critical path: $(grep -A1 '^critical path' all.txt)"
import json, sys
q, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
path = p["job"]["critical_path"]
c, d, us = q["compute_ns"], q["D_ns"], 1000
want_kinds = {"kernel_gemm": max(c), "communication": d, "launch_delay": 25 * us, "sync_wait": 10 * us,
              "host_compute": 10 * us}
got = {k: round(v * 1e6) for k, v in path["kind_ms"].items() if v}
assert got == want_kinds, (got, want_kinds)
assert round(path["step_ms"] * 1e6) == max(c) + d + q["host_ns"], path
ranks = {r["rank"]: round(r["ms"] * 1e6) for r in path["rank_ms"]}
assert ranks == {0: d + 15 * us, q["straggler"]: max(c) + 30 * us}, ranks
assert path["rank"] == 0 and path["crossings"] == q["iterations"], path
PY
grep -q "^critical path as recorded (rank 0's iterations, crossing to the last rank at 4 collectives): kernel_gemm 2.300 ms (68.8%), communication 1.000 ms (29.9%)" all.txt &&
  grep -q "^  on it by rank: rank 2 2.330 ms (69.7%), rank 0 1.015 ms (30.3%)" all.txt && ok ||
  fail "the critical path's lines: $(grep -A1 '^critical path' all.txt)"
# Without a straggler every rank arrives at once: the path stays on rank 0.
python3 "$gen" even --ranks 3 --late-us 0 --iterations 2 || fail "generator, no straggler"
"$tg" predict even --kernels gemm_compute --speedup 2 --skip 0 --json even.json > /dev/null || fail "predict even"
python3 - even.json <<'PY' && ok || fail "the path of a job without a straggler"
import json, sys
path = json.load(open(sys.argv[1]))["job"]["critical_path"]
assert path["crossings"] == 0 and [r["rank"] for r in path["rank_ms"]] == [0], path
assert round(path["kind_ms"]["kernel_gemm"] * 1e6) == 2_000_000, path
PY
# The straggler alone made as fast as the others: every rank gains its lateness.
"$tg" predict job --rank 2 --kernels gemm_compute --speedup 1.15 --skip 0 --json straggler.json > straggler.txt ||
  fail "predict --rank 2"
check "the straggler's GEMMs" straggler.json gemm 1.15 2
grep -q "the change is not made on the slowest rank" straggler.txt || grep -q "^changed on rank 2:" straggler.txt && ok ||
  fail "--rank's lines: $(cat straggler.txt)"
# A rank that waits for the straggler gains nothing from its own faster GEMMs.
"$tg" predict job --rank 0 --kernels gemm_compute --speedup 2 --skip 0 --json waiter.json > waiter.txt ||
  fail "predict --rank 0"
check "a waiting rank's GEMMs" waiter.json gemm 2 0
# The all-reduces' transfers twice as fast: their waits stay.
"$tg" predict job --class communication --speedup 2 --skip 0 --json comm.json > comm.txt || fail "predict --class"
check "the all-reduces" comm.json comm 2
# No change (speedup 1): every recorded time back, on every rank.
"$tg" predict job --rank 1 --kernels gemm_compute --speedup 1 --skip 0 --json same.json > same.txt || fail "speedup 1"
check "speedup 1" same.json gemm 1 1
# The files given one by one are the same job.
"$tg" predict job/rank-3.json job/rank-1.json job/rank-0.json job/rank-2.json --kernels gemm_compute --speedup 1.15 \
  --skip 0 --json files.json > /dev/null || fail "predict FILE..."
check "files given one by one" files.json gemm 1.15

# Errors: exit 2, one line naming what to do.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  "$tg" predict "$@" > out.txt 2> err.txt
  local rc=$?
  [ $rc = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q -- "$pattern" err.txt && ok ||
    fail "$what: rc $rc, $(cat err.txt)"
}
expect_error "--rank the job lacks" "--rank 9: the job has no such rank" job --rank 9 --kernels gemm_compute --speedup 2
expect_error "--finding on a job" "--finding replays one trace's findings" job --finding all
expect_error "--method amdahl on a job" "drop --method amdahl" job --method amdahl --kernels gemm --speedup 2
expect_error "a change that names nothing" "names nothing on any rank" job --kernels nosuchkernel --speedup 2
expect_error "--rank without a job" "--rank chooses ranks of a job" job/rank-0.json --rank 0 --kernels gemm --speedup 2
mkdir one && cp job/rank-0.json one/
expect_error "a job of one rank" "two or more ranks" one --kernels gemm_compute --speedup 2
cp job/rank-1.json one/rank-1-copy.json
expect_error "two files of one rank" "are both rank 1" job/rank-1.json one/rank-1-copy.json --kernels gemm --speedup 2
cp job/rank-1.json keep.json
expect_error "--json onto a rank's trace" "would overwrite the input trace" job/rank-0.json job/rank-1.json \
  --kernels gemm_compute --speedup 2 --json job/rank-1.json
cmp -s keep.json job/rank-1.json && ok || fail "--json overwrote a rank's trace"
[ ! -e none.json ] && "$tg" predict job --kernels nosuchkernel --speedup 2 --json none.json 2> /dev/null
[ ! -e none.json ] && ok || fail "a failed job prediction left none.json"

finish job_predict
