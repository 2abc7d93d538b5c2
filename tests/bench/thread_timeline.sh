#!/usr/bin/env bash
# Where one `analyze` leaves a core idle: samples every thread at 5 kHz (perf record) and prints,
# per 5 ms of wall time, how many samples each thread took (25 = a core busy the whole 5 ms) and
# the function it was in most. A stretch where one thread runs alone is work the second core
# could share. Usage:
#   tests/bench/thread_timeline.sh TRACEGATE TRACE [analyze options...]
# e.g. tests/bench/thread_timeline.sh build/tracegate /tmp/tracegate-bench/gen2/shapes1/serving_10000.json
# Needs perf (linux-perf) and permission to sample (perf_event_paranoid <= 2 for one's own
# processes). The child processes (git) show up as threads of their own.
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 TRACEGATE TRACE [analyze options...]" >&2
  exit 2
fi
bin=$1 trace=$2
shift 2
data=$(mktemp)
out=$(mktemp)
trap 'rm -f "$data" "$out"' EXIT
perf record -q -F 5000 -o "$data" -- "$bin" analyze "$trace" -q -o "$out" --timings "$@" 2>&1 | grep timings || true
perf script -i "$data" -F tid,time,ip,sym 2>/dev/null | awk '
  { t = $2 + 0; if (!start) start = t; b = int((t - start) * 200); samples[b " " $1]++; in_sym[b " " $1 " " $4]++; total[b]++ }
  END {
    for (k in in_sym) { split(k, a, " "); key = a[1] " " a[2]; if (in_sym[k] > best[key]) { best[key] = in_sym[k]; top[key] = a[3] } }
    for (k in samples) { split(k, a, " "); line[a[1]] = line[a[1]] sprintf("  [%s %2d %.32s]", a[2], samples[k], top[k]) }
    for (b in total) printf "%5d ms %3d%s\n", b * 5, total[b], line[b]
  }' | sort -n
