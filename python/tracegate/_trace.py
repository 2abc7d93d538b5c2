"""Traces: tracegate.load and tracegate.load_ranks, and the Trace whose tables are DataFrames."""

import os

from . import _tracegate as _native
from ._errors import InvalidInputError

TABLES = ("kernels", "memcpys", "memsets", "syncs", "api_calls", "ranges", "samples")


def _pandas():
    import pandas  # imported on first use: load() and analyze() do not need it

    return pandas


def _frame(columns):
    """A DataFrame from the C++ columns: numpy arrays as they are (read-only views of the model's
    columns, no copy), (codes, categories) pairs as pandas Categoricals."""
    pd = _pandas()
    data = {}
    for name, col in columns.items():
        if isinstance(col, tuple):
            codes, categories = col
            data[name] = pd.Categorical.from_codes(codes, categories=categories)
        else:
            data[name] = col
    # copy=False: pandas keeps each array as its own block instead of copying them into one.
    return pd.DataFrame(data, copy=False)


class Trace:
    """A trace read into tracegate's columnar model (the one every importer fills and every analysis
    reads). Tables are pandas DataFrames, one column per model column (times in int64 nanoseconds,
    unknown ids -1, names as Categoricals), built on each access without copying the numeric
    columns: they are read-only views of the trace's memory (``df.copy()`` for a writable one)."""

    def __init__(self, native, path=None):
        self._native = native
        self.path = path
        self.rank = None          # set by load_ranks
        self.rank_source = None   # distributed_info, file_name or file_order

    def table(self, name):
        """The table ``name`` (one of TABLES) as a DataFrame."""
        return _frame(self._native.columns(name))

    def columns(self, name):
        """The table's columns as the C++ module gives them: name -> numpy array, or
        (codes, categories) for names and enums."""
        return self._native.columns(name)

    kernels = property(lambda self: self.table("kernels"), doc="kernels: one row per GPU kernel")
    memcpys = property(lambda self: self.table("memcpys"), doc="memory copies (kind: HtoD, DtoH, ...)")
    memsets = property(lambda self: self.table("memsets"), doc="memsets")
    syncs = property(lambda self: self.table("syncs"), doc="CUDA synchronisations (the host waiting)")
    api_calls = property(lambda self: self.table("api_calls"), doc="CUDA runtime and driver calls")
    ranges = property(lambda self: self.table("ranges"), doc="NVTX ranges, profiler annotations, CPU ops")
    samples = property(lambda self: self.table("samples"), doc="GPU telemetry (NVML) samples")

    @property
    def quality(self):
        """The data-quality counters (docs/RULES.md), one row per counter indexed by key: severity,
        count, description."""
        pd = _pandas()
        rows = self._native.quality
        return pd.DataFrame(rows, columns=["key", "severity", "count", "description"]).set_index("key")

    @property
    def quality_counts(self):
        """The non-zero data-quality counters: key -> count."""
        return {key: count for key, _, count, _ in self._native.quality if count}

    has_errors = property(lambda self: self._native.has_errors, doc="an error-level data-quality counter is set")
    metadata = property(lambda self: self._native.metadata, doc="the trace's metadata (source format, producer, ...)")
    counts = property(lambda self: self._native.counts, doc="rows per table")
    window = property(lambda self: self._native.window, doc="(first start, last end) in ns; (0, 0) when empty")

    @property
    def devices(self):
        return _pandas().DataFrame(self._native.devices, columns=[
            "id", "name", "sm_count", "memory_bytes", "peak_bandwidth_gbs", "compute_major", "compute_minor"])

    @property
    def processes(self):
        return _pandas().DataFrame(self._native.processes, columns=["pid", "name"])

    def to_store(self, path):
        """Writes the trace as a tracegate store (SQLite with Nsight Systems' table names), as
        ``tracegate convert`` does."""
        self._native.write_store(os.fspath(path))

    def __repr__(self):
        c = self._native.counts
        parts = ", ".join(f"{c[t]} {t}" for t in TABLES if c[t])
        return f"<tracegate.Trace {self.path or '(in memory)'}: {parts or 'empty'}>"


def load(path, *, threads=0):
    """Reads a trace: Kineto / Chrome-trace JSON (.json, .json.gz; also the legacy autograd
    profiler's), an Nsight Systems SQLite export, or a tracegate store. The format is found from
    the content. Raises a tracegate.Error with the CLI's message when the file cannot be read."""
    path = os.fspath(path)
    return Trace(_native.load(path, threads), path)


def _rank_of(trace, path):
    rank = trace.metadata.get("rank")  # the Kineto importer keeps distributedInfo.rank
    if rank is not None and rank.isdigit():
        return int(rank), "distributed_info"
    rank = _native.rank_from_file_name(path)
    if rank is not None:
        return rank, "file_name"
    return None, "file_order"


def load_ranks(paths):
    """The ranks of one job: a directory of traces (or a list of files and directories), as
    ``tracegate analyze DIR`` takes them. Returns {rank: Trace} in rank order. A rank comes from
    the trace's distributedInfo.rank, else its file name (rank-3, rank3, rank_3, worker3), else
    the lowest number left free, in file order (as the job report numbers them); two files of one
    rank are an error naming both."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    files = _native.list_job_files([os.fspath(p) for p in paths])
    loaded = [(f, load(f)) for f in files]
    by_rank, unnumbered = {}, []
    for f, t in loaded:
        t.rank, t.rank_source = _rank_of(t, f)
        if t.rank is None:
            unnumbered.append(t)
            continue
        if t.rank in by_rank:
            other = by_rank[t.rank]
            raise InvalidInputError(f"{other.path} and {f}: both are rank {t.rank} ({other.rank_source}, "
                                    f"{t.rank_source}); a job takes one trace per rank")
        by_rank[t.rank] = t
    free = 0
    for t in unnumbered:
        while free in by_rank:
            free += 1
        t.rank = free
        by_rank[free] = t
    return dict(sorted(by_rank.items()))
