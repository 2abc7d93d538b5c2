"""tracegate.load: every table of every real trace as a DataFrame equals the store's SQL (a store
written by `tracegate convert`, and the input itself when it is SQLite) and the CLI's JSON report
(counts, kernel statistics, copies by direction, devices and streams)."""

import json
import os
import sqlite3

import numpy as np
import pandas as pd
import pytest

import tracegate as tg
from conftest import real_traces, trace_id

TRACES = real_traces()

# Store encodings (analyzer/store/store_schema.h): deviceId / streamId / eventId 4294967295 for -1,
# nullable ids NULL for -1, globalPid / globalTid with the pid in bits 24-47 and the tid in bits
# 0-23 (0xFFFFFF unknown), tgPid / tgTid where they do not fit.
U32 = "CASE WHEN {0} = 4294967295 THEN -1 ELSE {0} END"
PID = ("COALESCE(tgPid, CASE WHEN {0} IS NULL OR (({0} >> 24) & 16777215) = 16777215 THEN -1 "
       "ELSE ({0} >> 24) & 16777215 END)")
TID = ("CASE WHEN tgPid IS NOT NULL THEN COALESCE(tgTid, -1) WHEN globalTid IS NULL OR (globalTid & 16777215) = "
       "16777215 THEN -1 ELSE globalTid & 16777215 END")


def name(col):
    return f"(SELECT value FROM StringIds WHERE id = {col})"


def gpu_common(store=True):
    cols = {"start": "start", "end": "end", "device": U32.format("deviceId"), "stream": U32.format("streamId"),
            "correlation": "COALESCE(correlationId, -1)"}
    if store:
        cols["pid"] = PID.format("globalPid")
    return cols


def kernel_sql(store=True):
    cols = gpu_common(store)
    cols["name"] = f"COALESCE({name('demangledName')}, {name('shortName')})"
    for c, s in [("grid_x", "gridX"), ("grid_y", "gridY"), ("grid_z", "gridZ"), ("block_x", "blockX"),
                 ("block_y", "blockY"), ("block_z", "blockZ"), ("registers", "registersPerThread"),
                 ("shared_static", "staticSharedMemory"), ("shared_dynamic", "dynamicSharedMemory")]:
        cols[c] = s
    if store:
        cols.update({"graph_id": "COALESCE(graphId, -1)", "graph_node_id": "COALESCE(graphNodeId, -1)",
                     "collective": f"COALESCE({name('tgCollective')}, '')",
                     "coll_dtype": f"COALESCE({name('tgCollDtype')}, '')",
                     "coll_in_nelems": "COALESCE(tgCollInNelems, -1)", "coll_out_nelems": "COALESCE(tgCollOutNelems, -1)",
                     "coll_group_size": "tgCollGroupSize", "coll_group": f"COALESCE({name('tgCollGroup')}, '')",
                     "coll_group_ranks": f"COALESCE({name('tgCollGroupRanks')}, '')", "coll_seq": "COALESCE(tgCollSeq, -1)"})
    return "CUPTI_ACTIVITY_KIND_KERNEL", cols, ""


def memcpy_sql(store=True):
    cols = gpu_common(store)
    cols.update({"bytes": "bytes", "kind": "copyKind", "src_kind": "srcKind", "dst_kind": "dstKind"})
    return "CUPTI_ACTIVITY_KIND_MEMCPY", cols, ""


def memset_sql(store=True):
    cols = gpu_common(store)
    cols.update({"bytes": "bytes", "value": "value", "mem_kind": "memKind"})
    return "CUPTI_ACTIVITY_KIND_MEMSET", cols, ""


def sync_sql(store=True):
    cols = gpu_common(store)
    cols.update({"kind": "syncType", "event_id": U32.format("eventId")})
    if store:
        cols.update({"wait_stream": "COALESCE(tgWaitStream, -1)",
                     "record_correlation": "COALESCE(tgRecordCorrelation, -1)"})
    return "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols, ""


def api_sql(store=True):
    cols = {"start": "start", "end": "end", "name": name("nameId"), "kind": "eventClass",
            "correlation": "COALESCE(correlationId, -1)", "return_value": "COALESCE(returnValue, 0)"}
    if store:
        cols.update({"pid": PID.format("globalTid"), "tid": TID})
    return "CUPTI_ACTIVITY_KIND_RUNTIME", cols, ""


def range_sql(table):
    cols = {"start": "start", "end": "COALESCE(\"end\", start)", "name": f"COALESCE(text, {name('textId')})",
            "domain": f"COALESCE({name('domainId')}, '')", "pid": PID.format("globalTid"), "tid": TID,
            "depth": "tgDepth", "stream": "COALESCE(tgStream, -1)"}
    return table, cols, "WHERE eventType != 75"


def sample_sql():
    cols = {"time": "time", "device": U32.format("deviceId")}
    for c, s in [("temperature_c", "temperatureC"), ("sm_clock_mhz", "smClockMHz"), ("mem_clock_mhz", "memClockMHz"),
                 ("memory_used_mb", "memoryUsedMB"), ("power_w", "powerW")]:
        cols[c] = s
    return "tracegate_samples", cols, ""


def query(db, spec):
    table, cols, where = spec
    exists = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
    if not exists:
        return pd.DataFrame({c: [] for c in cols})
    sql = f"SELECT {', '.join(f'{v} AS {k}' for k, v in cols.items())} FROM {table} {where} ORDER BY rowid"
    return pd.read_sql_query(sql, db)


def model_values(df, columns):
    """The DataFrame's columns as the store encodes them: Categorical names as text, the model's
    enums as their codes (CUPTI / nsys numbering), the API kind as eventClass."""
    out = {}
    for c in columns:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype) and c in ("kind", "src_kind", "dst_kind", "mem_kind"):
            out[c] = s.cat.codes.astype("int64").to_numpy()
        elif isinstance(s.dtype, pd.CategoricalDtype):
            out[c] = s.astype(object).to_numpy()
        else:
            out[c] = s.to_numpy()
    return out


def assert_same(df, sql, what):
    assert len(df) == len(sql), f"{what}: {len(df)} rows in the DataFrame, {len(sql)} in SQL"
    mine = model_values(df, sql.columns)
    for c in sql.columns:
        theirs = sql[c].to_numpy()
        if theirs.dtype.kind == "f" or mine[c].dtype.kind == "f":
            ok = np.array_equal(mine[c].astype(float), theirs.astype(float), equal_nan=True)
        else:
            ok = len(theirs) == 0 or (mine[c] == theirs).all()
        assert ok, f"{what}: column {c} differs"


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = tg.load(path)
        return cache[path]

    return get


@pytest.fixture(scope="module")
def cli_reports(tmp_path_factory):
    cache = {}
    out = tmp_path_factory.mktemp("reports")

    def get(cli, path):
        if path not in cache:
            report = out / f"{len(cache)}.json"
            cli("analyze", path, "-q", "-o", report, "--commit", "test", check=0)
            with open(report) as f:
                cache[path] = json.load(f)
        return cache[path]

    return get


@pytest.mark.parametrize("trace", TRACES, ids=trace_id)
def test_tables_equal_the_store_sql(trace, resolve, loaded, cli, tmp_path):
    path = resolve(trace)
    t = loaded(path)
    db_path = tmp_path / "store.db"
    cli("convert", path, "-o", db_path, check=0)
    with sqlite3.connect(db_path) as db:
        assert_same(t.kernels, query(db, kernel_sql()), "kernels")
        assert_same(t.memcpys, query(db, memcpy_sql()), "memcpys")
        assert_same(t.memsets, query(db, memset_sql()), "memsets")
        assert_same(t.syncs, query(db, sync_sql()), "syncs")
        assert_same(t.api_calls, query(db, api_sql()), "api_calls")
        ranges = t.ranges
        cpu, gpu = ranges[~ranges.on_gpu].reset_index(drop=True), ranges[ranges.on_gpu].reset_index(drop=True)
        assert_same(cpu, query(db, range_sql("NVTX_EVENTS")), "ranges (NVTX_EVENTS)")
        assert_same(gpu, query(db, range_sql("tracegate_gpu_ranges")), "ranges (tracegate_gpu_ranges)")
        assert_same(t.samples, query(db, sample_sql()), "samples")


SQLITE_INPUTS = [p for p in TRACES if p.startswith("gpu:") or p.endswith(".sqlite")]


@pytest.mark.parametrize("trace", SQLITE_INPUTS, ids=trace_id)
def test_tables_equal_the_input_sql(trace, resolve, loaded):
    """A SQLite input (a recording, an Nsight Systems export) read straight with sqlite3."""
    path = resolve(trace)
    t = loaded(path)
    assert sum(t.quality_counts.get(k, 0) for k in ("duplicate_event", "malformed_event", "missing_timestamp")) == 0
    store = trace.startswith("gpu:")  # tracegate's own columns (pid, graphs, collectives) only there
    with sqlite3.connect(path) as db:
        assert_same(t.kernels, query(db, kernel_sql(store)), "kernels")
        assert_same(t.memcpys, query(db, memcpy_sql(store)), "memcpys")
        assert_same(t.memsets, query(db, memset_sql(store)), "memsets")
        assert_same(t.api_calls, query(db, api_sql(store)), "api_calls")


@pytest.mark.parametrize("trace", TRACES, ids=trace_id)
def test_tables_agree_with_the_cli_report(trace, resolve, loaded, cli, cli_reports):
    path = resolve(trace)
    t = loaded(path)
    report = cli_reports(cli, path)
    counts = report["counts"]
    api = t.api_calls
    assert {k: counts[k] for k in ("kernels", "memcpys", "memsets", "syncs", "ranges", "samples")} == {
        k: len(t.table(k)) for k in ("kernels", "memcpys", "memsets", "syncs", "ranges", "samples")}
    assert counts["runtime_calls"] == int((api.kind == "runtime").sum())
    assert counts["driver_calls"] == int((api.kind == "driver").sum())
    assert (report["window"]["start_ns"], report["window"]["end_ns"]) == tuple(t.window)

    k = t.kernels
    dur = k.end - k.start
    assert report["kernels"]["total_ns"] == int(dur.sum())
    # top_kernels: per name, count, total, min, max and nearest-rank p50 / p95 of the durations.
    by_name = dur.groupby(k.name.astype(object), sort=False)
    stats = pd.DataFrame({"count": by_name.size(), "total_ns": by_name.sum(), "min_ns": by_name.min(),
                          "max_ns": by_name.max()})
    for row in report["top_kernels"]:
        candidates = stats[(stats["count"] == row["count"]) & (stats.total_ns == row["total_ns"])]
        assert len(candidates) >= 1, row["name"]
        got = candidates.iloc[0]
        assert (got.min_ns, got.max_ns) == (row["min_ns"], row["max_ns"])
        values = np.sort(dur[k.name.astype(object) == candidates.index[0]].to_numpy())
        for p in (50, 95):
            rank = max(1, int(np.ceil(p / 100 * len(values))))
            assert values[rank - 1] == row[f"p{p}_ns"], (row["name"], p)

    # Copies by direction: count, bytes, time.
    m = t.memcpys
    direction = {"htod": ["HtoD"], "dtoh": ["DtoH"], "dtod": ["DtoD"], "ptop": ["PtoP"]}
    for key, kinds in direction.items():
        sel = m[m.kind.isin(kinds)]
        got = report["copies"][key]
        assert (got["count"], got["bytes"], got["time_ns"]) == (len(sel), int(sel.bytes.sum()),
                                                                int((sel.end - sel.start).sum())), key
    # Devices and streams: the GPU work each holds.
    for d in report["devices"]:
        for table in ("kernels", "memcpys", "memsets"):
            df = t.table(table)
            assert d[table] == int((df.device == d["device"]).sum()), (d["device"], table)
    for s in report["streams"]:
        stream = -1 if s["stream"] is None else s["stream"]
        for table in ("kernels", "memcpys", "memsets"):
            df = t.table(table)
            assert s[table] == int(((df.device == s["device"]) & (df.stream == stream)).sum()), (s, table)
    # Data quality: the same counters.
    counters = {c["key"]: c["count"] for c in report["data_quality"]["counters"]}
    q = t.quality
    for key, count in q["count"].items():
        if key in ("device_backlog", "start_before_launch"):
            continue  # counted by the analysis, not the importer (docs/RULES.md, data-quality counters)
        assert counters.get(key) == count, key


def test_columns_are_zero_copy_views_of_the_model(loaded):
    t = loaded(os.path.join(os.path.dirname(__file__), "..", "fixtures", "real", "kineto_alexnet_train_step.json.gz"))
    cols = t.columns("kernels")
    start = cols["start"]
    assert start.dtype == np.int64 and not start.flags.writeable and not start.flags.owndata
    assert start.base is t._native  # the trace keeps the memory alive
    codes, categories = cols["name"]
    assert codes.dtype == np.int8 and len(set(categories)) == len(categories)
    k = t.kernels
    assert isinstance(k.name.dtype, pd.CategoricalDtype)
    assert np.shares_memory(k.start.to_numpy(), start)  # the DataFrame holds the view, not a copy
    with pytest.raises(ValueError):
        k.loc[0, "start"] = 0  # read-only: copy() for a writable frame
    k2 = k.copy()
    k2.loc[0, "start"] = 0
    assert k2.start[0] == 0
    del t, k, cols  # the arrays outlive the trace object and stay valid
    assert start[0] > 0


def test_load_ranks_numbers_ranks_as_the_job_does(tmp_path, cli):
    import shutil
    src = os.path.join(os.path.dirname(__file__), "..", "fixtures")
    shutil.copy(os.path.join(src, "gpu", "torch211_resnet50_eager_b1.json.gz"), tmp_path / "worker3.json.gz")
    shutil.copy(os.path.join(src, "real", "kineto_sampled_rank0.json.gz"), tmp_path / "a.json.gz")  # distributedInfo.rank 0
    shutil.copy(os.path.join(src, "gpu", "torch211_resnet50_compile_b1.json.gz"), tmp_path / "b.json.gz")  # no rank
    ranks = tg.load_ranks(tmp_path)
    assert list(ranks) == [0, 1, 3]
    assert [r.rank_source for r in ranks.values()] == ["distributed_info", "file_order", "file_name"]
    assert ranks[1].path.endswith("b.json.gz")
    job = tg.analyze(tmp_path, commit="test")
    assert job.is_job and [r["rank"] for r in job["ranks"]] == [0, 1, 3]
    cli("analyze", tmp_path, "-q", "-o", tmp_path / "job.report.json", "--commit", "test", check=0)
    with open(tmp_path / "job.report.json") as f:
        assert json.load(f) == job.dict
    shutil.copy(tmp_path / "a.json.gz", tmp_path / "rank0.json.gz")
    with pytest.raises(tg.InvalidInputError, match="both are rank 0"):
        tg.load_ranks(tmp_path)
