#!/usr/bin/env python3
"""An independent checker of Chrome trace-event JSON, as Perfetto UI and chrome://tracing read it.

Usage: chrome_trace_check.py FILE...   (exit 1 and one line per problem when a file breaks a rule)
       import chrome_trace_check; chrome_trace_check.check(doc) -> [problem, ...]

It knows nothing of tracegate's code: the rules are the Trace Event Format's (the "JSON Object
Format" with "traceEvents", phases X/i/C/M/s/t/f) and what Perfetto's JSON importer needs
(json_trace_tokenizer / json_trace_parser, perfetto.dev/docs/faq):
- ts and dur are microseconds whatever "displayTimeUnit" says ("ms" or "ns": display only);
  Perfetto has no negative timestamps, so ts >= 0; numbers, finite.
- pid and tid are integers that fit Perfetto's uint32 and chrome://tracing's int: 0..2^31-1 (a
  negative or string pid is coerced or hashed by the importer: two processes can merge); a tid of
  0 is read as "no tid" and replaced by the pid, so a track's events have a tid other than 0.
- "M" metadata: process_name / thread_name with a non-empty args.name, process_sort_index /
  thread_sort_index with an integer args.sort_index, process_labels with args.labels. Each pid
  that has events has exactly one process_name (a second one renames the process: the last
  wins), each track (pid, tid) with slices, instants or flows exactly one thread_name, at most
  one sort index each.
- Complete events ("X") on one track (pid, tid) nest properly: two slices are disjoint or one
  contains the other (Perfetto drops or misplaces a partial overlap). Readers sort by ts stably,
  so slices of a track that start at the same ts are written longest first (else the shorter
  one would become the parent).
- Counters ("C"): args is a non-empty object of numbers (Perfetto makes one track per key).
- Flow v1 events ("s" / "t" / "f", joined by cat + name + id): each flow has one "s" and at least
  one "f"; an "s" and an "f" with "bp":"e" bind to the slice that encloses their ts on their own
  track, an "f" without "bp" to the next slice that starts on its track at or after ts; a flow
  does not go back in time.
All times are compared as integer nanoseconds (round(us * 1000)).
"""
import bisect
import gzip
import json
import math
import sys
from collections import Counter, defaultdict

PHASES = set("XBEiICMstfben")
META = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}
ID_MAX = 2**31 - 1
SHOWN = 5  # problems listed per rule


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _ns(us):
    return round(us * 1000)


class _Problems:
    def __init__(self):
        self.by_rule = defaultdict(list)
        self.count = Counter()

    def add(self, rule, text):
        self.count[rule] += 1
        if len(self.by_rule[rule]) < SHOWN:
            self.by_rule[rule].append(text)

    def lines(self):
        out = []
        for rule, texts in self.by_rule.items():
            more = self.count[rule] - len(texts)
            for t in texts:
                out.append(f"{rule}: {t}")
            if more:
                out.append(f"{rule}: ... and {more} more")
        return out


def _brief(e):
    keys = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp")
    return json.dumps({k: e[k] for k in keys if k in e}, ensure_ascii=True)[:200]


def check(doc, stats=None):
    """Returns the problems found in a parsed trace (a list of strings; empty when it is valid)."""
    p = _Problems()
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        unit = doc.get("displayTimeUnit")
        if unit is not None and unit not in ("ms", "ns"):
            p.add("displayTimeUnit", f"{unit!r} (the format allows \"ms\" or \"ns\")")
    else:
        events = doc
    if not isinstance(events, list):
        return ["format: no traceEvents array"]

    process_names = Counter()
    thread_names = Counter()
    process_sorts = Counter()
    thread_sorts = Counter()
    used_pids = set()
    named_tracks = set()  # tracks that need a thread_name: slices, instants, flows
    slices = defaultdict(list)  # (pid, tid) -> [(start_ns, end_ns, file_index)]
    flows = defaultdict(lambda: {"s": [], "t": [], "f": []})
    n_counters = 0

    for i, e in enumerate(events):
        if not isinstance(e, dict):
            p.add("event", f"#{i} is not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            p.add("phase", f"#{i} ph {ph!r}: {_brief(e)}")
            continue
        if "name" in e and not isinstance(e["name"], str):
            p.add("name", f"#{i} name is not a string: {_brief(e)}")
        bad_id = False
        for key in ("pid", "tid"):
            v = e.get(key)
            process_scoped = ph == "C" or (ph == "M" and str(e.get("name", "")).startswith("process"))
            if v is None and key == "tid" and process_scoped:
                continue  # a process's metadata or counter needs no thread
            if not _is_int(v) or not 0 <= v <= ID_MAX:
                p.add("pid/tid", f"#{i} {key} {v!r} is not an integer in 0..2^31-1: {_brief(e)}")
                bad_id = True
        if bad_id:
            continue
        pid, tid = e["pid"], e.get("tid")
        if ph in "XBEistf" and tid == 0 and pid != 0:
            p.add("pid/tid", f"#{i} tid 0 (Perfetto reads it as no tid and moves the event to thread {pid}): {_brief(e)}")
        if ph != "M":
            ts = e.get("ts")
            if not _is_num(ts):
                p.add("ts", f"#{i} ts {ts!r} is not a finite number: {_brief(e)}")
                continue
            if ts < 0:
                p.add("ts", f"#{i} ts {ts} is negative (Perfetto has no negative timestamps): {_brief(e)}")
            used_pids.add(pid)

        if ph == "M":
            name, args = e.get("name"), e.get("args")
            if name not in META:
                p.add("metadata", f"#{i} unknown metadata {name!r}")
                continue
            if not isinstance(args, dict):
                p.add("metadata", f"#{i} {name} without args: {_brief(e)}")
                continue
            if name in ("process_name", "thread_name"):
                if not isinstance(args.get("name"), str) or not args["name"]:
                    p.add("metadata", f"#{i} {name} without a non-empty args.name: {_brief(e)}")
                if name == "process_name":
                    process_names[pid] += 1
                else:
                    thread_names[(pid, tid)] += 1
            elif name.endswith("sort_index"):
                if not _is_int(args.get("sort_index")):
                    p.add("metadata", f"#{i} {name} without an integer args.sort_index: {_brief(e)}")
                if name == "process_sort_index":
                    process_sorts[pid] += 1
                else:
                    thread_sorts[(pid, tid)] += 1
            elif not isinstance(args.get("labels"), str):
                p.add("metadata", f"#{i} process_labels without a string args.labels: {_brief(e)}")
        elif ph == "X":
            dur = e.get("dur")
            if not _is_num(dur) or dur < 0:
                p.add("dur", f"#{i} dur {dur!r} is not a finite number >= 0: {_brief(e)}")
                continue
            start = _ns(e["ts"])
            slices[(pid, tid)].append((start, start + _ns(dur), i))
            named_tracks.add((pid, tid))
        elif ph in ("B", "E"):
            named_tracks.add((pid, tid))  # accepted; nesting is checked for X only
        elif ph in ("i", "I"):
            scope = e.get("s", "t")
            if scope not in ("g", "p", "t"):
                p.add("instant", f"#{i} scope {scope!r}: {_brief(e)}")
            elif scope == "t":
                named_tracks.add((pid, tid))
        elif ph == "C":
            n_counters += 1
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                p.add("counter", f"#{i} a counter needs a non-empty args object: {_brief(e)}")
            else:
                for k, v in args.items():
                    if not _is_num(v):
                        p.add("counter", f"#{i} {k}={v!r} is not a finite number: {_brief(e)}")
        elif ph in ("s", "t", "f"):
            fid = e.get("id")
            if not (_is_int(fid) or isinstance(fid, str)):
                p.add("flow", f"#{i} flow event without an id: {_brief(e)}")
                continue
            if ph == "f" and e.get("bp") not in (None, "e"):
                p.add("flow", f"#{i} bp {e.get('bp')!r} (\"e\" or absent): {_brief(e)}")
            flows[(e.get("cat"), e.get("name"), fid)][ph].append(e)
            named_tracks.add((pid, tid))

    # Names: one process_name per pid with events, one thread_name per track, one sort index each.
    for pid in sorted(used_pids):
        if process_names[pid] != 1:
            p.add("process_name", f"pid {pid} has {process_names[pid]} process_name events, want 1")
    for pid, n in sorted(process_names.items()):
        if pid not in used_pids and n > 1:
            p.add("process_name", f"pid {pid} (no events) has {n} process_name events")
    for track in sorted(named_tracks):
        if thread_names[track] != 1:
            p.add("thread_name", f"track (pid, tid) {track} has {thread_names[track]} thread_name events, want 1")
    for track, n in sorted(thread_names.items()):
        if track not in named_tracks and n > 1:
            p.add("thread_name", f"track {track} (no events) has {n} thread_name events")
    for what, counts in (("process_sort_index", process_sorts), ("thread_sort_index", thread_sorts)):
        for key, n in sorted(counts.items()):
            if n > 1:
                p.add(what, f"{key} has {n} {what} events")

    # Nesting, and the order of slices that start together.
    for track, xs in slices.items():
        by_start = defaultdict(list)
        for start, end, i in xs:
            by_start[start].append((i, end - start))
        for start, group in by_start.items():
            group.sort()
            durs = [d for _, d in group]
            if any(a < b for a, b in zip(durs, durs[1:])):
                p.add("order", f"track {track}: slices starting at {start} ns are not written longest first "
                      f"(events {[i for i, _ in group][:6]}, durations {durs[:6]} ns)")
        xs.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        for start, end, i in xs:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                top = stack[-1]
                p.add("nesting", f"track {track}: {_brief(events[i])} overlaps {_brief(events[top[2]])} "
                      f"partially ([{start}, {end}] vs [{top[0]}, {top[1]}] ns)")
                continue
            stack.append((start, end, i))

    # Flows: both ends exist and bind to a slice on their own track.
    # Per track: slice starts in order and the latest end among the slices started so far, so a
    # slice encloses ts exactly when the latest end among those starting at or before ts >= ts.
    index = {}
    for track, xs in slices.items():
        starts = [s for s, _, _ in xs]
        latest, run = [], -1
        for _, end, _ in xs:
            run = max(run, end)
            latest.append(run)
        index[track] = (starts, latest)

    def encloses(e):
        starts, latest = index.get((e["pid"], e["tid"]), ([], []))
        k = bisect.bisect_right(starts, _ns(e["ts"]))
        return k > 0 and latest[k - 1] >= _ns(e["ts"])

    def next_slice(e):
        starts, _ = index.get((e["pid"], e["tid"]), ([], []))
        return bisect.bisect_left(starts, _ns(e["ts"])) < len(starts)

    n_flows = 0
    for key, ends in flows.items():
        n_flows += 1
        if len(ends["s"]) != 1:
            p.add("flow", f"flow {key} has {len(ends['s'])} start ('s') events, want 1")
        if not ends["f"]:
            p.add("flow", f"flow {key} has no end ('f') event")
        for e in ends["s"] + ends["t"]:
            if not encloses(e):
                p.add("flow binding", f"{_brief(e)} has no slice around it on its track")
        for e in ends["f"]:
            ok = encloses(e) if e.get("bp") == "e" else next_slice(e)
            if not ok:
                p.add("flow binding", f"{_brief(e)} binds to no slice on its track")
        if ends["s"]:
            t0 = _ns(ends["s"][0]["ts"])
            for e in ends["t"] + ends["f"]:
                if _ns(e["ts"]) < t0:
                    p.add("flow time", f"flow {key} ends before it starts: {_brief(e)}")

    if stats is not None:
        stats.update(events=len(events), pids=len(used_pids), tracks=len(named_tracks),
                     slices=sum(len(x) for x in slices.values()), flows=n_flows, counters=n_counters)
    return p.lines()


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main(paths):
    bad = 0
    for path in paths:
        stats = {}
        try:
            problems = check(load(path), stats)
        except (OSError, ValueError) as err:
            problems = [f"cannot read: {err}"]
        for line in problems:
            print(f"{path}: {line}")
        if problems:
            bad += 1
        else:
            print(f"{path}: ok: " + ", ".join(f"{v} {k}" for k, v in stats.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
