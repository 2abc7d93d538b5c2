#!/usr/bin/env bash
# tracegate record end to end without a GPU: the fake recorder (tests/tools/fake_recorder.cpp)
# stands in for a CUDA process and writes its part through the real PartWriter. Exit codes
# (the command's, 128 + signal, 2 without the injection library, 127), the default output name,
# an empty recording that analyze explains, SIGKILL mid-run (every flushed event kept, marked
# incomplete, the gate refuses it), SIGINT forwarded, several processes in one trace, orphans
# waited for, the summary's line for another profiler (a CUPTI client) in a recorded process.
# Usage: record.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
bin=$(dirname "$tg")
fake=$bin/fake_recorder
[ -x "$fake" ] || { fail "no $fake (built by tests/tools)"; finish record; exit; }
# A build without CUPTI has no injection library; the launcher test-loads it (its preflight) and
# names it to the CUDA driver, and no CUDA process runs here, so any loadable library stands in.
if [ ! -f "$bin/libtracegate_inject.so" ]; then
  export TRACEGATE_INJECT_LIB=$(find "$bin" -maxdepth 3 -name libfake_nvml.so -type f | head -1)
fi
cd "$dir" || exit 1

expect_rc() {  # expect_rc WANT GOT WHAT
  if [ "$2" = "$1" ]; then ok; else fail "$3: exit $2, want $1; stderr: $(tail -5 err 2>/dev/null)"; fi
}
expect_grep() {  # expect_grep PATTERN FILE WHAT
  if grep -qE -- "$1" "$2"; then ok; else fail "$3: no /$1/ in $2: $(head -c 2000 "$2")"; fi
}
kernels_in() { "$tg" analyze "$1" 2>/dev/null | sed -n 's/^events: \([0-9]*\) kernels.*/\1/p'; }
wait_for() {  # wait_for PATTERN FILE: up to 20 s
  for _ in $(seq 200); do grep -qE -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# Without the injection library: one clear error, exit 2, nothing written.
TRACEGATE_INJECT_LIB=$dir/missing.so "$tg" record -o none.db -- /bin/true 2>err; rc=$?
expect_rc 2 $rc "record without the injection library"
expect_grep "missing.so" err "error names the library"
[ "$(wc -l <err)" = 1 ] && ok || fail "more than one error line: $(cat err)"
[ ! -e none.db ] && ok || fail "none.db written without the injection library"

# An injection library the loader refuses: the preflight prints dlerror's reason in one line, exit 2,
# and nothing runs (the CUDA driver would have failed the same way, silently).
: >"$dir/broken.so"
TRACEGATE_INJECT_LIB=$dir/broken.so "$tg" record -o none.db -- sh -c 'echo ran >ran' 2>err; rc=$?
expect_rc 2 $rc "record with an unloadable injection library"
expect_grep "injection library cannot be loaded.*broken.so.*(file too short|invalid ELF header)" err "error quotes dlerror"
[ "$(wc -l <err)" = 1 ] && ok || fail "more than one error line: $(cat err)"
[ ! -e ran ] && [ ! -e none.db ] && ok || fail "the command ran or none.db was written after a failed preflight"

# A relative -o: the parts directory is absolute, so a command that changes directory still writes
# its part where the launcher merges it.
mkdir -p sub
"$tg" record -o sub/rel.db -- sh -c "cd / && exec '$fake' --kernels 3" 2>err; expect_rc 0 $? "record -o sub/rel.db with a cd"
[ "$(kernels_in sub/rel.db)" = 3 ] && ok || fail "sub/rel.db: $(kernels_in sub/rel.db) kernels, want 3: $(cat err)"

# The command's exit code; a signal as 128 + N; a command that cannot run as 127.
"$tg" record -o exit3.db -- sh -c 'exit 3' 2>err; expect_rc 3 $? "record -- sh -c 'exit 3'"
[ -s exit3.db ] && ok || fail "exit3.db not written"
"$tg" record -o killed-sh.db -- sh -c 'kill -9 $$' 2>err; expect_rc 137 $? "record -- sh killed by SIGKILL"
expect_grep "signal 9" err "summary names the signal"
"$tg" record -o nope.db -- ./no-such-program 2>err; expect_rc 127 $? "record -- missing program"
expect_grep "cannot run './no-such-program'" err "error for a missing program"

# /bin/true: tracegate1.db, then tracegate2.db (never overwritten); a valid empty trace that
# analyze explains.
"$tg" record -- /bin/true 2>err; expect_rc 0 $? "record -- /bin/true"
"$tg" record -- /bin/true 2>err2; expect_rc 0 $? "record -- /bin/true again"
[ -s tracegate1.db ] && [ -s tracegate2.db ] && ok || fail "default outputs: $(ls)"
expect_grep "wrote ./tracegate2.db" err2 "second run names tracegate2.db"
expect_grep "no CUDA activity recorded" err "record summary explains the empty trace"
"$tg" analyze tracegate1.db >out 2>&1; expect_rc 0 $? "analyze the empty recording"
expect_grep "no CUDA activity recorded: no process of the command initialized CUDA" out "analyze explains"
expect_grep "data quality: clean" out "empty recording is complete"
ls -a | grep -q tracegate-parts && fail "parts dir left behind: $(ls -a)" || ok

# One fake CUDA process: every event, one process, complete.
"$tg" record -o one.db -- "$fake" --kernels 50 2>err; expect_rc 0 $? "record fake_recorder"
[ "$(kernels_in one.db)" = 50 ] && ok || fail "one.db: $(kernels_in one.db) kernels, want 50"
expect_grep "processes: 1 \(pid [0-9]+ fake_recorder\)" err "summary lists the process"
expect_grep "events: +50 kernels" err "summary counts the kernels"
"$tg" analyze one.db >out 2>&1
expect_grep "data quality: clean" out "complete recording"
"$tg" record -o one-analyzed.db --analyze -- "$fake" --kernels 5 >out 2>err
expect_grep "top kernels" out "--analyze prints the analysis"

# SIGKILL mid-run: the process flushed 120 kernels, queued 30 more (never flushed: an hour's
# flush interval) and hangs; killed, its trace keeps exactly the 120, marked incomplete.
TRACEGATE_FLUSH_MS=3600000 "$tg" record -o crash.db -- "$fake" --kernels 120 --hang-after-flush 30 \
  --marker "$dir/m1" 2>err &
rec=$!
if wait_for "^hanging" m1; then
  kill -9 "$(sed -n 's/.* pid \([0-9]*\)$/\1/p' m1)"
  wait $rec; expect_rc 137 $? "record of a process killed with SIGKILL"
  [ "$(kernels_in crash.db)" = 120 ] && ok || fail "crash.db: $(kernels_in crash.db) kernels, want 120"
  expect_grep "INCOMPLETE: 1 process" err "summary says incomplete"
  "$tg" analyze crash.db >out 2>&1
  expect_grep "error trace_incomplete: 1" out "analyze shows trace_incomplete"
  "$tg" analyze one.db -q -o base.json
  "$tg" gate crash.db --baseline base.json >out 2>&1; expect_rc 2 $? "gate refuses an incomplete trace"
  expect_grep "trace_incomplete" out "gate names trace_incomplete"
else
  fail "fake recorder never reached the hang: $(cat m1 err 2>&1)"; kill $rec
fi

# A full disk while recording, simulated with a file-size limit on the recorded process only
# (ulimit -f, in KiB: 4 MiB, where an empty part is about 2 MiB; SIGXFSZ ignored, so the write
# fails with EFBIG): its writer says so at once in one line and stops; record still merges what
# was written before, marks it incomplete, and the gate refuses it. 2000-kernel batches flushed
# every 10 ms outgrow the limit within a few.
TRACEGATE_FLUSH_MS=10 "$tg" record -o full.db -- \
  sh -c "trap '' XFSZ; ulimit -f 4096; exec '$fake' --kernels 2000 --batches 40" 2>err
rc=$?
[ "$rc" = 2 ] && ok || fail "record under a file-size limit: exit $rc, want the fake's 2: $(tail -5 err)"
expect_grep "^tracegate: .*part-[0-9]+\.db: .*\(a file size limit of [0-9]+ bytes is in force: ulimit -f\): recording in this process stops; what was written before stays readable" \
  err "the writer names the part and what happens"
[ "$(grep -c 'recording in this process stops' err)" = 1 ] && ok || fail "the failure is printed more than once: $(cat err)"
expect_grep "INCOMPLETE: 1 process" err "summary says incomplete"
n=$(kernels_in full.db)
[ -n "$n" ] && [ "$n" -ge 2000 ] && [ $((n % 2000)) = 0 ] && [ "$n" -lt 82000 ] && ok ||
  fail "full.db: '$n' kernels, want whole batches of 2000 written before the limit"
"$tg" gate full.db --baseline base.json >out 2>&1; expect_rc 2 $? "gate refuses a recording cut by a full disk"

# SIGINT to tracegate reaches the command, which finishes its part and exits 130; the trace is
# written and complete.
"$tg" record -o int.db -- "$fake" --kernels 5 --until-signal --marker "$dir/m2" 2>err &
rec=$!
if wait_for "^flushed" m2; then
  kill -INT $rec
  wait $rec; expect_rc 130 $? "record after SIGINT"
  n=$(kernels_in int.db)
  [ "${n:-0}" -ge 5 ] && ok || fail "int.db: ${n:-no} kernels, want >= 5"
  "$tg" analyze int.db >out 2>&1
  expect_grep "data quality: clean" out "SIGINT-ed recording is complete"
  expect_grep "signal 2|exit 130" err "summary shows how the command ended"
else
  fail "fake recorder never flushed: $(cat m2 err 2>&1)"; kill $rec
fi

# Several processes: the command forks/execs 3 more recorded processes; one trace, every pid.
"$tg" record -o multi.db -- "$fake" --spawn 3 --kernels 10 2>err; expect_rc 0 $? "record of 4 processes"
[ "$(kernels_in multi.db)" = 40 ] && ok || fail "multi.db: $(kernels_in multi.db) kernels, want 40"
expect_grep "processes: 4 " err "summary lists 4 processes"

# Another profiler in a recorded process (tests/tools' libfake_kineto.so stands in for PyTorch's
# library, a CUPTI client): one summary line per such process, saying what happened, that
# tracegate's recording of it is unaffected, and what to do; the note stays in the recording's metadata.
kineto=$(find "$bin" -maxdepth 3 -name libfake_kineto.so -type f | head -1)
if [ -n "$kineto" ]; then
  "$tg" record -o prof.db -- "$fake" --kernels 4 --cupti-client "$kineto" 2>err; expect_rc 0 $? "record with a CUPTI client loaded"
  expect_grep "^  profiler:  pid [0-9]+: PyTorch's profiler \(torch\.profiler, Kineto; libfake_kineto\.so\) is loaded and profiles through CUPTI\. CUPTI serves one profiler per process and tracegate held it, so if it profiled CUDA in this process, it recorded no CUDA activity; tracegate's recording of the process is unaffected\. Profile with one tool at a time: run the other profiler without tracegate record$" \
    err "summary line for a loaded CUPTI client"
  [ "$(grep -c '^  profiler:' err)" = 1 ] && ok || fail "want one profiler line: $(cat err)"
  [ "$(kernels_in prof.db)" = 4 ] && ok || fail "prof.db: $(kernels_in prof.db) kernels, want 4"
  [ "$(sqlite3 prof.db "SELECT value FROM tracegate_metadata WHERE key = 'cupti_other_clients'" 2>/dev/null | sed 's/pid [0-9]*/pid N/')" = "pid N: libfake_kineto.so" ] &&
    ok || fail "cupti_other_clients metadata: $(sqlite3 prof.db "SELECT * FROM tracegate_metadata WHERE key LIKE 'cupti_other%'" 2>&1)"
  # Two processes, one of which saw CUPTI refuse the other client: a line each, the refusal said.
  "$tg" record -o prof2.db -- sh -c "'$fake' --kernels 2 --cupti-client '$kineto' --cupti-refused && '$fake' --kernels 2" 2>err
  expect_rc 0 $? "record of a refused client"
  expect_grep "^  profiler:  pid [0-9]+: PyTorch's profiler \(torch\.profiler, Kineto; libfake_kineto\.so\) tried to start and CUPTI refused it \(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED\)\. CUPTI serves one profiler per process and tracegate held it, so that profiler recorded no CUDA activity; tracegate's recording of the process is unaffected" \
    err "summary line for a refused client"
  [ "$(grep -c '^  profiler:' err)" = 1 ] && ok || fail "want one profiler line (the other process has no client): $(cat err)"
  # Without another client, no line.
  grep -q '^  profiler:' <("$tg" record -o plain.db -- "$fake" --kernels 1 2>&1) && fail "a profiler line without a client" || ok
else
  fail "no libfake_kineto.so under $bin (built by tests/tools)"
fi

# A recorded process the command leaves behind is waited for.
"$tg" record -o orphan.db -- sh -c "(sleep 0.5; exec '$fake' --kernels 3) & exit 0" 2>err
expect_rc 0 $? "record of a command that leaves a process behind"
[ "$(kernels_in orphan.db)" = 3 ] && ok || fail "orphan.db: $(kernels_in orphan.db) kernels, want 3"

"$tg" record --help >out; expect_grep "tracegate<N>.db" out "--help documents the default output"

# The recording tiers reach every recorded process as the collector's environment (parts.h), the
# launcher's own values of those variables never; a malformed window is one line, exit 2, nothing run.
TRACEGATE_API=all TRACEGATE_CAPTURE_RANGE=nvtx:stale "$tg" record -o env1.db -- sh -c 'env >env1.txt' 2>err
expect_rc 0 $? "record with the default tier"
for kv in TRACEGATE_API=default TRACEGATE_CUDA_GRAPH_TRACE=node 'TRACEGATE_CAPTURE_RANGE=$' 'TRACEGATE_ITERATIONS=$'; do
  expect_grep "^$kv" env1.txt "default tier in the command's environment ($kv)"
done
"$tg" record --api all --cuda-graph-trace graph --capture-range nvtx:train_step --iterations 20:10 -o env2.db -- \
  sh -c 'env >env2.txt' 2>err
expect_rc 0 $? "record with every tier option"
for kv in TRACEGATE_API=all TRACEGATE_CUDA_GRAPH_TRACE=graph TRACEGATE_CAPTURE_RANGE=nvtx:train_step TRACEGATE_ITERATIONS=20:10; do
  expect_grep "^$kv\$" env2.txt "tier option in the command's environment ($kv)"
done
"$tg" record --iterations 20:10 -o bad.db -- sh -c 'echo ran >ran2' 2>err
expect_rc 2 $? "--iterations without --capture-range"
expect_grep '^tracegate record: error: iterations 20:10 counts the ranges of a capture range; name one \(--capture-range nvtx:NAME\)$' err \
  "the error says what is missing"
"$tg" record --capture-range step -o bad.db -- sh -c 'echo ran >ran2' 2>err
expect_rc 2 $? "a capture range without nvtx:"
expect_grep "^tracegate record: error: capture range 'step' is not nvtx:NAME" err "the error says the form"
"$tg" record --api some -o bad.db -- sh -c 'echo ran >ran2' 2>err
expect_rc 2 $? "--api some"
[ ! -e ran2 ] && [ ! -e bad.db ] && ok || fail "a malformed window ran the command or wrote a trace"
expect_grep "record.*--capture-range nvtx:step --iterations 20:10" out "--help shows the capture window"
grep -qi "no-driver-api.*not recommended\|not recommended.*driver" out && ok || fail "--help must not recommend --no-driver-api: $(grep -A2 no-driver out)"
finish record
