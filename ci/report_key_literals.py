#!/usr/bin/env python3
"""Counts the sites that spell a report key as a string literal outside reports/document/report_keys.h.

The keys are the headline figures (kHeadline) and the iteration rows' keys (kIterationRowKeys) that
report_keys.h declares, less the row keys other objects of the report share (index, name, start_ns,
end_ns, kernels, memcpys, memsets, syncs), whose literals cannot be told apart by reading. Sources:
analyzer/, reports/, cli/, python/, collector/ (.cpp, .h, .py); comment lines and trailing `// `
comments left out; tests and the schema are not sources. Strings spelled like a key that are not
that key are listed in NOT_KEYS with the reason, and printed apart.

Usage: report_key_literals.py [--rev REV] [--check]
  --rev REV  count in a commit (git show) instead of the working tree
  --check    exit 1 when any site remains (tests/cli/project/report_key_literals.sh)
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
KEYS_H = "reports/document/report_keys.h"
SOURCES = ("analyzer", "reports", "cli", "python", "collector")
SHARED_ROW_KEYS = {"index", "name", "start_ns", "end_ns", "kernels", "memcpys", "memsets", "syncs"}

# (path prefix, text on the line, why the string is not the report key)
NOT_KEYS = [
    ("analyzer/analysis/iterations.cpp", "Plural(", "the English word in a message"),
    ("reports/", '"iteration" : "iterations"', "the English word in a message"),
    ("analyzer/analysis/rules/", '"', "a finding's evidence metric: a value naming the figure (the analyzer cannot see reports/)"),
    ("analyzer/include/tracegate/analyzer/model.h", "kMemoryPeakMb =", "the trace metadata key the collector writes, which the report reads"),
    ("reports/html/timeline_html.cpp", '"lane-label", "iterations"', "a lane label on the timeline"),
    ("reports/html/timeline_html.cpp", 'Array(ov, "iterations")', "timeline.iterations, the timeline section's own key"),
    ("reports/report/timeline_json.cpp", 'doc["iterations"]', "timeline.iterations, the timeline section's own key"),
    ("reports/report/timeline_json.cpp", 'doc["latency_ms"]', "timeline.latency_ms, the drawn iteration's"),
    ("reports/report/timeline_json.cpp", 'doc["phases_ms"]', "timeline.phases_ms, the drawn iteration's"),
    ("reports/report/analysis_json.cpp", '{"latency_ms", NsToMs(d.latency_ns())}', "iteration_source.warmup.dropped[].latency_ms"),
    ("reports/report/analysis_json.cpp", '{"tokens", g.tokens', "serving.groups[].tokens"),
    ("python/src/report_binding.cpp", 'm["iterations"]', "a key of predict()'s Python dict"),
    ("reports/api/predict_run.cpp", 'j["iterations"]', "predict --json's own key (tracegate.prediction.v1.schema.json)"),
    ("reports/api/predict_run.cpp", '{"iterations", rits}', "predict --json's job.ranks[].iterations (tracegate.prediction.v1.schema.json)"),
    ("reports/api/predict_run.cpp", '{"iterations", path.iterations}', "predict --json's job.critical_path.iterations (tracegate.prediction.v1.schema.json)"),
    ("python/src/report_binding.cpp", 'def_readwrite("iterations"', "a Python attribute of the settings"),
    ("python/tracegate/_report.py", "``report[", "an example in a docstring"),
]


def read(path, rev):
    if rev:
        return subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True, text=True).stdout
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def files(rev):
    if rev:
        out = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True)
        return out.stdout.split()
    found = []
    for top in SOURCES:
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            found += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
    return found


def declared(text):
    names = dict(re.findall(r"inline constexpr Key (k\w+)\{\s*\.name = \"(\w+)\"", text))
    if not names:  # positional initializers (before the keys had designated ones)
        names = dict(re.findall(r"inline constexpr Key (k\w+)\{\s*\"(\w+)\"", text))

    def members(array):
        m = re.search(array + r"\{([^;]*)\};", text)
        return [names[c] for c in re.findall(r"&(k\w+)", m.group(1)) if c in names] if m else []

    rows = [k for k in members("kIterationRowKeys") if k not in SHARED_ROW_KEYS]
    return members("kHeadline"), rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    headline, rows = declared(read(KEYS_H, args.rev))
    if args.rev and not headline:  # a commit from before report_keys.h: today's keys
        headline, rows = declared(read(KEYS_H, None))
    if not headline or not rows:
        print(f"report_key_literals: no keys found in {KEYS_H}", file=sys.stderr)
        return 2
    pattern = re.compile(r'"(' + "|".join(map(re.escape, headline + rows)) + r')"')
    sites, apart = [], []
    for path in sorted(files(args.rev)):
        if not re.search(r"\.(cpp|h|py)$", path) or path.split("/")[0] not in SOURCES or path == KEYS_H:
            continue
        for n, line in enumerate(read(path, args.rev).split("\n"), 1):
            s = line.strip()
            if s.startswith(("//", "#", '"""')):
                continue
            code = line.split(" // ")[0]
            for m in pattern.finditer(code):
                why = next((w for p, t, w in NOT_KEYS if path.startswith(p) and t in code), None)
                (apart if why else sites).append((path, n, m.group(1), why or s[:100]))
    label = args.rev or "working tree"
    print(f"{label}: {len(sites)} sites spell a report key in {len({s[0] for s in sites})} files "
          f"({len(headline)} headline keys, {len(rows)} iteration-row keys); "
          f"{len(apart)} strings spelled like one are other things")
    for path, n, key, text in sites:
        print(f"  {path}:{n}: \"{key}\": {text}")
    for path, n, key, why in apart:
        print(f"  (not a key) {path}:{n}: \"{key}\": {why}")
    return 1 if args.check and sites else 0


if __name__ == "__main__":
    sys.exit(main())
