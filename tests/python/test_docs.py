"""docs/PYTHON.md's walk-through runs as written: its ```python blocks, in order, in one namespace,
from a directory laid out as the checkout (tests/, a copy of baselines/, ../shared/traces)."""

import os
import re
import shutil

import pytest

from conftest import ROOT, SHARED

DOC = os.path.join(ROOT, "docs", "PYTHON.md")


def test_walkthrough_runs(tmp_path, monkeypatch):
    if not os.path.isdir(SHARED):
        pytest.skip(f"the walk-through reads ../shared/traces, absent here ({SHARED})")
    pytest.importorskip("torch")
    with open(DOC) as f:
        text = f.read()
    walk = text[text.index("## Walk-through"):]
    walk = walk[:walk.index("\n## ", 1)] if "\n## " in walk[1:] else walk
    blocks = re.findall(r"```python\n(.*?)```", walk, re.S)
    assert len(blocks) > 10
    work = tmp_path / "checkout"
    work.mkdir()
    os.symlink(os.path.join(ROOT, "tests"), work / "tests")
    shutil.copytree(os.path.join(ROOT, "baselines"), work / "baselines", ignore=shutil.ignore_patterns("history.db"))
    os.symlink(os.path.dirname(SHARED), tmp_path / "shared")
    monkeypatch.chdir(work)
    ns = {}
    for block in blocks:
        exec(compile(block, DOC, "exec"), ns)
    assert os.path.exists(work / "out" / "rank0.html")
