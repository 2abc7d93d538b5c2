#!/usr/bin/env bash
# The shape matrix of docs/PERFORMANCE.md (issue 29), run by compare_tools.sh --shapes:
#   tests/bench/compare_tools.sh [build-dir] --shapes [--tiny] [--runs N] [--only NAME[,NAME...]]
#   tests/bench/compare_tools.sh [build-dir] --shapes [--runs N] --file PATH [--file PATH...]
# --file measures a trace of one's own (a shape kept aside, never tuned on) the same way, in place
# of the generated shapes: a Kineto JSON file (.json, or .json.gz: Python parses it through gzip),
# an nsys export or tracegate store (.sqlite, .db: sqlite3's fetchall of the event tables it has),
# or a job's directory of rank files (json.load of each .json in it).
# Each shape is generated once (tracegate-gen-kineto, deterministic) into
# $TRACEGATE_BENCH_DIR/gen<N>/shapes<M> (default /tmp/tracegate-bench; --tiny: .../shapes<M>-tiny):
#   current  the generator's 10^6-event file (ProfilerStep#N of 40 ops, 4 streams)
#   dense    2,500 steps of 200 kernels on 4 streams, 2% jitter (500k kernels, 505k launches, 5k copies)
#   stacks   1,000 steps of 40 ops under a python_function tree 20 deep (~850k frames)
#   serving  10^4 vLLM engine steps (execute_... annotations), decode steps as CUDA graph replays
#   nsys     the dense shape (7,500 steps) as an Nsight-Systems-shaped SQLite export
#   ranks8, ranks64  the jobs of compare_tools.sh --ranks (170,000 events a rank)
# and measured: `tracegate analyze F -o report.json -q` (best of N, default 3, with the --timings
# steps of that best run), its peak RSS (/usr/bin/time's maximum resident set), and Python's parse
# of the same input in the same run (json.load of the file or of each rank's file; for the SQLite
# export, sqlite3's fetchall of its event tables; best of N, of 1 for 64 ranks). Prints a Markdown
# table and the load average before and after. --tiny: a few steps of each, one run, and each
# generated shape checked (check_shapes.py) and generated twice to the same bytes (the CTest
# bench.compare_shapes_tiny runs it so that the script never rots; its numbers mean nothing).
set -euo pipefail
build=$1
shift
tiny=0 runs=3 only=""
files=()
while (($#)); do
  case $1 in
    --shapes) ;;
    --tiny) tiny=1 runs=1 ;;
    --runs) runs=$2; shift ;;
    --only) only=$2; shift ;;
    --file)
      [[ -e ${2:-} ]] || { echo "compare_shapes.sh: --file ${2:-}: no such file or directory" >&2; exit 2; }
      files+=("$2"); shift ;;
    *) echo "compare_shapes.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
here=$(dirname "$0")
version() { sed -n "s/^inline constexpr int $1 = \([0-9]*\);/\1/p" "$here/gen_kineto.h"; }
dir=${TRACEGATE_BENCH_DIR:-/tmp/tracegate-bench}/gen$(version kGeneratorVersion)/shapes$(version kShapeVersion)
((tiny)) && dir+=-tiny
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gen=$build/tracegate-gen-kineto tg=$build/tracegate timed=$build/tracegate-timed-run

if ((tiny)); then
  events=20000 dense=10 stacks=4 serving=40 nsys_steps=10 rank_events=3000
else
  events=1000000 dense=2500 stacks=1000 serving=10000 nsys_steps=7500 rank_events=170000
fi
declare -A input
input[current]=$dir/current_$events.json
input[dense]=$dir/dense_$dense.json
input[stacks]=$dir/stacks_$stacks.json
input[serving]=$dir/serving_$serving.json
input[nsys]=$dir/nsys_dense_$nsys_steps.sqlite
input[ranks8]=$dir/ranks8_$rank_events
input[ranks64]=$dir/ranks64_$rank_events
shapes=(current dense stacks serving nsys ranks8 ranks64)
if [[ -n $only ]]; then IFS=, read -r -a shapes <<< "$only"; fi
# What Python's parse of a trace of one's own is: by its kind, as for the generated shapes.
declare -A kind
if ((${#files[@]})); then
  shapes=()
  for f in "${files[@]}"; do
    name=aside$((${#shapes[@]} + 1))
    shapes+=("$name")
    input[$name]=$f
    case $f in
      *.sqlite | *.db) kind[$name]=sqlite ;;
      *.gz) kind[$name]=gz ;;
      *) [[ -d $f ]] && kind[$name]=dir || kind[$name]=json ;;
    esac
  done
fi

generate() {  # shape
  local f=${input[$1]}
  case $1 in
    aside*) ;;  # given with --file
    current) [[ -f $f ]] || "$gen" --events "$events" -o "$f" ;;
    dense | stacks | serving)
      local steps_var=$1
      [[ -f $f ]] || "$gen" --shape "$1" --steps "${!steps_var}" -o "$f" ;;
    nsys)
      if [[ ! -f $f ]]; then
        "$gen" --shape dense --steps "$nsys_steps" -o "$out/nsys.json" --nsys "$f"
        rm -f "$out/nsys.json"
      fi ;;
    ranks*)
      local n=${1#ranks}
      if [[ ! -f $f/rank-$((n - 1)).json ]]; then mkdir -p "$f" && "$gen" --events "$rank_events" --ranks "$n" -o "$f"; fi ;;
  esac >&2
}
bytes() { if [[ -d $1 ]]; then cat "$1"/*.json | wc -c; else stat -c %s "$1"; fi; }

# best "seconds KiB" of `runs` runs of a command; the best run's stderr is kept in $out/best.err
# (seconds to the microsecond: the table prints milliseconds)
best() {
  local n=$1 best_s="" best_kb=""
  shift
  for ((r = 0; r < n; r++)); do
    # tracegate-timed-run (timed_run.cpp): wall time to the microsecond (GNU time's %e truncates
    # to hundredths) and the peak RSS; it exits 125 when the run was stopped on the way (SIGSTOP, as
    # a shared machine's schedulers send): that wall time is no measurement, so the run is done again.
    for ((try = 0; ; try++)); do
      local rc=0
      "$timed" "$out/time" "$@" 2> "$out/err" || rc=$?
      ((rc == 0)) && break
      if ((rc != 125)); then
        echo "compare_shapes.sh: failed: $*" >&2
        cat "$out/err" >&2
        return 1
      fi
      echo "compare_shapes.sh: run disturbed, again: $*" >&2
      ((try < 3)) || return 1
    done
    read -r s kb < "$out/time"
    if [[ -z $best_s ]] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s best_kb=$kb; cp "$out/err" "$out/best.err"; fi
  done
  echo "$best_s $best_kb"
}
step() { awk -v s="$1" '$2 == "timings:" && $3 == s {printf "%.3f", $4}' "$out/best.err"; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo "| shape | input | size | \`analyze -o\` (best of $runs) | MB/s | load / analysis / reports | peak RSS | RSS / input | Python's parse | analyze vs Python | goals (>= 20x, <= 0.3x) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for shape in "${shapes[@]}"; do
  f=${input[$shape]}
  generate "$shape"
  if ((tiny)) && [[ $shape == dense || $shape == stacks || $shape == serving ]]; then
    # the smoke run also checks the shape (recomputed from the raw JSON) and that it is deterministic
    python3 "$here/check_shapes.py" "$shape" "${!shape}" "$f" >&2
    "$gen" --shape "$shape" --steps "${!shape}" -o "$out/again.json" 2> /dev/null
    cmp -s "$f" "$out/again.json" || { echo "compare_shapes.sh: $shape: the same arguments wrote other bytes" >&2; exit 1; }
  fi
  size=$(bytes "$f")
  res=$(best "$runs" "$tg" analyze "$f" -o "$out/report.json" -q --timings)
  read -r ta ka <<< "$res"
  [[ -s $out/report.json ]] || { echo "compare_shapes.sh: no report for $f" >&2; exit 1; }
  steps="$(step load) / $(step analysis) / $(step reports)"
  [[ $steps == " /  / " ]] && steps="—"
  prun=$runs python=""
  case ${kind[$shape]:-$shape} in
    sqlite | nsys)  # the event tables the file has (an nsys export has all five)
      python="sqlite3 fetchall"
      res=$(best "$prun" python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
have = {r[0] for r in db.execute(\"SELECT name FROM sqlite_master WHERE type = 'table'\")}
for t in ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'NVTX_EVENTS'):
    if t in have: db.execute('SELECT * FROM ' + t).fetchall()" "$f") ;;
    gz)
      python="json.load through gzip"
      res=$(best "$prun" python3 -c "import gzip, json, sys; json.load(gzip.open(sys.argv[1], 'rt'))" "$f") ;;
    dir | ranks*)
      python="json.load of each file"
      [[ $shape == ranks64 ]] && ((!tiny)) && prun=1  # it takes minutes
      res=$(best "$prun" python3 -c "import json, sys; [json.load(open(f)) for f in sys.argv[1:]]" "$f"/*.json) ;;
    *)
      python="json.load"
      res=$(best "$prun" python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$f") ;;
  esac
  read -r tp kp <<< "$res"
  rm -f "$out/report.json"
  awk -v shape="$shape" -v f="$(basename "$f")$([[ -d $f ]] && echo /)" -v b="$size" -v s="$ta" -v kb="$ka" -v steps="$steps" \
      -v p="$tp" -v py="$python" -v pr="$prun" -v runs="$runs" 'BEGIN{
    mb = b / 1e6; ratio = p / s; rss = kb * 1024 / b
    goals = (ratio >= 20 ? "yes" : "**no**") " / " (rss <= 0.3 ? "yes" : "**no**")
    printf "| %s | %s | %.1f MB | %.3f s | %.0f | %s | %.1f MiB | %.2fx | %.3f s (%s%s) | %.2fx | %s |\n",
      shape, f, mb, s, mb / s, steps, kb / 1024, rss, p, py, pr != runs ? ", 1 run" : "", ratio, goals}'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
