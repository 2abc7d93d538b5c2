#!/usr/bin/env bash
# The whole-command comparisons of docs/PERFORMANCE.md, measured in one run:
#   tests/bench/compare_tools.sh [build-dir] [events] [runs]
#   tests/bench/compare_tools.sh [build-dir] [events-per-rank] [runs] --ranks N [N...]
#   tests/bench/compare_tools.sh [build-dir] --shapes [--tiny] [--runs N] [--only NAME,...]
# - `tracegate analyze` of the generated Kineto JSON (report written) against
#   python3 json.load of the same file;
# - `tracegate analyze` of the same trace as an nsys-shaped SQLite export and as a tracegate store
#   against the sqlite3 shell reading every row of the same event tables.
# With --ranks, the jobs of N generated ranks each (tracegate-gen-kineto --ranks: Kineto files with
# distributedInfo and an NCCL all-reduce per step): `tracegate analyze DIR` (every core) against
# python3 json.load of all the job's files, RSS against the set's total size.
# Each command runs `runs` times (default 3); the best wall time and its peak RSS are printed as
# Markdown table rows, with the load average before and after (numbers from a loaded machine are
# not comparable). Inputs are generated into $TRACEGATE_BENCH_DIR/gen<N> (default /tmp/tracegate-bench/gen<N>).
# With --shapes, the shape matrix of issue 29 (compare_shapes.sh says what it runs).
set -euo pipefail
build=${1:-build}
for a in "$@"; do
  if [[ $a == --shapes ]]; then shift; exec bash "$(dirname "$0")/compare_shapes.sh" "$build" "$@"; fi
done
events=${2:-1000000}
runs=${3:-3}
ranks=()
if [[ ${4:-} == --ranks ]]; then ranks=("${@:5}"); fi
# gen<N>: N is kGeneratorVersion of tests/bench/gen_kineto.h (bench_files.h uses the same directory).
gen=$(sed -n 's/^inline constexpr int kGeneratorVersion = \([0-9]*\);/\1/p' "$(dirname "$0")/gen_kineto.h")
dir=${TRACEGATE_BENCH_DIR:-/tmp/tracegate-bench}/gen$gen
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# best "seconds KiB" of `runs` runs of a command (its output discarded)
best() {
  local best_s="" best_kb=""
  for ((r = 0; r < runs; r++)); do
    # wall time to the microsecond and peak RSS (timed_run.cpp); a failed or stopped run is no time
    "$build/tracegate-timed-run" "$out/time" "$@" 2> "$out/err" || { echo "compare_tools.sh: failed: $*" >&2; cat "$out/err" >&2; return 1; }
    read -r s kb < "$out/time"
    if [[ -z $best_s ]] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s best_kb=$kb; fi
  done
  echo "$best_s $best_kb"
}
mb() { awk "BEGIN{printf \"%.1f\", $(stat -c %s "$1") / 1e6}"; }
row() {  # name input-file seconds KiB
  local size_mb; size_mb=$(mb "$2")
  awk -v n="$1" -v f="$(basename "$2")" -v mb="$size_mb" -v s="$3" -v kb="$4" 'BEGIN{
    printf "| %s | %s (%s MB) | %.3f s | %.0f MB/s | %.1f MiB | %.2fx |\n", n, f, mb, s, mb / s, kb / 1024, kb * 1024 / (mb * 1e6)}'
}


if (( ${#ranks[@]} )); then
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| command | input | wall (best of $runs) | input MB/s | peak RSS | RSS / input |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for n in "${ranks[@]}"; do
    set_dir=$dir/ranks${n}_$events
    if [[ ! -f $set_dir/rank-$((n - 1)).json ]]; then
      mkdir -p "$set_dir"
      "$build/tracegate-gen-kineto" --events "$events" --ranks "$n" -o "$set_dir"
    fi
    set_mb=$(cat "$set_dir"/rank-*.json | wc -c | awk '{printf "%.1f", $1 / 1e6}')
    jrow() {  # name seconds KiB
      awk -v n="$1" -v f="ranks${n}_$events/ ($n files)" -v mb="$set_mb" -v s="$2" -v kb="$3" 'BEGIN{
        printf "| %s | %s (%s MB) | %.3f s | %.0f MB/s | %.1f MiB | %.3fx |\n", n, f, mb, s, mb / s, kb / 1024, kb * 1024 / (mb * 1e6)}'
    }
    read -r tj kj < <(best "$build/tracegate" analyze "$set_dir" -o "$out/job.json" -q)
    jrow "tracegate analyze DIR -o job.json ($(nproc) workers)" "$tj" "$kj"
    read -r tj1 kj1 < <(best "$build/tracegate" analyze "$set_dir" --jobs 1 -o "$out/job.json" -q)
    jrow "tracegate analyze DIR --jobs 1" "$tj1" "$kj1"
    if (( n <= 8 )); then  # json.load of 64 files takes minutes and says nothing new
      read -r tp kp < <(best python3 -c "import json, sys; [json.load(open(f)) for f in sys.argv[1:]]" "$set_dir"/rank-*.json)
      jrow "python3 json.load of every file" "$tp" "$kp"
      ratio=$(awk -v a="$tj" -v p="$tp" 'BEGIN{printf "%.1f", p / a}')
      notes+="$n ranks: analyze DIR ${ratio}x faster than json.load of its files on $(nproc) cores"$'\n'
    fi
  done
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s' "${notes:-}"
  exit 0
fi

json=$dir/kineto_$events.json store=$dir/store_$events.db nsys=$dir/nsys_$events.sqlite
if [[ ! -f $json || ! -f $store || ! -f $nsys ]]; then
  "$build/tracegate-gen-kineto" --events "$events" -o "$json" --store "$store" --nsys "$nsys"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| command | input | wall (best of $runs) | input MB/s | peak RSS | RSS / input |"
echo "| --- | --- | --- | --- | --- | --- |"
read -r ta ka < <(best "$build/tracegate" analyze "$json" -o "$out/report.json" -q)
row "tracegate analyze -o report.json" "$json" "$ta" "$ka"
read -r tp kp < <(best python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$json")
row "python3 json.load" "$json" "$tp" "$kp"
read -r tn kn < <(best "$build/tracegate" analyze "$nsys" -o "$out/report.json" -q)
row "tracegate analyze (nsys export)" "$nsys" "$tn" "$kn"
read -r ts ks < <(best "$build/tracegate" analyze "$store" -o "$out/report.json" -q)
row "tracegate analyze (store)" "$store" "$ts" "$ks"
tables="CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET CUPTI_ACTIVITY_KIND_RUNTIME NVTX_EVENTS"
sql=""
for t in $tables; do sql+="SELECT * FROM $t; "; done
read -r tq kq < <(best sqlite3 "$nsys" "$sql")
row "sqlite3 SELECT * of the event tables" "$nsys" "$tq" "$kq"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v a="$ta" -v p="$tp" -v n="$tn" -v q="$tq" 'BEGIN{
  printf "analyze (parse + every rule) vs json.load (parse only): %.1fx faster\n", p / a
  printf "analyze of the nsys export vs sqlite3 reading its rows: %.2fx the time\n", n / q}'
