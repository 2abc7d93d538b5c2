source .gpu/env.sh; export PYTHONUNBUFFERED=1; o=$OUT/ovh.txt; tg=.gpu/tracegate; lb=.gpu/tests/gpu/launch_bound
for r in 1 2 3; do
 echo "r$r none $($lb 2>&1 | tail -1)" >>$o
 echo "r$r tg $($tg record -o /tmp/a.db -- $lb 2>&1 | grep us/launch)" >>$o
 echo "r$r tg-nodrv $($tg record --no-driver-api -o /tmp/b.db -- $lb 2>&1 | grep us/launch)" >>$o
done
for r in 1 2; do
 echo "r$r rn none $(python3 tests/gpu/resnet50_infer.py --batch 32 --iters 100 2>&1 | tail -1)" >>$o
 echo "r$r rn tg $($tg record -o /tmp/c.db -- python3 tests/gpu/resnet50_infer.py --batch 32 --iters 100 2>&1 | grep ms/iter)" >>$o
 echo "r$r rn tg-nodrv $($tg record --no-driver-api -o /tmp/d.db -- python3 tests/gpu/resnet50_infer.py --batch 32 --iters 100 2>&1 | grep ms/iter)" >>$o
done
cat $o
