#!/usr/bin/env bash
# docs/SCALE.md's Slurm job array, run on a real one-node Slurm cluster (CTest label slurm; not
# under the sanitizer builds). As root it installs Slurm 22.05 and munge (ci/deps.sh slurm), writes
# a throwaway munge key and slurm.conf (this machine's cores and memory, free ports, file paths
# under the test's temp dir), starts munged, slurmctld and slurmd, and submits the page's
# tracegate-map.sh with the page's submit commands over 8 generated rank traces:
#   1. every array task succeeds, the merge runs after them (afterok), and its job report is
#      `tracegate analyze DIR`'s on the same traces apart from job.built_from;
#   2. one rank's trace truncated: that array task alone fails, with tracegate's one-line error
#      naming the file and exit code 2, and the merge never runs (its afterok dependency fails);
#   3. the page's rerun of that one task, once the trace is mended, and the merge: analyze DIR's
#      report again.
# It prints what a user sees (docs/SCALE.md shows this output). Every wait is bounded (the whole
# run by a deadline under the CTest TIMEOUT), and on exit, failure included, it cancels the jobs,
# stops every daemon it started by pid and removes its files; a watchdog does the same if the
# script itself is killed. Skips (exit 77, CTest's SKIP_RETURN_CODE) only without root.
source "$(dirname "$0")/../testlib.bash"
root=$(cd "$fixtures/../.." && pwd)
doc="$root/docs/SCALE.md"
skip() { echo "slurm_job: SKIPPED: $*"; exit 77; }
deadline=$((SECONDS + 150))  # CTest's TIMEOUT for this test is 180 s; cleanup takes at most ~20 s

[ "$(id -u)" = 0 ] || skip "not root: munged, slurmctld and slurmd are started as root here (run ctest -L slurm as root)"
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || skip "no apt-get: Slurm is installed with Debian's packages (ci/deps.sh)"
start=$SECONDS
timeout 100 bash -c 'source "$1/ci/deps.sh" && tracegate_install_deps slurm' _ "$root" </dev/null \
  || { echo "FAIL: ci/deps.sh could not install Slurm and munge"; exit 1; }
for b in munged slurmctld slurmd sbatch scontrol sinfo squeue scancel; do
  command -v "$b" >/dev/null || { echo "FAIL: $b is not installed"; exit 1; }
done
echo "slurm_job: packages ready in $((SECONDS - start)) s"

conf="$dir/slurm.conf"
mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/log" "$dir/bin"
chmod 700 "$dir/munge"
sock="$dir/munge/munge.socket"
sl() { SLURM_CONF="$conf" timeout 20 "$@"; }  # a Slurm client of this cluster, bounded

# Stopping: every daemon by the pid it was started with (listed in $dir/pids, and checked against
# its command line, which names this run's directory), then any process left of the cluster's jobs
# (slurmstepd and the job scripts: their environment names this run's slurm.conf). cleanup is the
# EXIT trap; a watchdog runs stop_cluster if the script dies without it (CTest's kill on timeout).
export dir conf
: >"$dir/pids"
started() { echo "$1" >>"$dir/pids"; }
stop_cluster() {
  local p alive pids=()
  mapfile -t pids <"$dir/pids" 2>/dev/null
  for p in "${pids[@]}"; do
    grep -qF "$dir" "/proc/$p/cmdline" 2>/dev/null && kill -TERM "$p" 2>/dev/null
  done
  for _ in $(seq 20); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.5
  done
  for p in "${pids[@]}"; do
    grep -qF "$dir" "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  done
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    grep -qzxF "SLURM_CONF=$conf" "/proc/$p/environ" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  done
  return 0
}
export -f stop_cluster
# The watchdog: its own session, and not a child of this script (CTest kills a test's process tree).
(setsid bash -c 'trap "" HUP INT; while kill -0 "$1" 2>/dev/null; do sleep 1; done; stop_cluster; rm -rf "$dir"' \
  _ $$ </dev/null >/dev/null 2>&1 & echo $! >"$dir/watchdog.pid")
watchdog=$(cat "$dir/watchdog.pid")
cleanup() {
  set +e
  kill "$watchdog" 2>/dev/null
  if [ "$(wc -l <"$dir/pids")" -gt 1 ]; then  # slurmctld was started: cancel what is left, briefly
    local left
    left=$(sl squeue -h -o %A 2>/dev/null)
    if [ -n "$left" ]; then
      sl scancel $left
      for _ in $(seq 20); do [ -z "$(sl squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.5; done
    fi
  fi
  stop_cluster
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

wait_for() {  # wait_for SECONDS WHAT CMD...: runs CMD every 0.5 s until it succeeds, within the deadline
  local end=$((SECONDS + $1)) what=$2; shift 2
  [ $end -gt $deadline ] && end=$deadline
  until "$@"; do
    if [ $SECONDS -ge $end ]; then echo "FAIL: timed out waiting for $what"; return 1; fi
    sleep 0.5
  done
}
logs() {  # the daemons' last words, when something went wrong
  for f in "$dir"/log/*; do echo "--- $f"; tail -n 15 "$f"; done
}

# munge: a throwaway key; the socket, pid, seed and log under $dir.
head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 400 "$dir/munge/munge.key"
munged -F -f --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
  --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log" </dev/null >"$dir/log/munged.out" 2>&1 &
started $!
wait_for 10 "munged's socket" test -S "$sock" || { logs; exit 1; }

# slurm.conf: one node, this machine as slurmd -C sees it; free ports, so that a Slurm already
# running here (or this test run by another checkout at once) is not disturbed.
node=$(hostname -s)
hw=$(timeout 20 slurmd -C | head -n 1 | sed "s/ UpTime=.*//; s/^NodeName=[^ ]*/NodeName=$node/")
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*[x.getsockname()[1] for x in s])')
cat >"$conf" <<EOF
ClusterName=tracegate-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
$hw NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
echo "slurm_job: node $hw"
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
if [ "${cpus:-0}" -lt 2 ] || [ "${mem:-0}" -lt 4096 ]; then
  skip "this machine ($cpus CPUs, $mem MB) is smaller than tracegate-map.sh's --cpus-per-task=2 --mem=4G"
fi

start=$SECONDS
SLURM_CONF="$conf" slurmctld -D -i -f "$conf" </dev/null >"$dir/log/slurmctld.out" 2>&1 &
started $!
SLURM_CONF="$conf" slurmd -D -f "$conf" -N "$node" </dev/null >"$dir/log/slurmd.out" 2>&1 &
started $!
node_idle() { [ "$(sl sinfo -h -n "$node" -o %T 2>/dev/null)" = idle ]; }
wait_for 30 "node $node idle" node_idle || { logs; exit 1; }
echo "slurm_job: munged, slurmctld, slurmd up (pids $(tr '\n' ' ' <"$dir/pids")), node idle in $((SECONDS - start)) s"

# The page's scripts, as the page has them.
block() {  # the fenced block whose info string is "$1"
  awk -v tag="$1" '$0 == "```" tag {on=1; next} on && /^```/ {exit} on {print}' "$doc"
}
block "bash slurm" >"$dir/tracegate-map.sh"
block "bash slurm-submit" >"$dir/submit.sh"
block "bash slurm-rerun" >"$dir/rerun.sh"
[ -s "$dir/tracegate-map.sh" ] && [ -s "$dir/submit.sh" ] && [ -s "$dir/rerun.sh" ] \
  || { echo "FAIL: docs/SCALE.md has no slurm, slurm-submit or slurm-rerun block"; exit 1; }
ln -s "$tg" "$dir/bin/tracegate"
export PATH="$dir/bin:$PATH"

ended() {  # ended JOBID...: every record of these jobs (each array task) is in a final state
  local id out
  for id in "$@"; do
    out=$(sl scontrol -o show job "$id") || return 1
    [ -n "$out" ] || return 1
    grep -vqE ' JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL|DEADLINE|PREEMPTED) ' <<<"$out" \
      && return 1
  done
  return 0
}
tasks() {  # tasks ARRAY_JOB: "TASK STATE EXIT_CODE" per array task
  sl scontrol -o show job "$1" | awk '{t = s = e = ""
    for (i = 1; i <= NF; i++) { n = index($i, "="); k = substr($i, 1, n - 1); v = substr($i, n + 1)
      if (k == "ArrayTaskId") t = v; else if (k == "JobState") s = v; else if (k == "ExitCode") e = v }
    print t, s, e}' | sort -n
}
field() {  # field JOBID KEY: KEY's value in the job's record
  sl scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
submit() {  # submit RUN_DIR SCRIPT [VAR=VALUE...]: runs one of the page's submit blocks in RUN_DIR; sets map, merge
  local run=$1 script=$2 out; shift 2
  out=$(cd "$run" && env "$@" RUN="$run" SLURM_CONF="$conf" timeout 30 bash -e "$script" 2>&1)
  echo "$out"
  map=$(sed -n 's/^map \([0-9]*\), merge [0-9]*$/\1/p' <<<"$out")
  merge=$(sed -n 's/^map [0-9]*, merge \([0-9]*\)$/\1/p' <<<"$out")
  [ -n "$map" ] && [ -n "$merge" ]
}
same_report() {  # same_report MERGED DIRECT: equal apart from job.built_from
  # job.built_from says what the job report was built from ("reports" / "traces"): the one key that
  # differs by construction. Nothing else is excluded, because nothing else may differ here:
  # commit/commit_reason come from the git work tree of the directory tracegate ran in (the map
  # tasks ran in the submit directory, and analyze DIR runs there too), profiling_date from the
  # traces' own timestamps (not the clock), source.path and ranks[].file from the same absolute
  # trace paths (the map script finds them under $TRACES, analyze is given $RUN/traces), tool from
  # the same binary.
  python3 - "$1" "$2" <<'EOF_PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["job"].pop("built_from"), b["job"].pop("built_from")) == ("reports", "traces")
assert a["job"]["ranks"] == 8 and len(a["ranks"]) == 8, a["job"]
assert a == b, [k for k in a if a[k] != b.get(k)]
EOF_PY
}

# 1. Eight ranks, every task succeeds, then the merge.
run="$dir/run"
mkdir -p "$run"
python3 "$fixtures/../gen/gen_ranks.py" "$run/traces" --ranks 8 --straggler 5 --late-us 300 >/dev/null || fail "generator"
cp "$dir/tracegate-map.sh" "$run/"
start=$SECONDS
echo "== 1. all ranks: \$ sh submit (docs/SCALE.md's slurm-submit block), N=8"
submit "$run" "$dir/submit.sh" N=8 && ok || { fail "the submit block printed no job ids"; exit 1; }
wait_for 90 "the array and the merge" ended "$map" "$merge" || { tasks "$map"; logs; exit 1; }
echo "map and merge ended in $((SECONDS - start)) s"
tasks "$map" | tee "$dir/tasks1"
[ "$(cat "$dir/tasks1")" = "$(for t in 0 1 2 3 4 5 6 7; do echo "$t COMPLETED 0:0"; done)" ] && ok \
  || fail "every array task completed with exit code 0"
[ "$(field "$merge" JobState) $(field "$merge" ExitCode)" = "COMPLETED 0:0" ] && ok || fail "the merge completed"
[ "$(ls "$run"/reports/*.report.json | wc -l)" = 8 ] && ok || fail "8 rank reports"
(cd "$run" && "$tg" analyze "$run/traces" -q -o direct.json) || fail "analyze DIR"
same_report "$run/job.json" "$run/direct.json" && ok || fail "the merged job report is analyze DIR's apart from job.built_from"
echo "merged job report == analyze DIR's (apart from job.built_from): $([ -s "$run/job.json" ] && echo checked)"

# 2. The same traces with rank 3's truncated: task 3 fails alone; the merge does not run.
bad="$dir/bad"
mkdir -p "$bad"
cp -r "$run/traces" "$bad/traces"
head -c 300 "$run/traces/rank-3.json" >"$bad/traces/rank-3.json"
cp "$dir/tracegate-map.sh" "$bad/"
start=$SECONDS
echo "== 2. rank-3.json truncated: \$ sh submit, N=8"
submit "$bad" "$dir/submit.sh" N=8 && ok || { fail "the submit block printed no job ids"; exit 1; }
wait_for 90 "the array and the merge" ended "$map" "$merge" || { tasks "$map"; logs; exit 1; }
echo "map and merge ended in $((SECONDS - start)) s"
tasks "$map" | tee "$dir/tasks2"
[ "$(cat "$dir/tasks2")" = "$(for t in 0 1 2 3 4 5 6 7; do
  if [ $t = 3 ]; then echo "3 FAILED 2:0"; else echo "$t COMPLETED 0:0"; fi; done)" ] && ok \
  || fail "task 3 failed with exit code 2, the others completed"
out="$bad/tracegate-map-${map}_3.out"
echo "\$ cat tracegate-map-${map}_3.out"
cat "$out"
[ "$(wc -l <"$out")" = 1 ] && grep -q "^tracegate: error: $bad/traces/rank-3.json: " "$out" && ok \
  || fail "the failed task's output is tracegate's one-line error naming the file"
echo "\$ scontrol show job ${map}_3 | grep -E 'JobId|JobState'"
sl scontrol show job "${map}_3" | grep -E 'JobId|JobState'
echo "\$ scontrol show job $merge | grep -E 'JobId|JobState|StartTime'"
sl scontrol show job "$merge" | grep -E 'JobId|JobState|StartTime'
[ "$(field "$merge" JobState) $(field "$merge" Reason)" = "CANCELLED DependencyNeverSatisfied" ] && ok \
  || fail "the merge was cancelled, its afterok dependency never satisfied"
nodes=$(field "$merge" NodeList)
[ -z "$nodes" ] || [ "$nodes" = "(null)" ] && [ ! -e "$bad/job.json" ] && ! ls "$bad"/tracegate-merge-*.out >/dev/null 2>&1 && ok \
  || fail "the merge never ran (no node: '$nodes', no job.json, no output)"
# sacct needs slurmdbd (accounting_storage/slurmdbd and a database); this cluster has none. Where
# sacct answers, it must show the failed task; here the job completion log (jobcomp/filetxt) is
# what keeps the ended tasks' states.
echo "\$ sacct -j $map -X -o JobID,JobName,State,ExitCode"
sacct_out=$(sl sacct -j "$map" -X -P -n -o JobID,JobName,State,ExitCode 2>&1)
if [ $? = 0 ] && [ -n "$sacct_out" ] && ! grep -q "accounting storage is disabled" <<<"$sacct_out"; then
  echo "$sacct_out"
  grep -qx "${map}_3|tracegate-map|FAILED|2:0" <<<"$sacct_out" && ok || fail "sacct shows task 3 failed"
else
  echo "$sacct_out"
  echo "(no accounting database here: the job completion log instead)"
fi
echo "\$ grep 'ArrayJobId=$map ArrayTaskId=3 ' jobcomp.txt"
grep "ArrayJobId=$map ArrayTaskId=3 " "$dir/jobcomp.txt"
grep "ArrayJobId=$map ArrayTaskId=3 " "$dir/jobcomp.txt" | grep -q "JobState=FAILED .* ExitCode=2:0" && ok \
  || fail "the job completion log has task 3 FAILED with exit code 2"

# 3. The trace mended, the page's rerun of task 3 alone and the merge.
cp "$run/traces/rank-3.json" "$bad/traces/rank-3.json"
start=$SECONDS
echo "== 3. rank-3.json mended: \$ sh rerun (docs/SCALE.md's slurm-rerun block), TASK=3"
submit "$bad" "$dir/rerun.sh" TASK=3 && ok || { fail "the rerun block printed no job ids"; exit 1; }
wait_for 60 "the rerun and the merge" ended "$map" "$merge" || { tasks "$map"; logs; exit 1; }
echo "rerun and merge ended in $((SECONDS - start)) s"
tasks "$map"
[ "$(tasks "$map")" = "3 COMPLETED 0:0" ] && ok || fail "the rerun task completed"
[ "$(field "$merge" JobState) $(field "$merge" ExitCode)" = "COMPLETED 0:0" ] && ok || fail "the merge completed"
(cd "$bad" && "$tg" analyze "$bad/traces" -q -o direct.json) || fail "analyze DIR"
same_report "$bad/job.json" "$bad/direct.json" && ok || fail "after the rerun: the merged job report is analyze DIR's"
finish slurm_job
