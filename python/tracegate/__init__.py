"""tracegate from Python: the same engine as the ``tracegate`` command (docs/PYTHON.md).

    import tracegate
    trace = tracegate.load("run.pt.trace.json")      # Kineto JSON, nsys SQLite, tracegate .db
    trace.kernels                                    # a pandas DataFrame, one row per kernel
    report = tracegate.analyze(trace, batch=32)      # what `tracegate analyze` computes
    report.dict, report.findings, report.iterations  # the report document, and DataFrames of it
    verdict = tracegate.gate(report, "baseline.json", threshold=5)
    verdict.exit_code                                # 0 pass, 1 regression, 2 cannot judge

For torch.profiler: ``tracegate.torch.on_trace_ready(out_dir, baseline=..., threshold=5)``.
"""

from . import _tracegate
from ._errors import (Error, GateFailed, InternalError, InvalidInputError, NotFoundError, TraceIOError,
                      UnsupportedError)
from ._report import Comparison, Prediction, Report, analyze, compare, gate, predict
from ._trace import TABLES, Trace, load, load_ranks

__version__ = _tracegate.__version__

__all__ = ["Comparison", "Error", "GateFailed", "InternalError", "InvalidInputError", "NotFoundError", "Prediction",
           "Report", "TABLES", "Trace", "TraceIOError", "UnsupportedError", "analyze", "compare", "gate", "load",
           "load_ranks", "predict"]


def __getattr__(name):
    # tracegate.torch imports torch (seconds): only when it is asked for.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'tracegate' has no attribute {name!r}")
