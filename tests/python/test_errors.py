"""Errors: what the CLI rejects (exit 2, one line) raises a tracegate.Error carrying the same line,
of the class its kind calls for, and nothing crashes: the bad inputs of tests/cli/project/bad_input.sh,
the fuzz regressions (tests/fixtures/fuzz), and seeded mutations of the fixtures (the fuzz
targets' seeds), each through tracegate.load / analyze and the CLI."""

import glob
import gzip
import os
import json
import random
import sqlite3

import pytest

import tracegate as tg
from conftest import FIXTURES

PREFIX = "tracegate: error: "


def bad_inputs(d):
    def mk(name, data):
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    paths = [mk("empty.json", ""), mk("spaces.json", "   \n\t  "),
             mk("truncated.json", '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur'),
             mk("no_events.json", '{"schemaVersion": 1, "traceName": "x"}'), mk("empty_array.json", "[]"),
             mk("number.json", "42"), mk("text.txt", "hello, this is not a trace\n"),
             mk("not_array.json", '{"traceEvents": {"ph": "X"}}'),
             mk("truncated.json.gz", gzip.compress(b'{"traceEvents": [{"ph":"X","cat":"kernel","name":"k",'
                                                   b'"pid":0,"tid":7,"ts":1,"dur":2}]}')[:40]),
             mk("deep.json", "[" * 100000 + "]" * 100000), mk("deep_truncated.json", '{"traceEvents": ' + "[" * 100000),
             mk("bad_utf8_name.json", b'[{"ph":"X","cat":"kernel","name":"k\xff","ts":1,"dur":2}]'),
             mk("only_flows.json", '[{"ph":"s","cat":"ac2g","id":1,"ts":1,"pid":1,"tid":1}]')]
    other = os.path.join(d, "other.sqlite")
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users(id INTEGER, name TEXT)")
    future = os.path.join(d, "future.db")
    with sqlite3.connect(future) as db:
        db.execute("CREATE TABLE tracegate_schema(version INTEGER)")
        db.execute("INSERT INTO tracegate_schema VALUES (999)")
    with open(other, "rb") as f:
        paths.append(mk("truncated.sqlite", f.read()[:2048]))
    os.mkdir(os.path.join(d, "a_directory"))
    return paths + [other, future, os.path.join(d, "a_directory"), os.path.join(d, "missing.json")]


def same_answer(r, call, path):
    """`call` raises a tracegate.Error with the CLI's line where the CLI (run as r) exits 2, and
    returns where it exits 0."""
    assert r.returncode in (0, 2), f"{path}: the CLI exited {r.returncode}: {r.stderr[-500:]}"
    try:
        result = call()
    except tg.Error as e:
        assert r.returncode == 2, f"{path}: Python raised {e!r}; the CLI accepted it"
        assert r.stderr.splitlines() == [PREFIX + str(e)], f"{path}: {r.stderr} vs {e}"
        return e, None
    assert r.returncode == 0, f"{path}: Python accepted it; the CLI said {r.stderr}"
    return None, result


def check_like_cli(cli, path, out_dir):
    """tracegate.load as `tracegate convert` (the import), tracegate.analyze as `tracegate analyze`:
    both accept, or both reject with the same line. Returns analyze's error, or None."""
    db, report_path = os.path.join(out_dir, "cli.db"), os.path.join(out_dir, "cli.json")
    load_error, trace = same_answer(cli("convert", path, "-o", db), lambda: tg.load(path), path)
    error, report = same_answer(cli("analyze", path, "-q", "-o", report_path, "--commit", "x"),
                                lambda: tg.analyze(path, commit="x"), path)
    if trace is not None:
        _ = (trace.kernels, trace.api_calls, trace.ranges, trace.samples, trace.quality)
        assert error is None or "--skip" in str(error)
    if report is not None:
        with open(report_path) as f:
            assert report.dict == json.load(f)
        _ = (report.findings, report.iterations, report.text)
    return error


def test_bad_inputs_raise_the_cli_message(cli, tmp_path):
    inputs = bad_inputs(str(tmp_path))
    kinds = {}
    for path in inputs:
        e = check_like_cli(cli, path, str(tmp_path))
        if os.path.basename(path) in ("bad_utf8_name.json",):
            assert e is None  # repaired and counted, as the CLI does
            continue
        assert e is not None, path
        assert str(e).startswith(path + ": "), str(e)
        kinds[os.path.basename(path)] = type(e)
    assert issubclass(kinds["missing.json"], tg.NotFoundError)
    assert issubclass(kinds["missing.json"], FileNotFoundError)
    assert issubclass(kinds["truncated.json"], ValueError)
    assert issubclass(kinds["future.db"], tg.UnsupportedError)
    # analyze(path) raises as load does.
    with pytest.raises(tg.NotFoundError) as e:
        tg.analyze(os.path.join(str(tmp_path), "missing.json"))
    assert str(e.value).startswith(os.path.join(str(tmp_path), "missing.json"))


def test_bad_options_raise_the_cli_message(cli):
    trace = os.path.join(FIXTURES, "real", "kineto_alexnet_train_step.json.gz")
    cases = [(["--skip", "many"], {"skip": "many"}), (["--phase", "middle=x"], {"phases": ["middle=x"]}),
             (["--iteration", "("], {"iteration": "("}), (["--skip", "50"], {"skip": 50}),
             (["--rules", "/nonexistent/rules.json"], {"rules": "/nonexistent/rules.json"})]
    for args, kwargs in cases:
        r = cli("analyze", trace, "-q", *args, check=2)
        with pytest.raises(tg.Error) as e:
            tg.analyze(trace, **kwargs)
        assert r.stderr.splitlines() == [PREFIX + str(e.value)], (args, str(e.value))
    out = os.path.abspath(trace)
    with pytest.raises(tg.InvalidInputError, match="output would overwrite the input trace"):
        tg.analyze(trace, output=out)


def seeds():
    files = sorted(glob.glob(os.path.join(FIXTURES, "fuzz", "*", "*")))
    files += sorted(glob.glob(os.path.join(FIXTURES, "kineto", "*.json")))
    files += [os.path.join(FIXTURES, "real", "kineto_alexnet_train_step.json.gz")]
    return files


def test_fuzz_corpus_through_python(cli, tmp_path):
    """The fuzz regressions and seeds as they are, then seeded mutations of the seeds (truncations,
    flipped, inserted and deleted bytes): never a crash, always the CLI's answer."""
    corpus = seeds()
    extra = os.environ.get("TRACEGATE_FUZZ_CORPUS")  # e.g. build-asan/fuzz/corpus/trace after ci/fuzz.sh
    if extra:
        corpus += sorted(glob.glob(os.path.join(extra, "*")))[:500]
    rng = random.Random(21)
    mutated = []
    for i in range(150):
        with open(rng.choice(corpus[:-1]), "rb") as f:
            data = bytearray(f.read())
        for _ in range(rng.randint(1, 4)):
            op = rng.randrange(4)
            at = rng.randrange(len(data) + 1) if data else 0
            if op == 0:
                data = data[:at]
            elif op == 1 and data:
                data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
            elif op == 2:
                data[at:at] = bytes(rng.choice(b'{}[]",:0123456789-.eE \\"\xff') for _ in range(rng.randint(1, 8)))
            elif data:
                del data[at:at + rng.randint(1, 16)]
        path = os.path.join(str(tmp_path), f"mutant{i:03d}.json")
        with open(path, "wb") as f:
            f.write(data)
        mutated.append(path)
    rejected = 0
    for path in corpus + mutated:
        rejected += check_like_cli(cli, path, str(tmp_path)) is not None
    assert rejected > 0

