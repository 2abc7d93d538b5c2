"""tracegate.torch.on_trace_ready driven by a real torch.profiler run on the CPU with a schedule
(Debian's python3-torch 1.13, built without Kineto: its traces are the legacy format), and the
legacy format itself: written by that torch, read as a CPU-only trace whose iterations are the
profiler's steps."""

import json
import os

import pytest

import tracegate as tg
import torch_workload

torch = pytest.importorskip("torch")


def test_debian_torch_writes_the_legacy_format_and_tracegate_reads_it(tmp_path, cli):
    path = tmp_path / "legacy.json"
    written = []

    def export(prof):
        prof.export_chrome_trace(str(path))
        written.append(prof.step_num)

    torch_workload.run(export, steps=6, repeat=1)
    assert written == [5]
    with open(path) as f:
        events = json.load(f)
    if not isinstance(events, list):
        pytest.skip(f"this torch ({torch.__version__}) writes Kineto's format, not the legacy one")
    assert all(e["ph"] in ("X", "s") and "cat" not in e and e["pid"] == "CPU functions" for e in events
               if e["ph"] == "X")
    steps = [e["name"] for e in events if e["name"].startswith("ProfilerStep#")]
    assert len(steps) == 3  # wait 1, warmup 1, active 3 (1.13 numbers them #1-#3 in the cycle)

    t = tg.load(path)
    assert t.counts["ranges"] == len(events) and t.counts["kernels"] == 0
    assert t.quality_counts.get("unknown_category_skipped", 0) == 0
    report = tg.analyze(t, commit="x")
    d = report.dict
    assert d["iterations"] == 3 and d["iteration_source"]["from_markers"]
    assert [r["name"] for r in d["iteration_table"]] == steps
    assert d["idle_ratio"] is None and "no device activity" in d["no_device_activity"]
    assert d["avg_latency_ms"] > 0
    r = cli("analyze", path, "-q", "-o", tmp_path / "cli.json", "--commit", "x", check=0)
    with open(tmp_path / "cli.json") as f:
        assert json.load(f) == d


def test_handler_writes_analyzes_and_gates_each_cycle(tmp_path, cli):
    import tracegate.torch as tgt

    # The baseline: two cycles (repeat=2) of 4 active steps, each step sleeping 2 ms.
    base = tgt.on_trace_ready(tmp_path / "base", batch=8)
    torch_workload.run(base, steps=14, wait=1, warmup=1, active=4, repeat=2, sleep_s=0.002)
    assert len(base.traces) == len(base.results) == 2 and base.verdicts == []
    for trace, report in zip(base.traces, base.results):
        stem = trace[: -len(".pt.trace.json")]
        for suffix in (".report.json", ".report.md", ".report.html"):
            assert os.path.getsize(stem + suffix) > 0
        assert report["iterations"] == 4 and report["batch"] == 8
        with open(stem + ".report.json") as f:
            assert json.load(f) == report.dict
    baseline = base.results[0]

    # Same workload against it, a generous threshold: every cycle passes.
    same = tgt.on_trace_ready(tmp_path / "same", baseline=baseline, threshold=100, batch=8)
    torch_workload.run(same, steps=14, wait=1, warmup=1, active=4, repeat=2, sleep_s=0.002)
    assert [v.exit_code for v in same.verdicts] == [0, 0]
    assert all(os.path.exists(t[: -len(".pt.trace.json")] + ".gate.xml") for t in same.traces)

    # 10x slower steps: the first cycle's gate fails and raises out of the profiler's step().
    slow = tgt.on_trace_ready(tmp_path / "slow", baseline=baseline, threshold=100, batch=8)
    with pytest.raises(tg.GateFailed) as e:
        torch_workload.run(slow, steps=14, wait=1, warmup=1, active=4, repeat=2, sleep_s=0.02)
    verdict = e.value.verdict
    assert verdict.exit_code == 1 and verdict.verdict == "regression"
    assert str(e.value).startswith("REGRESSION")
    assert len(slow.traces) == 1
    # The CLI's gate on the files the handler wrote says the same.
    baseline_file = base.traces[0][: -len(".pt.trace.json")] + ".report.json"
    new_file = slow.traces[0][: -len(".pt.trace.json")] + ".report.json"
    r = cli("gate", new_file, "--baseline", baseline_file, "--threshold", "100", check=1)
    assert r.stdout.startswith("REGRESSION: avg_latency_ms")
    assert str(tg.gate(new_file, baseline_file, threshold=100)) == r.stdout

    # fail=False: the verdicts are returned and kept, nothing is raised.
    keep = tgt.on_trace_ready(tmp_path / "keep", baseline=baseline_file, threshold=100, fail=False, batch=8)
    torch_workload.run(keep, steps=14, wait=1, warmup=1, active=4, repeat=2, sleep_s=0.02)
    assert [v.exit_code for v in keep.verdicts] == [1, 1]
    assert keep.last is keep.verdicts[-1]
