#!/usr/bin/env bash
# Baselines and history under concurrent CI jobs and faults (docs/ROBUSTNESS.md):
#  1. 64 gates and 16 saves started together on one baselines directory, 5 rounds: every exit
#     code 0, nothing on stderr, every history row present;
#  2. SIGKILL at random points of saves and gates (ROUNDS_KILL, default 200 kills; the delay is
#     uniform over one run's duration, measured first): after each,
#     history.db passes PRAGMA integrity_check, the baseline reads whole, the history lists;
#  3. a file-size limit (as a full disk): the save fails with one line and changes nothing; the
#     gate still judges and says in one line that the history was not written;
#  4. a read-only baselines directory: the gate judges, one line says the history was not
#     written; the save fails with one line; the history still reads;
#  5. several `tracegate record` runs in one directory at once write separate, unmixed traces.
# Usage: history_concurrency.sh TRACEGATE FIXTURES_DIR
source "$(dirname "$0")/../testlib.bash"
cd "$dir" || exit 1
kills=${ROUNDS_KILL:-200}
has() { grep -qE -- "$2" <<<"$1"; }

"$tg" analyze "$fixtures/real/kineto_sampled_rank0.json.gz" -q -o base.json || { fail "analyze"; finish history_concurrency; exit; }
python3 -c "
import json; r = json.load(open('base.json')); r['commit'] = 'other'; json.dump(r, open('other.json', 'w'))"
rows() { sqlite3 "$1/history.db" "SELECT count(*) FROM history WHERE $2"; }

# 1. Contention.
for round in 1 2 3 4 5; do
  b=bl$round; out=out$round; mkdir -p $out
  "$tg" baseline save base.json --name syn --dir $b >/dev/null 2>$out/first.err
  for i in $(seq 64); do ("$tg" gate base.json --baseline syn --dir $b >/dev/null 2>$out/g$i.err; echo $? >$out/g$i.rc) & done
  for i in $(seq 16); do ("$tg" baseline save base.json --name s$i --dir $b >/dev/null 2>$out/s$i.err; echo $? >$out/s$i.rc) & done
  wait
  nonzero=$(cat $out/*.rc | grep -vcx 0)
  [ "$nonzero" = 0 ] && ok || fail "round $round: $nonzero non-zero exits: $(cat $out/*.rc | sort | uniq -c | tr '\n' ' ')"
  [ -z "$(cat $out/*.err)" ] && ok || fail "round $round: stderr: $(cat $out/*.err | sort | uniq -c | head -3)"
  [ "$(rows $b "kind = 'gated' AND name = 'syn' AND verdict = 'pass'")" = 64 ] && ok || fail "round $round: gated rows $(rows $b "kind = 'gated'")"
  [ "$(rows $b "kind = 'saved'")" = 17 ] && ok || fail "round $round: saved rows $(rows $b "kind = 'saved'")"
  [ "$(ls $b/*.json | wc -l)" = 17 ] && ok || fail "round $round: baselines $(ls $b)"
done

# Two saves of one name at once: one complete baseline, both rows.
for i in 1 2 3 4; do "$tg" baseline save base.json --name same --dir twice >/dev/null 2>&1 & "$tg" baseline save other.json --name same --dir twice >/dev/null 2>&1 & done
wait
[ "$(rows twice "name = 'same'")" = 8 ] && ok || fail "same-name saves: $(rows twice "name = 'same'") rows, want 8"
"$tg" baseline show same --dir twice >/dev/null 2>&1 && ok || fail "same-name baseline unreadable"

# 2. SIGKILL at random points.
k=kills; "$tg" baseline save base.json --name victim --dir $k >/dev/null
# Kill points spread over a whole run: the delay is uniform in [0, the time a save + gate take].
t0=$(date +%s%N)
for _ in 1 2 3; do "$tg" baseline save base.json --name timing --dir timing >/dev/null; "$tg" gate base.json --baseline timing --dir timing >/dev/null; done
span_us=$(( ($(date +%s%N) - t0) / 3000 / 2 ))
bad=0; killed=0
for i in $(seq $kills); do
  if (( i % 2 )); then "$tg" baseline save $([ $((i % 4)) = 1 ] && echo other.json || echo base.json) --name victim --dir $k >/dev/null 2>&1 &
  else "$tg" gate base.json --baseline victim --dir $k >/dev/null 2>&1 & fi
  pid=$!
  sleep "$(printf '0.%06d' $(( (RANDOM * 32768 + RANDOM) % span_us )))"
  kill -9 $pid 2>/dev/null && killed=$((killed + 1))
  wait $pid 2>/dev/null
  [ "$(sqlite3 $k/history.db 'PRAGMA integrity_check')" = ok ] || { bad=$((bad + 1)); echo "kill $i: integrity"; }
  "$tg" baseline show victim --dir $k >/dev/null 2>&1 || { bad=$((bad + 1)); echo "kill $i: baseline unreadable"; }
  "$tg" baseline history victim --dir $k >/dev/null 2>&1 || { bad=$((bad + 1)); echo "kill $i: history unreadable"; }
done
[ $bad = 0 ] && ok || fail "$bad damaged states after $kills kill attempts"
echo "history_concurrency: $killed of $kills processes killed before they finished (kill points in 0-${span_us} us)"
[ $killed -ge 20 ] && ok || fail "only $killed processes were killed mid-run: the loop did not test kills"

# 3. A file-size limit (SIGXFSZ ignored, so writes fail with EFBIG, as on a full disk).
f=full; "$tg" baseline save base.json --name syn --dir $f >/dev/null
before=$(cat $f/syn.json); n=$(rows $f 1)
python3 -c "
import json; r = json.load(open('base.json')); r['padding'] = 'x' * 400000; json.dump(r, open('big.json', 'w'))"
err=$( (trap '' XFSZ; ulimit -f 200; "$tg" baseline save big.json --name syn --dir $f) 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && ok || fail "size-limited save: rc $rc: $err"
[ "$(cat $f/syn.json)" = "$before" ] && [ "$(rows $f 1)" = $n ] && ok || fail "a failed save changed something"
size=$(( $(stat -c %s $f/history.db) / 1024 ))
err=$( (trap '' XFSZ; ulimit -f $size; "$tg" gate base.json --baseline syn --dir $f) 2>&1 >/dev/null); rc=$?
[ $rc = 0 ] && ok || fail "size-limited gate: rc $rc: $err"
[ "$(echo "$err" | wc -l)" = 1 ] && has "$err" "not recorded in the history" && ok || fail "size-limited gate: $err"
[ "$(sqlite3 $f/history.db 'PRAGMA integrity_check')" = ok ] && [ "$(rows $f 1)" = $n ] && ok || fail "size-limited gate damaged the history"

# 4. A read-only directory. Root ignores permissions: run as nobody where we are root.
r=ro; "$tg" baseline save base.json --name syn --dir $r >/dev/null
chmod 755 "$dir"; chmod 644 base.json; chmod 555 $r; chmod 444 $r/*
as_user=(); [ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
err=$("${as_user[@]}" "$tg" gate base.json --baseline syn --dir $r 2>&1 >/dev/null); rc=$?
[ $rc = 0 ] && ok || fail "gate on a read-only directory: rc $rc: $err"
[ "$(echo "$err" | wc -l)" = 1 ] && has "$err" "not recorded in the history" && ok || fail "read-only gate: $err"
err=$("${as_user[@]}" "$tg" baseline save base.json --name new --dir $r 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && ok || fail "save into a read-only directory: rc $rc: $err"
"${as_user[@]}" "$tg" baseline history syn --dir $r >/dev/null 2>err && ok || fail "history of a read-only directory: $(cat err)"
chmod 755 $r

# 5. Concurrent recordings in one directory (the fake recorder stands in for a CUDA process).
fake=$(dirname "$tg")/fake_recorder
if [ -x "$fake" ]; then
  if [ ! -f "$(dirname "$tg")/libtracegate_inject.so" ]; then
    # Without CUDA there is no collector; record's preflight loads the library, so the stand-in
    # must be a loadable one (record.sh does the same): tests/tools' fake NVML.
    stand_in=$(find "$(dirname "$tg")" -maxdepth 3 -name libfake_nvml.so -type f | head -1)
    [ -n "$stand_in" ] && export TRACEGATE_INJECT_LIB=$stand_in
  fi
  mkdir rec && cd rec
  for n in 11 12 13 14 15 16 17 18; do "$tg" record -- "$fake" --kernels $n >/dev/null 2>&1 & done
  wait
  counts=$(for f in tracegate*.db; do "$tg" analyze $f 2>/dev/null | sed -n 's/^events: \([0-9]*\) kernels.*/\1/p'; done | sort -n | tr '\n' ' ')
  [ "$counts" = "11 12 13 14 15 16 17 18 " ] && ok || fail "concurrent recordings: kernel counts '$counts' in $(ls)"
  cd ..
else
  echo "history_concurrency: no fake_recorder beside $tg: concurrent recordings not tested"
fi
finish history_concurrency
