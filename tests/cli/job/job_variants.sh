#!/usr/bin/env bash
# Jobs as real ones come: known answers (tests/gen/gen_ranks.py, checked by job_check.py) when the
# collectives have no sequence numbers, no metadata at all, NCCL's old kernel names, gzip'd files,
# clocks seconds apart, ranks profiled from different steps, a lost all-reduce, one Nsight Systems
# export per rank; the data-quality warnings where a match cannot be trusted; and two ranks built
# from the shared real NCCL trace (one on a clock 1.234567 s ahead).
source "$(dirname "$0")/../testlib.bash"
gen="$fixtures/../gen/gen_ranks.py"
check="$(dirname "$0")/job_check.py"
validate="$(dirname "$0")/../validate_report.py"
cd "$dir"

# job NAME [gen_ranks.py options] -- [job_check.py warnings]: generate, analyze DIR, check.
job() {
  local name=$1; shift
  local opts=() warns=()
  while (($#)) && [[ $1 != -- ]]; do opts+=("$1"); shift; done
  (($#)) && shift && warns=("$@")
  python3 "$gen" "$name" "${opts[@]}" || { fail "$name: generator"; return; }
  "$tg" analyze "$name" -q -o "$name.json" && python3 "$validate" "$name.json" >/dev/null \
    && python3 "$check" "$name.json" "$name.expected.json" "${warns[@]}" && ok || fail "$name (${opts[*]})"
}

job seq                                             # PyTorch's Seq: matched by (group, seq)
job noseq --no-seq                                  # no Seq: by order within each ProfilerStep
job nometa --no-metadata --old-names --ranks 3      # NCCL kernels known by their (old) names only
job newnames --no-metadata --ranks 3 --straggler 1
job gzip --gzip --no-seq --ranks 5 --straggler 4
job hosts --skew-us 5000000 --no-seq                # clocks up to 5 s apart
job later --no-seq --first-step 1:2 --iterations 7  # rank 1's profile starts at step 2
job later_straggler --no-seq --first-step 2:3 --iterations 6
job earlyend --first-step 0:1 --iterations 6        # the reference rank itself starts later (Seq)
job lost --no-seq --missing 2:3                     # the straggler lost one all-reduce
job lost_meta --no-metadata --missing 0:0 --missing 3:4 --ranks 5 --straggler 3
job nsys --nsys --ranks 3 --straggler 1             # Nsight Systems exports: NVTX NCCL ranges
job nsys_later --nsys --first-step 2:1 --missing 0:3
job imbalanced --late-us 900 --step-us 6000         # compute 2.9 + 0.4 ms vs 2.4: compute_imbalance
out=$("$tg" analyze nsys 2>&1)
[[ $out == *"5 collectives shared across ranks (matched by order within each profiler step)"* ]] && ok \
  || fail "the summary says how collectives were matched: $out"

# Mixed formats: ranks 0 and 1 as Kineto traces, 2 and 3 as Nsight Systems exports of the same
# job (straggler: rank 2). PyTorch names a process group "0", NCCL by its communicator ID, so the
# two halves share no collective: each half is aligned and waits among itself, and the exports'
# offsets onto rank 0's clock are null with the reason.
python3 "$gen" mix_k >/dev/null && python3 "$gen" mix_n --nsys >/dev/null && mkdir mixed \
  && cp mix_k/rank-0.json mix_k/rank-1.json mixed/ && cp mix_n/rank-2.sqlite mix_n/rank-3.sqlite mixed/ \
  && "$tg" analyze mixed -q -o mixed.json && python3 "$validate" mixed.json >/dev/null || fail "mixed Kineto and nsys job"
python3 - mixed.json mix_k.expected.json mix_n.expected.json <<'EOF_PY' && ok || fail "mixed formats: each half on its own clock"
import json, sys
job, k, n = (json.load(open(p)) for p in sys.argv[1:])
r = job["ranks"]
assert [(x["rank"], x["rank_source"]) for x in r] == [(0, "distributed_info"), (1, "distributed_info"),
                                                      (2, "file_name"), (3, "file_name")], r
assert r[0]["clock_offset_ns"] == 0 and r[1]["clock_offset_ns"] == k["ranks"][1]["clock_offset_ns"], r[:2]
assert r[2]["clock_offset_ns"] is None and "aligned to rank 2 instead (0 ns" in r[2]["clock_offset_ns_reason"], r[2]
want = n["ranks"][3]["clock_offset_ns"] - n["ranks"][2]["clock_offset_ns"]  # rank 3 onto rank 2's clock
assert r[3]["clock_offset_ns"] is None and f"aligned to rank 2 instead ({want} ns" in r[3]["clock_offset_ns_reason"], r[3]
# Waits among each half: ranks 0 and 1 arrive together; rank 3 waits 0.3 ms per step for rank 2.
assert [x["wait_ms"] for x in r[:2]] == [0, 0] and abs(r[3]["wait_ms"] - 0.3) < 1e-12 and r[2]["wait_ms"] == 0, r
assert r[2]["last_arrivals"] == 5 and job["job"]["shared_collectives"] == 10, (r[2], job["job"])
EOF_PY

# Without sequence numbers or steps (no ProfilerStep markers) a rank profiled from a later step
# pairs by order alone: its counts differ, and the job says so.
python3 "$gen" nosteps --no-seq --first-step 1:2 --iterations 6 >/dev/null && sed -i '/ProfilerStep/d' nosteps/*.json \
  && "$tg" analyze nosteps -q -o nosteps.json || fail "nosteps"
python3 - nosteps.json <<'EOF_PY' && ok || fail "uneven counts matched by order: a warning"
import json, sys
job = json.load(open(sys.argv[1]))
c = {c["key"]: c for c in job["data_quality"]["counters"]}
assert job["job"]["matched_by"] == "order", job["job"]
assert c["collective_counts_differ"]["count"] == 1 and c["collective_counts_differ"]["severity"] == "warning", c
EOF_PY
# ... and a lost call in the middle of such a run shifts the pairs after it: the aligned kernels
# of the shifted pairs do not overlap, which no all-reduce can do.
python3 "$gen" shifted --no-seq --missing 1:1 --iterations 8 --ranks 2 --late-us 0 >/dev/null \
  && sed -i '/ProfilerStep/d' shifted/*.json && "$tg" analyze shifted -q -o shifted.json || fail "shifted"
python3 - shifted.json <<'EOF_PY' && ok || fail "shifted pairs: doubtful, left out of the waits"
import json, sys
job = json.load(open(sys.argv[1]))
c = {c["key"]: c["count"] for c in job["data_quality"]["counters"]}
# 7 pairs: the first right, 6 off by one step, which the median takes as the clock offset (5 ms);
# the first is then 5 ms apart: doubtful, and every other pair overlaps.
assert c.get("collective_counts_differ") == 1 and c.get("collective_match_doubtful") == 1, c
assert job["job"]["shared_collectives"] == 7, job["job"]
assert job["ranks"][1]["clock_offset_ns"] == -5_000_000 - 37_123, job["ranks"][1]
EOF_PY

# Two ranks of a real job: the shared NCCL trace (PyTorch 2.x, NCCL 2.17: no Seq) as rank 0 and,
# as rank 1, the same trace on a clock 1.234567 s ahead. Matched within its ProfilerSteps, rank 1's
# offset is exactly -1.234567 s, nobody waits, and nothing is doubtful.
real="$shared/kineto_nccl_allreduce_rank0.json.gz"
if [ -f "$real" ]; then
  mkdir real && python3 - "$real" real <<'EOF_PY' && "$tg" analyze real -q -o real.json && ok || fail "real job"
import gzip, re, sys
raw = gzip.open(sys.argv[1], "rt").read()
def later(m):  # + 1234567 us, in the text: exact to the ns
    whole, dot, frac = m.group(1).partition(".")
    return '"ts": %d%s%s' % (int(whole) + 1_234_567, dot, frac)
one = re.sub(r'"ts": (-?[0-9]+(?:\.[0-9]+)?)', later, raw)
assert one.count('"rank": 0,') >= 1
one = one.replace('"rank": 0,', '"rank": 1,', 1)
gzip.open(sys.argv[2] + "/host-a.rank0.pt.trace.json.gz", "wt").write(raw)
gzip.open(sys.argv[2] + "/host-b.rank1.pt.trace.json.gz", "wt").write(one)
EOF_PY
  python3 - real.json "$real" <<'EOF_PY' && ok || fail "real job: offsets, waits, matching"
import gzip, json, sys
job = json.load(open(sys.argv[1]))
doc = json.load(gzip.open(sys.argv[2], "rt"))
comm = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and "Collective name" in e.get("args", {})]
assert all("Seq" not in e["args"] for e in comm)
r0, r1 = job["ranks"]
assert (r0["rank"], r1["rank"]) == (0, 1) and r0["rank_source"] == r1["rank_source"] == "distributed_info"
assert r0["clock_offset_ns"] == 0 and r1["clock_offset_ns"] == -1_234_567_000, (r0, r1)
assert r0["wait_ms"] == r1["wait_ms"] == 0 and r0["last_arrivals"] == r1["last_arrivals"] == 0
assert job["job"]["matched_by"] == "step" and job["job"]["shared_collectives"] == len(comm) == 21, job["job"]
assert r0["collectives"] == r1["collectives"] == 21
c = {c["key"]: c["count"] for c in job["data_quality"]["counters"]}
assert "collective_match_doubtful" not in c and "collective_counts_differ" not in c, c
assert not [f for f in job["findings"] if f["id"] == "straggler"]
EOF_PY
else
  echo "skip ../shared/traces/kineto_nccl_allreduce_rank0.json.gz: absent"
fi
finish job_variants
