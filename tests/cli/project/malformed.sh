#!/usr/bin/env bash
# The malformed-input catalogue (docs/RULES.md, "Malformed input"): every case either exits 2 with
# exactly one stderr line naming the file and no output left behind, or is imported with its bad
# events counted under the data-quality counter its rule names - never a crash or a hang (each run
# has a 60 s limit). Cases are generated here from one valid event so that each breaks one thing.
source "$(dirname "$0")/../testlib.bash"
python3 - "$tg" "$fixtures" "$dir" <<'EOF_PY' && ok || fail "malformed-input catalogue"
import gzip, json, os, sqlite3, subprocess, sys
tg, fixtures, d = sys.argv[1], sys.argv[2], sys.argv[3]

def kernel(**over):
    e = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
         "args": {"stream": 7, "device": 0, "correlation": 1}}
    e.update(over)
    return e
GOOD = json.dumps(kernel(name="good", ts=1))
def trace(*events):  # a trace text: the good event, then the given events (dicts or raw text)
    parts = [GOOD] + [e if isinstance(e, str) else json.dumps(e) for e in events]
    return '{"traceEvents": [' + ", ".join(parts) + "]}"
def nsys(sql):  # the small nsys fixture, then `sql` run on it
    path = os.path.join(d, "nsys_%d.sqlite" % len(os.listdir(d)))
    db = sqlite3.connect(path)
    db.executescript(open(os.path.join(fixtures, "nsys", "small_export.sql")).read())
    db.executescript(sql)
    db.commit(); db.close()
    return open(path, "rb").read()

CASES = [  # name, file suffix, content (str or bytes), ("exit2", stderr text) | ("counted", {key: n})
  ("truncated_event", ".json", trace()[:-30], ("exit2", "truncated JSON")),
  ("truncated_gzip", ".json.gz", gzip.compress(trace().encode())[:40], ("exit2", "gzip")),
  ("nan_literal", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k", "ts": NaN, "dur": 1}'), ("exit2", "invalid JSON")),
  ("infinity_literal", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k", "ts": Infinity, "dur": 1}'), ("exit2", "invalid JSON")),
  ("lone_surrogate", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k\\ud800", "ts": 5, "dur": 1}'), ("exit2", "invalid JSON")),
  ("trailing_garbage", ".json", trace() + " garbage", ("exit2", "after the top-level value")),
  ("nesting_100000", ".json", "[" * 100000 + "]" * 100000, ("exit2", "nested deeper than")),
  ("nesting_in_args", ".json", trace(kernel(args={"x": json.loads("[" * 600 + "]" * 600)})), ("exit2", "nested deeper than")),
  ("nul_bytes", ".json", b"\0" * 64, ("exit2", "not a trace")),
  ("gzip_of_text", ".json.gz", gzip.compress(b"this is not json"), ("exit2", "not a trace")),
  ("events_not_array", ".json", '{"traceEvents": "none"}', ("exit2", "traceEvents")),
  ("top_level_string", ".json", '"traceEvents"', ("exit2", "not a trace")),
  ("no_events", ".json", '{"schemaVersion": 1}', ("exit2", "no trace events")),
  ("ts_overflow_1e400", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e400, "dur": 1, "args": {"stream": 7, "device": 0}}'), ("counted", {"timestamp_overflow": 1})),
  ("dur_overflow", ".json", trace(kernel(dur=1e18)), ("counted", {"timestamp_overflow": 1})),
  ("ts_negative", ".json", trace(kernel(ts=-5)), ("counted", {"negative_timestamp": 1})),
  ("dur_negative", ".json", trace(kernel(dur=-1)), ("counted", {"negative_duration": 1})),
  ("ts_string", ".json", trace(kernel(ts="12")), ("counted", {"malformed_event": 1})),
  ("ts_null", ".json", trace(kernel(ts=None)), ("counted", {"missing_timestamp": 1})),
  ("name_number", ".json", trace(kernel(name=42)), ("counted", {"malformed_event": 1})),
  ("event_not_object", ".json", trace("42"), ("counted", {"malformed_event": 1})),
  ("device_out_of_range", ".json", trace(kernel(args={"stream": 7, "device": 3000000000})), ("counted", {"malformed_event": 1})),
  ("negative_bytes", ".json", trace({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 20, "dur": 1, "args": {"stream": 7, "device": 0, "bytes": -5}}), ("counted", {"malformed_event": 1})),
  ("invalid_utf8_name", ".json", trace().replace('"good"', '"bad\xff\xfe"').encode("latin-1"), ("counted", {"invalid_utf8": 1})),
  ("duplicate_keys", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "ts": 9, "dur": 1, "args": {"stream": 7, "device": 0}}'), ("counted", {"duplicate_key": 1})),
  ("duplicate_keys_in_args", ".json", trace('{"ph": "X", "cat": "kernel", "name": "k\\u00e9", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"stream": 7, "stream": 8, "device": 0}}'), ("counted", {"duplicate_key": 1})),
  ("events_out_of_order", ".json", '{"traceEvents": [' + json.dumps(kernel(name="late", ts=100)) + ", " + GOOD + "]}", ("counted", {})),
  ("overlapping_ranges", ".json", trace({"ph": "X", "cat": "user_annotation", "name": "r1", "pid": 1, "tid": 1, "ts": 1, "dur": 10}, {"ph": "X", "cat": "user_annotation", "name": "r2", "pid": 1, "tid": 1, "ts": 5, "dur": 10}), ("counted", {"overlapping_ranges": 1})),
  ("store_future_schema", ".db", None, ("exit2", "newer")),
  ("sqlite_truncated", ".sqlite", None, ("exit2", "")),
  # nsys cases: counters beyond those of the unmodified fixture (NSYS_BASE below).
  ("nsys_end_before_start", ".sqlite", nsys("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE start = 1000;"), ("counted", {"negative_duration": 1, "unmatched_launch": 1})),
  ("nsys_missing_string", ".sqlite", nsys("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 999999, demangledName = 999999 WHERE start = 1000;"), ("counted", {"unresolved_name": 1})),
  ("nsys_text_start", ".sqlite", nsys("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE start = 1000;"), ("counted", {"malformed_event": 1, "unmatched_launch": 1})),
  ("nsys_negative_start", ".sqlite", nsys("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -500 WHERE start = 1000;"), ("counted", {"negative_timestamp": 1, "unmatched_launch": 1})),
  ("nsys_invalid_utf8", ".sqlite", nsys("UPDATE StringIds SET value = CAST(X'6261644142FF' AS TEXT) WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 1000);"), ("counted", {"invalid_utf8": 1})),
]
# SQLite files that are not traces: written here, not generated as text.
sq = os.path.join(d, "future.db")
db = sqlite3.connect(sq); db.execute("CREATE TABLE tracegate_schema(version INTEGER)"); db.execute("INSERT INTO tracegate_schema VALUES (999)"); db.commit(); db.close()
future = open(sq, "rb").read()
truncated = nsys("")[:3000]
CASES = [(n, s, future if n == "store_future_schema" else truncated if n == "sqlite_truncated" else c, e) for n, s, c, e in CASES]

REPORT = json.load(open(os.path.join(fixtures, "summary", "expected_report.json")))
def report(**over):
    r = json.loads(json.dumps(REPORT)); r.update(over); return json.dumps(r)
GATE_CASES = [  # NEW report content -> gate against the valid fixture report must exit 2
  ("report_other_schema", report(schema="tracegate.report/v0"), "tracegate.report/v0"),
  ("report_avg_string", report(avg_latency_ms="fast"), "avg_latency_ms"),
  ("report_avg_1e999", report().replace('"avg_latency_ms": 0.1', '"avg_latency_ms": 1e999'), "avg_latency_ms"),
  ("report_negative_avg", report(avg_latency_ms=-3), "avg_latency_ms"),
  ("report_array", "[1, 2]", "report_array"),
  ("report_truncated", report()[:200], "report_truncated"),
  ("report_empty", "", "report_empty"),
]

def counters_of(out):
    c = {c["key"]: c["count"] for c in json.load(open(out))["data_quality"]["counters"] if c["count"]}
    c.pop("unknown_category_skipped", None); c.pop("unmatched_correlation", None)
    return c
base_path = os.path.join(d, "nsys_base.sqlite")
open(base_path, "wb").write(nsys(""))
subprocess.run([tg, "analyze", base_path, "-q", "-o", base_path + ".json"], check=True)
NSYS_BASE = counters_of(base_path + ".json")

problems, n = [], 0
def run(args):
    try:
        return subprocess.run(args, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None
for name, suffix, content, (kind, expect) in CASES:
    n += 1
    path = os.path.join(d, name + suffix)
    with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    out = os.path.join(d, name + ".report.json")
    p = run([tg, "analyze", path, "-q", "-o", out])
    if p is None:
        problems.append(f"{name}: hang (over 60 s)"); continue
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0 or p.returncode > 2:
        problems.append(f"{name}: crashed (exit {p.returncode}): {err[-300:]}"); continue
    if kind == "exit2":
        lines = err.splitlines()
        if p.returncode != 2 or len(lines) != 1 or path not in lines[0] or expect not in lines[0] or os.path.exists(out):
            problems.append(f"{name}: want exit 2 and one line naming the file with '{expect}', no report; got exit {p.returncode}: {err.strip()[:300]}")
        continue
    if p.returncode != 0:
        problems.append(f"{name}: want it imported with counters {expect}; got exit {p.returncode}: {err.strip()[:300]}"); continue
    counters = counters_of(out)
    if name.startswith("nsys_"):
        counters = {k: v - NSYS_BASE.get(k, 0) for k, v in counters.items() if v != NSYS_BASE.get(k, 0)}
    if counters != expect:
        problems.append(f"{name}: counters {counters}, want {expect}")
good = os.path.join(d, "good.json")
open(good, "w").write(json.dumps(REPORT))
for name, content, expect in GATE_CASES:
    n += 1
    path = os.path.join(d, name + ".json")
    open(path, "w").write(content)
    p = run([tg, "gate", path, "--baseline", good])
    if p is None:
        problems.append(f"gate {name}: hang"); continue
    first = p.stdout.decode(errors="replace").splitlines()[:1]
    if p.returncode != 2 or not first or not first[0].startswith("CANNOT JUDGE") or expect not in first[0]:
        problems.append(f"gate {name}: want exit 2, 'CANNOT JUDGE ... {expect}'; got {p.returncode}: {first} {p.stderr.decode()[:200]}")
    p = run([tg, "gate", good, "--baseline", path])  # the same file as the baseline
    if p is None or p.returncode != 2:
        problems.append(f"gate --baseline {name}: want exit 2, got {None if p is None else p.returncode}")
print(f"malformed: {n} cases")
assert n >= 30, n
assert not problems, "\n".join(problems)
EOF_PY
finish malformed.sh
