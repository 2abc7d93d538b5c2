"""tracegate for torch.profiler: a handler that writes each profiled cycle's trace, analyzes it
in-process, writes the reports and, with a baseline, gates it.

    import torch, tracegate.torch
    handler = tracegate.torch.on_trace_ready("prof", baseline="baselines/resnet50.json", threshold=5)
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=5, repeat=2),
                                on_trace_ready=handler) as prof:
        for batch in loader:
            model(batch)
            prof.step()
    handler.verdicts   # one Comparison per cycle; a failing one raised tracegate.GateFailed

Works with Kineto builds of PyTorch (GPU activity included) and with builds without Kineto, such
as Debian's torch 1.13, whose export_chrome_trace writes the legacy format (a CPU-only trace).
"""

import os

from ._errors import GateFailed
from ._report import Report, analyze, gate


class TraceHandler:
    """Callable given to ``torch.profiler.profile(on_trace_ready=...)``: called once per active
    cycle of the profiler's schedule (with ``repeat=N``, N times)."""

    def __init__(self, out_dir, baseline=None, threshold=5, fail=True, *, prefix="", reports=("json", "md", "html"),
                 gzip=False, baseline_dir="baselines", **options):
        self.out_dir = os.fspath(out_dir)
        self.baseline = baseline
        self.threshold = threshold
        self.fail = fail
        self.prefix = prefix
        self.reports = tuple(reports)
        self.gzip = gzip
        self.baseline_dir = baseline_dir
        self.options = options     # analyze()'s options (batch, skip, iteration, phases, model, ...)
        self.traces = []           # the trace file of each cycle
        self.results = []          # the Report of each cycle
        self.verdicts = []         # with a baseline: the Comparison of each cycle

    def __call__(self, prof):
        os.makedirs(self.out_dir, exist_ok=True)
        stem = os.path.join(self.out_dir, f"{self.prefix}step{prof.step_num}")
        path = stem + (".pt.trace.json.gz" if self.gzip else ".pt.trace.json")
        # The profiler writes the file itself; written beside and renamed, a reader never sees half.
        tmp = stem + ".tmp" + (".json.gz" if self.gzip else ".json")
        prof.export_chrome_trace(tmp)
        os.replace(tmp, path)
        self.traces.append(path)
        report = analyze(path, **self.options)
        self.results.append(report)
        outputs = {"json": (report.write_json, ".report.json"), "md": (report.write_markdown, ".report.md"),
                   "html": (report.write_html, ".report.html")}
        for kind in self.reports:
            write, suffix = outputs[kind]
            write(stem + suffix)
        if self.baseline is None:
            return report
        verdict = gate(report, self.baseline, self.threshold, dir=self.baseline_dir, md=stem + ".gate.md",
                       junit=stem + ".gate.xml")
        self.verdicts.append(verdict)
        if self.fail and verdict.exit_code != 0:
            raise GateFailed(verdict)
        return verdict

    @property
    def last(self):
        """The last cycle's Comparison (with a baseline) or Report."""
        return (self.verdicts or self.results or [None])[-1]


def on_trace_ready(out_dir, baseline=None, threshold=5, fail=True, **options):
    """A handler for ``torch.profiler.profile(on_trace_ready=...)``. Each cycle it writes
    ``<out_dir>/<prefix>step<N>.pt.trace.json`` (N: the profiler's step number; gzip=True for
    .json.gz), analyzes it in this process with ``options`` (analyze()'s: batch, skip, iteration,
    phases, model, ...), writes ``.report.json`` / ``.report.md`` / ``.report.html`` beside it
    (``reports=``), and, with a ``baseline`` (a Report, a report dict, a report file, or a name in
    ``baseline_dir``), gates it at ``threshold`` percent, writing ``.gate.md`` and ``.gate.xml``
    (JUnit). A verdict other than pass raises tracegate.GateFailed (with ``.verdict``) when
    ``fail``; else the handler returns it. The handler keeps every cycle's trace path, Report and
    verdict (``.traces``, ``.results``, ``.verdicts``)."""
    return TraceHandler(out_dir, baseline, threshold, fail, **options)


__all__ = ["GateFailed", "Report", "TraceHandler", "on_trace_ready"]
