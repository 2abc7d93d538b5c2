"""Analysis, comparison, gate and predict: the CLI's commands as functions, each running the same
C++ stages the CLI runs (tracegate/reports/api.h)."""

import functools
import os

from . import _tracegate as _native
from ._errors import Error
from ._trace import Trace


def _pandas():
    import pandas

    return pandas


def _is_path(x):
    return isinstance(x, (str, os.PathLike))


def _phases(phases):
    """--phase: a dict {"pre": REGEX, ...} or strings "pre=REGEX"."""
    if phases is None:
        return []
    if isinstance(phases, dict):
        return [f"{k}={v}" for k, v in phases.items()]
    if isinstance(phases, str):
        return [phases]
    return list(phases)


def _skip(skip):
    return "auto" if skip is None else str(skip)


def _iteration_settings(iteration=None, skip="auto", phases=None, batch=1):
    s = _native.IterationSettings()
    s.iteration_regex = iteration or ""
    s.skip = _skip(skip)
    s.phases = _phases(phases)
    s.batch = int(batch)
    return s


def _analysis_settings(*, top=10, gaps=10, small_copy_bytes=64 * 1024, iteration=None, skip="auto", phases=None,
                       batch=1, model=None, precision=None, commit=None, rules=None, costs=None, peak_gbs=None,
                       peak_tflops=None, reference=None, critical_path=False, replay_findings=False,
                       capture=None):
    s = _native.AnalysisSettings()
    s.top_k = int(top)
    s.largest_gaps = int(gaps)
    s.small_copy_bytes = int(small_copy_bytes)
    s.iterations = _iteration_settings(iteration, skip, phases, batch)
    s.model = model or ""
    s.precision = precision or ""
    s.commit = commit or ""
    s.rules_path = os.fspath(rules) if rules else ""
    s.costs_path = os.fspath(costs) if costs else ""
    s.reference_path = os.fspath(reference) if reference else ""
    s.peak_gbs = float(peak_gbs or 0)
    s.peak_tflops = float(peak_tflops or 0)
    s.critical_path = bool(critical_path)
    s.replay_findings = bool(replay_findings)
    if capture is None:
        s.captures = []
    elif _is_path(capture):
        s.captures = [os.fspath(capture)]
    else:
        s.captures = [os.fspath(p) for p in capture]
    return s


# Column order of the DataFrames: the report's documented order (analysis_report.h), which its
# JSON does not keep (keys are sorted there); columns not named here follow in the JSON's order.
_FINDING_COLUMNS = ["id", "title", "priority", "summary", "amdahl.gain_pct", "amdahl.overall_speedup", "amdahl.share",
                    "amdahl.speedup", "amdahl.upper_bound", "evidence_strength", "heuristic", "evidence", "involved",
                    "strategies", "claim", "overlaps"]
# The leading columns of Report.iterations, as the report's key list declares them.
_ITERATION_COLUMNS = _native.iteration_columns()


def _ordered(df, first):
    cols = [c for c in first if c in df.columns]
    return df[cols + [c for c in df.columns if c not in cols]]


class Report:
    """A tracegate report: ``.dict`` is the document ``tracegate analyze -o`` writes (schema
    tracegate.report/v1, docs/REPORT.md); ``.findings``, ``.iterations`` (and ``.ranks`` of a job)
    are DataFrames of its tables. ``report["avg_latency_ms"]`` reads a key of the document."""

    def __init__(self, native, source=None):
        self._native = native
        self.source = source

    @functools.cached_property
    def dict(self):
        """The report document as Python objects (parsed once, then kept)."""
        return self._native.to_python()

    def __getitem__(self, key):
        return self.dict[key]

    def get(self, key, default=None):
        return self.dict.get(key, default)

    @property
    def is_job(self):
        return self._native.job

    @property
    def findings(self):
        """One row per finding, by priority: id, title, priority, summary, ..., amdahl.* flattened
        (amdahl.gain_pct, amdahl.overall_speedup, ...); evidence, involved, claim as lists."""
        findings = self.dict.get("findings", [])
        if not findings:  # no rule fired: the columns still there, no rows
            return _pandas().DataFrame(columns=_FINDING_COLUMNS)
        return _ordered(_pandas().json_normalize(findings, max_level=1), _FINDING_COLUMNS)

    @property
    def iterations(self):
        """The iteration table: one row per kept iteration, phases_ms.* flattened."""
        return _ordered(_pandas().json_normalize(self.dict.get("iteration_table", []), max_level=1), _ITERATION_COLUMNS)

    @property
    def ranks(self):
        """ranks[] of the report: one row per rank of a job (one row for a single trace)."""
        return _pandas().DataFrame(self.dict.get("ranks", []))

    @property
    def text(self):
        """The summary ``tracegate analyze`` prints."""
        return self._native.text()

    @property
    def markdown(self):
        return self._native.markdown()

    @property
    def html(self):
        return self._native.html()

    def write_json(self, path):
        """Writes the report as ``tracegate analyze -o`` does (the same bytes)."""
        self._native.write_json(os.fspath(path))

    def write_markdown(self, path):
        self._native.write_markdown(os.fspath(path))

    def write_html(self, path):
        self._native.write_html(os.fspath(path))

    def __str__(self):
        return self.text

    def __repr__(self):
        d = self.dict
        what = "job report" if self.is_job else "report"
        return (f"<tracegate {what} {self.source or ''}: {d.get('iterations')} iterations, avg latency "
                f"{d.get('avg_latency_ms')} ms, {len(d.get('findings', []))} findings>")


def analyze(trace, *, output=None, md=None, html=None, jobs=None, **options):
    """Analyzes a trace as ``tracegate analyze`` does and returns the Report.

    ``trace``: a path (any format tracegate reads), a loaded Trace, or, for the ranks of one job,
    a directory or a list of paths (the job report). Options, as the CLI's: top=10, gaps=10,
    small_copy_bytes=65536, iteration=REGEX, skip="auto" or a count, phases={"pre": REGEX, ...}
    (or ["pre=REGEX"]), batch=1, model, precision, commit (default: the git HEAD of the current
    directory), rules, costs, peak_gbs, peak_tflops, reference, critical_path=False, replay_findings=False
    (each finding's gain by the replay, as --replay-findings), capture (a path or a list of paths: the graph
    capture traces, as --capture). ``output``, ``md``, ``html``:
    files to write the report to (JSON as -o, Markdown, HTML)."""
    settings = _analysis_settings(**options)
    source = trace.path if isinstance(trace, Trace) else os.fspath(trace) if _is_path(trace) else None
    for out in (output, md, html):
        if out and source:
            _native.check_output_path(source, os.fspath(out))
    if isinstance(trace, Trace):
        rep = Report(_native.analyze_trace(trace._native, settings), source)
    elif _is_path(trace) and not os.path.isdir(trace):
        rep = Report(_native.analyze_file(source, settings), source)
    elif _is_path(trace) or isinstance(trace, (list, tuple)):
        inputs = [os.fspath(trace)] if _is_path(trace) else [os.fspath(p) for p in trace]
        rep = Report(_native.analyze_job(inputs, settings, int(jobs or 0)), source)
    else:
        raise TypeError(f"analyze() takes a path, a tracegate.Trace or a list of paths, not {type(trace).__name__}")
    if output:
        rep.write_json(output)
    if md:
        rep.write_markdown(md)
    if html:
        rep.write_html(html)
    return rep


class Comparison:
    """Two runs compared under the gate's rules (tracegate compare / gate): ``.verdict`` ("pass",
    "regression", "cannot_judge"), ``.text`` (the verdict line), ``.exit_code`` (the gate's: 0 pass,
    1 regression, 2 cannot judge), ``.problems`` (why it cannot judge), ``.dict`` (the comparison
    document, compare --json), ``.markdown``, ``.junit``, ``.html``; str() is what the CLI prints."""

    def __init__(self, native, warning=None):
        self._native = native
        self.warning = warning  # the gate's history could not be written (the CLI's warning line)

    verdict = property(lambda self: self._native.verdict)
    text = property(lambda self: self._native.text)
    exit_code = property(lambda self: self._native.exit_code)
    problems = property(lambda self: self._native.problems)
    notes = property(lambda self: self._native.notes)
    passed = property(lambda self: self._native.verdict == "pass")

    @functools.cached_property
    def dict(self):
        return self._native.to_python()

    markdown = property(lambda self: self._native.markdown())
    junit = property(lambda self: self._native.junit())
    html = property(lambda self: self._native.html())

    def __str__(self):
        return self._native.printed()

    def __repr__(self):
        return f"<tracegate.Comparison {self.verdict} (exit code {self.exit_code}): {self.text}>"


def _verdict_settings(threshold=5, require_significance=False, allow_device_mismatch=False, max_malformed_pct=1,
                      kernel_threshold=None):
    v = _native.VerdictSettings()
    if not 0 <= float(threshold) <= 1000:
        raise ValueError(f"threshold {threshold}: expected a percentage in [0, 1000]")
    v.threshold_pct = float(threshold)
    v.require_significance = bool(require_significance)
    v.allow_device_mismatch = bool(allow_device_mismatch)
    v.max_malformed_pct = float(max_malformed_pct)
    v.kernel_threshold_pct = -1.0 if kernel_threshold is None else float(kernel_threshold)
    return v


def _as_report(x, skip, label):
    """A native report from a path (a report, or a trace analyzed with default options, as the CLI
    reads "a report or a trace"), a Report, or a report document (dict)."""
    if isinstance(x, Report):
        return x._native
    if isinstance(x, Trace):
        return analyze(x, skip=skip)._native
    if isinstance(x, dict):
        return _native.report_from_python(x, label)
    if _is_path(x):
        return _native.read_report_or_trace(os.fspath(x), _skip(skip))
    raise TypeError(f"expected a path, a tracegate.Report, a Trace or a report dict, not {type(x).__name__}")


def _label(x, default):
    if _is_path(x):
        return os.fspath(x)
    if isinstance(x, (Report, Trace)) and (x.source if isinstance(x, Report) else x.path):
        return x.source if isinstance(x, Report) else x.path
    return default


def _paths(*xs):
    return [os.fspath(x) for x in xs if _is_path(x)]


def _write(c, inputs, md=None, json=None, junit=None, html=None):
    c._native.write_outputs(*(os.fspath(p) if p else "" for p in (md, json, junit, html)), inputs)


def compare(base, new, *, skip="auto", md=None, json=None, html=None, **verdict):
    """Compares two runs (reports, traces, Report objects or report dicts) as ``tracegate compare``:
    metric deltas, kernel and phase diff, statistics, and the verdict the gate would give under the
    same options (threshold=5, require_significance, allow_device_mismatch, max_malformed_pct,
    kernel_threshold). Raises a tracegate.Error when an input cannot be read."""
    settings = _verdict_settings(**verdict)
    inputs = _paths(base, new)
    _native.check_comparison_outputs(*(os.fspath(p) if p else "" for p in (md, json, "", html)), inputs)
    _native.parse_skip(_skip(skip))
    b = _as_report(base, skip, "base")
    n = _as_report(new, skip, "new")
    c = Comparison(_native.compare_reports(b, n, settings, _label(base, "base"), _label(new, "new")))
    _write(c, inputs, md=md, json=json, html=html)
    return c


def gate(new, baseline, threshold=5, *, dir="baselines", skip="auto", junit=None, md=None, html=None, **verdict):
    """The CI gate, as ``tracegate gate NEW --baseline BASELINE``: returns the Comparison whose
    ``.exit_code`` is the CLI's (0 pass, 1 regression, 2 cannot judge). ``baseline``: a name in
    ``dir``, a report file, a Report or a report dict; ``new``: a report or trace path, a Report,
    a Trace or a dict. An input that cannot be read gives the verdict cannot_judge, as the CLI
    (no exception); a bad option raises. A baseline read from ``dir`` gets a "gated" row in
    <dir>/history.db."""
    settings = _verdict_settings(threshold=threshold, **verdict)
    inputs = _paths(new, baseline)
    _native.check_comparison_outputs(*(os.fspath(p) if p else "" for p in (md, "", junit, html)), inputs)
    _native.parse_skip(_skip(skip))
    base_label, new_label = _label(baseline, "baseline"), _label(new, "new")
    resolved = None
    try:
        if _is_path(baseline):
            b, resolved = _native.load_baseline(os.fspath(dir), os.fspath(baseline))
        else:
            b = _as_report(baseline, skip, "baseline")
        n = _as_report(new, skip, "new")
    except Error as e:
        c = Comparison(_native.cannot_read(str(e), settings, base_label, new_label))
    else:
        c = Comparison(_native.compare_reports(b, n, settings, base_label, new_label))
        if resolved:
            c.warning = _native.record_gate(os.fspath(dir), resolved, n, new_label, c._native)
    _write(c, inputs, md=md, junit=junit, html=html)
    return c


class Prediction(dict):
    """predict's result: the keys of ``tracegate predict --json`` (docs/PREDICTION.md: method,
    base_latency_ms, predicted_latency_ms, overall_speedup (the replay's when replayed, else
    Amdahl's), amdahl_speedup (None when Amdahl's law cannot express the change), amdahl_bound,
    assumptions, changes, iterations, ...), and parts [(P, S), ...] (Amdahl's), upper_bound (inf
    when unbounded), and, when P was measured on a trace, measurement {share, part_ns, total_ns,
    matched, matched_what, iterations, found, skipped, skip_auto}."""

    overall_speedup = property(lambda self: self["overall_speedup"])
    upper_bound = property(lambda self: self["upper_bound"])


def predict(trace=None, *, fraction=None, speedup=None, parts=(), kernels=None, range=None, launched_in=None,
            iteration=None, skip="auto", phases=None, method=None, kernel_class=None, host=None, launch_us=None,
            remove_syncs=None, graph=False, json=None, host_speedup=None, more_kernels=(), findings=(), rules=None,
            costs=None, ranks=()):
    """What a change gains, as ``tracegate predict``. With ``trace`` (a path or a Trace) and a
    change the replay can make, the trace is replayed under it (the default; Amdahl's figure
    beside it): ``kernels`` (regex), ``kernel_class`` ("gemm", "conv", ...) and/or
    ``launched_in`` (regex of the host ranges the kernels were launched in) with ``speedup``,
    ``host`` (regex of host ranges) with ``speedup``, ``launch_us``, ``remove_syncs`` (regex),
    ``graph`` (True, or a regex of host ranges), all replayed together. Amdahl's law alone
    (``method="amdahl"``, or ``fraction``, ``parts``, ``range``): P from ``fraction`` or
    measured on ``trace`` with exactly one of ``kernels``, ``range`` or ``launched_in``; more parts as ``parts=[(P, S), ...]`` (S may be
    float("inf")). ``json``: also write the prediction there, as ``--json``. ``host_speedup``:
    the host part's own speedup (default ``speedup``); ``more_kernels=[(regex, kernel_class, S),
    ...]``: further kernel selections with their own speedups (regex or class may be None), as
    ``--kernels R --speedup S`` repeated. ``findings=["memory_bound"]`` (or ``["all"]``): the
    trace analysed as ``analyze`` does (``rules``, ``costs``: its files) and those findings'
    claims replayed, as ``--finding``; no other change with it. A job: ``trace`` a directory of
    its ranks' traces or a list of them, replayed together, each collective waiting for its last
    rank (the result's ``job``); ``ranks``: the ranks the change is made on (default: all), as
    ``--rank``."""
    s = _native.PredictSettings()
    s.fraction = -1.0 if fraction is None else float(fraction)
    s.speedup = -1.0 if speedup is None else float(speedup)
    s.parts = [p if isinstance(p, str) else f"{float(p[0])!r}:{float(p[1])!r}" for p in parts]
    s.kernels_regex = kernels or ""
    s.range_regex = range or ""
    s.launched_regex = launched_in or ""
    s.iterations = _iteration_settings(iteration, skip, phases)
    s.method = method or ""
    s.kernel_class = kernel_class or ""
    s.host_regex = host or ""
    s.launch_us = -1.0 if launch_us is None else float(launch_us)
    s.remove_syncs_regex = remove_syncs or ""
    s.graph = bool(graph)
    s.graph_regex = graph if isinstance(graph, str) else ""
    s.json_out = os.fspath(json) if json is not None else ""
    s.host_speedup = -1.0 if host_speedup is None else float(host_speedup)
    more = []
    for regex, kernel_class_, factor in more_kernels:
        k = _native.KernelSelection()
        k.regex = regex or ""
        k.kernel_class = kernel_class_ or ""
        k.speedup = float(factor)
        more.append(k)
    s.more_kernels = more
    s.findings = [findings] if isinstance(findings, str) else list(findings)
    s.rules_path = os.fspath(rules) if rules is not None else ""
    s.costs_path = os.fspath(costs) if costs is not None else ""
    s.ranks = [int(r) for r in ranks]
    native_trace = None
    if isinstance(trace, Trace):
        native_trace = trace._native
        s.trace = trace.path or "(trace)"
    elif isinstance(trace, (list, tuple)):
        s.job = [os.fspath(t) for t in trace]
    elif trace is not None and os.path.isdir(os.fspath(trace)):
        s.job = [os.fspath(trace)]
    elif trace is not None:
        s.trace = os.fspath(trace)
    return Prediction(_native.predict(s, native_trace))
