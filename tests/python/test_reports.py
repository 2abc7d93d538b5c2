"""tracegate.analyze / compare / gate / predict give what the CLI gives: the same report document
(schema-checked), the same files byte for byte, the same texts, verdicts and exit codes."""

import json
import os
import re
import subprocess
import sys

import jsonschema
import pytest

import tracegate as tg
from conftest import FIXTURES, ROOT, SHARED, real_traces, trace_id

sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import validate_report  # noqa: E402

TRACES = real_traces()
ALEXNET = os.path.join(FIXTURES, "real", "kineto_alexnet_train_step.json.gz")
RANK0 = os.path.join(FIXTURES, "real", "kineto_sampled_rank0.json.gz")


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft202012Validator(validate_report.load_schema())


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


@pytest.mark.parametrize("trace", TRACES, ids=trace_id)
def test_report_is_the_cli_report(trace, resolve, cli, tmp_path, validator):
    path = resolve(trace)
    opts = ["--commit", "test", "--batch", "4", "--model", "m"]
    cli("analyze", path, "-q", "-o", tmp_path / "cli.json", "--md", tmp_path / "cli.md", *opts, check=0)
    printed = cli("analyze", path, *opts, check=0).stdout
    report = tg.analyze(path, commit="test", batch=4, model="m", output=tmp_path / "py.json", md=tmp_path / "py.md")
    doc = report.dict
    assert doc == json.loads(read(tmp_path / "cli.json"))
    assert read(tmp_path / "py.json", "rb") == read(tmp_path / "cli.json", "rb")
    assert read(tmp_path / "py.md") == read(tmp_path / "cli.md") == report.markdown
    assert report.text == printed
    errors = [e.message[:200] for e in validator.iter_errors(doc)]
    assert not errors
    assert validate_report.main([str(tmp_path / "py.json")]) == 0  # tests/cli's schema check, as schema.sh runs it
    # The same analysis from a loaded trace.
    assert tg.analyze(tg.load(path), commit="test", batch=4, model="m").dict == doc

    findings = report.findings
    assert list(findings["id"]) == [f["id"] for f in doc["findings"]]
    for row, f in zip(findings.to_dict("records"), doc["findings"]):
        assert row["title"] == f["title"] and row["evidence"] == f["evidence"]
        assert row["amdahl.gain_pct"] == f["amdahl"]["gain_pct"]
    its = report.iterations
    assert len(its) == len(doc["iteration_table"]) == doc["iterations"]
    for row, it in zip(its.to_dict("records"), doc["iteration_table"]):
        assert row["latency_ms"] == it["latency_ms"] and row["name"] == it["name"]
        assert {k: row["phases_ms." + k] for k in it["phases_ms"]} == it["phases_ms"]
    if len(its):
        assert abs(its.latency_ms.mean() - doc["avg_latency_ms"]) < 1e-9 * max(1, doc["avg_latency_ms"])


def test_html_is_the_cli_html(cli, tmp_path):
    cli("analyze", RANK0, "-q", "--html", tmp_path / "cli.html", "--commit", "test", check=0)
    report = tg.analyze(RANK0, commit="test", html=tmp_path / "py.html")
    assert read(tmp_path / "py.html") == read(tmp_path / "cli.html") == report.html


def test_options_reach_the_analysis(cli, tmp_path):
    cli("analyze", RANK0, "-q", "-o", tmp_path / "cli.json", "--commit", "x", "--top", "3", "--gaps", "2",
        "--skip", "0", "--phase", "pre=^nothing$", "--iteration", "ProfilerStep", "--precision", "fp16", check=0)
    report = tg.analyze(RANK0, commit="x", top=3, gaps=2, skip=0, phases={"pre": "^nothing$"}, iteration="ProfilerStep",
                        precision="fp16")
    assert report.dict == json.loads(read(tmp_path / "cli.json"))
    assert len(report["top_kernels"]) == 3


def test_replay_findings_reaches_the_analysis(cli, tmp_path):
    cli("analyze", RANK0, "-q", "-o", tmp_path / "cli.json", "--commit", "x", "--replay-findings", "--critical-path",
        check=0)
    report = tg.analyze(RANK0, commit="x", replay_findings=True, critical_path=True)
    assert report.dict == json.loads(read(tmp_path / "cli.json"))
    assert [f["id"] for f in report["findings"] if f["replay"]] == ["communication"]
    assert "replay" not in tg.analyze(RANK0, commit="x")["combined_estimate"]


def test_capture_reaches_the_analysis(cli, tmp_path):
    replay = os.path.join(SHARED, "kineto_vllm_decode_graph_replay_mi300.json.gz")
    capture = os.path.join(SHARED, "kineto_vllm_decode_graph_capture_mi300.json.gz")
    if not os.path.exists(replay):
        pytest.skip("../shared/traces is absent")
    cli("analyze", replay, "--capture", capture, "-q", "-o", tmp_path / "cli.json", "--commit", "x", check=0)
    report = tg.analyze(replay, capture=capture, commit="x")
    assert report.dict == json.loads(read(tmp_path / "cli.json"))
    assert report["serving"]["graph_replay"]["capture"]["kernels_mapped"] == 421


def report_file(tmp_path, name, **changes):
    doc = tg.analyze(RANK0, commit="test").dict
    doc.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path, doc


def test_compare_is_the_cli_compare(cli, tmp_path):
    base = os.path.join(os.path.dirname(ROOT), "shared", "traces", "kineto_compare_base.json.gz")
    new = os.path.join(os.path.dirname(ROOT), "shared", "traces", "kineto_compare_test.json.gz")
    if not os.path.exists(base):
        base, new = ALEXNET, RANK0
    r = cli("compare", base, new, "--json", tmp_path / "cli.json", "--md", tmp_path / "cli.md",
            "--allow-device-mismatch", check=0)
    c = tg.compare(base, new, json=tmp_path / "py.json", md=tmp_path / "py.md", allow_device_mismatch=True)
    assert str(c) == r.stdout
    assert c.dict == json.loads(read(tmp_path / "cli.json"))
    assert read(tmp_path / "py.md") == read(tmp_path / "cli.md") == c.markdown
    assert c.text == r.stdout.splitlines()[0]
    # Reports, Report objects and dicts compare as the files do.
    a, b = tg.analyze(base), tg.analyze(new)
    assert tg.compare(a, b.dict, allow_device_mismatch=True).verdict == c.verdict


@pytest.mark.parametrize("case", ["pass", "regression", "cannot_judge_missing", "cannot_judge_quality"])
def test_gate_exit_code_is_the_cli_exit_code(case, cli, tmp_path):
    new = tmp_path / "new.json"
    cli("analyze", RANK0, "-q", "-o", new, "--commit", "test", check=0)
    doc = json.loads(read(new))
    if case == "pass":
        baseline, _ = report_file(tmp_path, "base.json")
    elif case == "regression":
        baseline, _ = report_file(tmp_path, "base.json", avg_latency_ms=doc["avg_latency_ms"] / 2,
                                  latency_samples_ms=[x / 2 for x in doc["latency_samples_ms"]])
    elif case == "cannot_judge_missing":
        baseline = tmp_path / "missing.json"
    else:  # an error-level data-quality counter: the recording was cut short
        quality = doc["data_quality"]
        counters = [dict(c, count=1) if c["key"] == "trace_incomplete" else c for c in quality["counters"]]
        baseline, _ = report_file(tmp_path, "base.json", data_quality=dict(quality, has_errors=True, counters=counters))
    expected = {"pass": 0, "regression": 1}.get(case, 2)
    r = cli("gate", new, "--baseline", baseline, "--junit", tmp_path / "cli.xml", "--md", tmp_path / "cli.md",
            check=expected)
    v = tg.gate(str(new), str(baseline), threshold=5, junit=tmp_path / "py.xml", md=tmp_path / "py.md")
    assert v.exit_code == expected
    assert v.verdict == {0: "pass", 1: "regression", 2: "cannot_judge"}[expected]
    assert str(v) == r.stdout
    assert read(tmp_path / "py.xml") == read(tmp_path / "cli.xml")
    assert read(tmp_path / "py.md") == read(tmp_path / "cli.md")
    if case != "cannot_judge_missing":  # in memory: the same verdict
        assert tg.gate(tg.analyze(RANK0, commit="test"), json.loads(read(baseline))).exit_code == expected


def test_gate_by_name_records_the_history(cli, tmp_path):
    base_dir = tmp_path / "baselines"
    cli("baseline", "save", RANK0, "--name", "rank0", "--dir", base_dir, check=0)
    v = tg.gate(RANK0, "rank0", dir=base_dir)
    assert v.exit_code == 0 and v.warning is None
    history = cli("baseline", "history", "rank0", "--dir", base_dir, check=0).stdout
    assert "gated" in history and "pass" in history


def test_predict_is_the_cli_predict(cli, tmp_path):
    r = cli("predict", "--fraction", "0.1", "--speedup", "1.146", "--part", "0.05:inf", check=0)
    p = tg.predict(fraction=0.1, speedup=1.146, parts=[(0.05, float("inf"))])
    assert f"overall speedup: {p.overall_speedup:.3f}" in r.stdout
    assert f"upper bound (every S -> infinity): {p.upper_bound:.3f}" in r.stdout
    r = cli("predict", RANK0, "--kernels", "cutlass", "--speedup", "1.146", "--method", "amdahl", check=0)
    p = tg.predict(RANK0, kernels="cutlass", speedup=1.146, method="amdahl")
    m = p["measurement"]
    assert f"measured: {m['matched']} kernels take {m['part_ns'] / 1e6:.3f} ms of {m['total_ns'] / 1e6:.3f} ms" in r.stdout
    assert re.search(rf"P = {m['share']:.4f}", r.stdout)
    assert tg.predict(tg.load(RANK0), kernels="cutlass", speedup=1.146, method="amdahl") == p
    # The replay, the default with a trace: the same dict as --json writes, Amdahl's figure beside it.
    out = os.path.join(str(tmp_path), "p.json")
    r = cli("predict", RANK0, "--class", "gemm", "--speedup", "1.2", "--launch-us", "2", "--graph", "--json", out, check=0)
    p = tg.predict(RANK0, kernel_class="gemm", speedup=1.2, launch_us=2, graph=True)
    with open(out, encoding="utf-8") as f:
        written = json.load(f)
    assert {k: p[k] for k in written} == written
    assert p["method"] == "replay" and p["amdahl_speedup"] is None
    assert f"speedup {p.overall_speedup:.4f}" in r.stdout
    # Further selections with their own speedups, as --speedup repeated.
    out2 = os.path.join(str(tmp_path), "p2.json")
    cli("predict", RANK0, "--class", "gemm", "--speedup", "1.2", "--class", "elementwise", "--speedup", "2",
        "--json", out2, check=0)
    p = tg.predict(RANK0, kernel_class="gemm", speedup=1.2, more_kernels=[(None, "elementwise", 2)])
    with open(out2, encoding="utf-8") as f:
        written = json.load(f)
    assert {k: p[k] for k in written} == written
    assert p["changes"]["more_kernels"][0]["class"] == "elementwise" and len(p["parts"]) == 2
    p = tg.predict(tg.load(RANK0), kernels="cutlass", speedup=1.146)
    assert p["method"] == "replay" and p["amdahl_speedup"] == pytest.approx(1.0057059364246974)
    # A finding's claim replayed, as --finding.
    out3 = os.path.join(str(tmp_path), "p3.json")
    cli("predict", RANK0, "--finding", "all", "--json", out3, check=0)
    p = tg.predict(RANK0, findings="all")
    with open(out3, encoding="utf-8") as f:
        written = json.load(f)
    assert {k: p[k] for k in written} == written
    assert p["changes"]["findings"]["replayed"] == ["communication", "idle_gaps"]
    assert p["changes"]["findings"]["left_out"] == [] and p["caution"].startswith("1 of 2 iterations")
    # A job's ranks replayed together (a directory, or a list of files), as predict DIR [--rank].
    job = os.path.join(str(tmp_path), "job")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "gen", "gen_job_replay.py"), job], check=True)
    out4 = os.path.join(str(tmp_path), "p4.json")
    cli("predict", job, "--kernels", "gemm_compute", "--speedup", "1.15", "--rank", "2", "--skip", "0",
        "--json", out4, check=0)
    p = tg.predict(job, kernels="gemm_compute", speedup=1.15, ranks=[2], skip=0)
    with open(out4, encoding="utf-8") as f:
        written = json.load(f)
    assert {k: p[k] for k in written} == written
    assert p["job"]["changed_ranks"] == [2] and p["trace"] is None
    files = sorted(os.path.join(job, f) for f in os.listdir(job))
    assert tg.predict(files, kernels="gemm_compute", speedup=1.15, ranks=[2], skip=0)["job"] == p["job"]
    for args, kwargs in [(["--speedup", "2"], {"speedup": 2}),
                         ([RANK0, "--speedup", "2"], {"trace": RANK0, "speedup": 2}),
                         (["--part", "0.7:2", "--part", "0.5:2"], {"parts": ["0.7:2", "0.5:2"]})]:
        line = cli("predict", *args, check=2).stderr.strip()
        with pytest.raises(tg.InvalidInputError) as e:
            tg.predict(**kwargs)
        assert line == "tracegate: error: " + str(e.value)
