"""The Python module's tests (docs/PYTHON.md), run by CTest (`python.pytest`, ci/test.sh) with
Debian's /usr/bin/python3 and the module built into <build>/python:

    PYTHONPATH=build/python TRACEGATE_BINARY=build/tracegate /usr/bin/python3 -m pytest -q tests/python

The CLI (TRACEGATE_BINARY, default build/tracegate) is what the module is checked against."""

import glob
import gzip
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "traces")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_workload


def cli_path():
    return os.environ.get("TRACEGATE_BINARY") or os.path.join(ROOT, "build", "tracegate")


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"no tracegate CLI at {path} (set TRACEGATE_BINARY)")

    def run(*args, check=None):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True, errors="replace")
        if check is not None and r.returncode != check:
            raise AssertionError(f"tracegate {' '.join(map(str, args))}: exit {r.returncode}, expected {check}\n"
                                 f"{r.stdout}\n{r.stderr}")
        return r

    return run


@pytest.fixture(scope="session")
def gunzipped(tmp_path_factory):
    """tests/fixtures/gpu/*.db.gz unpacked once (the H200 recordings)."""
    out = tmp_path_factory.mktemp("gpu")
    paths = []
    for gz in sorted(glob.glob(os.path.join(FIXTURES, "gpu", "*.db.gz"))):
        path = out / os.path.basename(gz)[:-3]
        with gzip.open(gz, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        paths.append(str(path))
    return paths


def real_traces():
    """Every real trace: ../shared/traces (when present), tests/fixtures/real, tests/fixtures/gpu (the
    JSON ones as they are; the .db.gz ones through the gunzipped fixture, by name)."""
    out = sorted(glob.glob(os.path.join(SHARED, "*.json.gz")) + glob.glob(os.path.join(SHARED, "*.sqlite")))
    out += sorted(glob.glob(os.path.join(FIXTURES, "real", "*.json.gz")))
    out += sorted(glob.glob(os.path.join(FIXTURES, "gpu", "*.json.gz")))
    out += ["gpu:" + os.path.basename(p)[:-3] for p in sorted(glob.glob(os.path.join(FIXTURES, "gpu", "*.db.gz")))]
    return out


def trace_id(path):
    return os.path.relpath(path, os.path.dirname(ROOT)) if not path.startswith("gpu:") else path


@pytest.fixture
def resolve(gunzipped):
    def r(name):
        if name.startswith("gpu:"):
            return next(p for p in gunzipped if os.path.basename(p) == name[4:])
        return name

    return r


def pytest_report_header(config):
    if not os.path.isdir(SHARED):
        return f"../shared/traces is absent: its traces are skipped ({SHARED})"
    return None
