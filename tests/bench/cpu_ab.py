#!/usr/bin/env python3
"""CPU time of two (or more) tracegate binaries on one trace, run in turn.

    python3 tests/bench/cpu_ab.py RUNS TRACE BINARY...

Runs `BINARY analyze TRACE -q -o OUT --commit x` RUNS times for each binary, alternating their
order from one round to the next, and prints the medians of each binary's user, system and CPU
(user + system) time, taken from getrusage of the child, and of its wall time. On a shared or
uneven machine CPU time moves far less than wall time; docs/PERFORMANCE.md says which measure
each comparison used.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    if len(sys.argv) < 4 or not sys.argv[1].isdigit():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs, trace, binaries = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if not os.path.isfile(trace) and not os.path.isdir(trace):
        print(f"cpu_ab.py: {trace}: no such trace", file=sys.stderr)
        return 2
    times = {b: [] for b in binaries}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        for i in range(runs):
            for b in binaries if i % 2 == 0 else binaries[::-1]:
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                rc = subprocess.run([b, "analyze", trace, "-q", "-o", out, "--commit", "x"]).returncode
                if rc != 0:
                    print(f"cpu_ab.py: {b} analyze {trace} exited {rc}", file=sys.stderr)
                    return 1
                t1 = time.perf_counter()
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[b].append((r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, t1 - t0))
    name = os.path.basename(trace.rstrip("/"))
    for b in binaries:
        t = times[b]
        user = statistics.median(x[0] for x in t) * 1000
        system = statistics.median(x[1] for x in t) * 1000
        cpu = statistics.median(x[0] + x[1] for x in t) * 1000
        wall = statistics.median(x[2] for x in t) * 1000
        print(f"{name:28s} {b:40s} user {user:7.1f} sys {system:6.1f} cpu {cpu:7.1f} wall {wall:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
