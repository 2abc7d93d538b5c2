#!/usr/bin/env bash
# The contention measurement of docs/ROBUSTNESS.md: NGATES gates and NSAVES saves started together
# on one baselines directory (DIR must hold a baseline named syn made from REPORT).
# Usage: history_stress.sh BIN REPORT DIR NGATES NSAVES
B=$1; R=$2; D=$3; NG=$4; NS=$5
out=$(mktemp -d)
for i in $(seq 1 $NG); do ($B gate $R --baseline syn --dir $D > $out/g$i.out 2> $out/g$i.err; echo $? > $out/g$i.rc) & done
for i in $(seq 1 $NS); do ($B baseline save $R --name s$i --dir $D > $out/s$i.out 2> $out/s$i.err; echo $? > $out/s$i.rc) & done
wait
bad=$(cat $out/*.rc | grep -vc '^0$'); warn=$(cat $out/*.err | grep -c .)
echo "nonzero exits: $bad, stderr lines: $warn"; cat $out/*.err | sort | uniq -c | head -5
rm -rf $out
