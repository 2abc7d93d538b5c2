"""predict --finding's covered GPU time, recomputed in plain Python (tests/cli/analyze/predict.sh).

Usage: finding_covered.py TRACE.json.gz REPORT.json CHROME.json PREDICTION.json REF

The finding's gpu claim intervals are read from `tracegate export --chrome` (its findings track:
one slice per located interval, exact ns from baseTimeNanoseconds and three-decimal us), since the
analyze report states each claim part's space and share but not its intervals; its ref (the id,
or id#k) from `analyze -o`'s findings in order. The GPU events (kernel, gpu_memcpy, gpu_memset) are
read from the Kineto JSON itself; the sum of their overlaps with the intervals, and the number of
events with some, must be the prediction's changes.findings.gpu_recorded_ms / gpu_activities.
"""
import gzip, json, sys
from decimal import Decimal
trace, report, chrome, pred, ref = sys.argv[1:6]
r = json.load(open(report))
ids = [f["id"] for f in r["findings"]]
refs = [i if ids.count(i) == 1 else "%s#%d" % (i, ids[:k + 1].count(i)) for k, i in enumerate(ids)]
index = refs.index(ref)
c = json.load(open(chrome), parse_float=Decimal)
base = int(c["baseTimeNanoseconds"])
claim = sorted((base + int(e["ts"] * 1000), base + int(e["ts"] * 1000) + int(e["dur"] * 1000))
               for e in c["traceEvents"]
               if e.get("ph") == "X" and e.get("cat") == "finding" and e["args"]["finding"] == "#%d" % (index + 1)
               and e["args"]["claimed time"] == "gpu")
assert claim, "no gpu claim intervals for " + ref
t = json.load(gzip.open(trace), parse_float=Decimal)
tbase = int(t.get("baseTimeNanoseconds", 0))
covered = acts = 0
for e in t["traceEvents"]:
    if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
        continue
    s = tbase + int(Decimal(e["ts"]) * 1000)
    end = s + int(Decimal(e["dur"]) * 1000)
    o = sum(max(0, min(end, b) - max(s, a)) for a, b in claim)
    covered += o
    acts += o > 0
p = json.load(open(pred))["changes"]["findings"]
assert p["replayed"] == [ref], p
assert round(p["gpu_recorded_ms"] * 1e6) == covered and p["gpu_activities"] == acts, (p, covered, acts)
print(ref, "covered", covered, "ns in", acts, "activities")
