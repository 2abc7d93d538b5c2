// The trace store: write -> read keeps every row and value; nsys-style SQL runs on it; bad stores
// and failed writes are reported and leave no half-written file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analyzer/store/store_columns.h"
#include "sqlite_test_util.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace tg {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tg_store_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  size_t FilesInDir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  fs::path dir_;
};

using testing::ExecSql;

// Rows of a two-column query as text -> integer.
std::map<std::string, int64_t> SqlPairs(const std::string& path, const std::string& query) {
  std::map<std::string, int64_t> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  while (sqlite3_step(st) == SQLITE_ROW)
    out[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// The details of EXPLAIN QUERY PLAN for `query`, one step per line.
std::string QueryPlan(const std::string& path, const std::string& query) {
  std::string out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const std::string explain = "EXPLAIN QUERY PLAN " + query;
  EXPECT_EQ(sqlite3_prepare_v2(db, explain.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  while (sqlite3_step(st) == SQLITE_ROW)
    out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "\n";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Names(const Trace& t, const std::vector<StringId>& ids) {
  std::vector<std::string> out;
  for (StringId id : ids) out.emplace_back(t.Name(id));
  return out;
}

// NaN (not sampled) equals NaN here.
void ExpectSameDoubles(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) EXPECT_TRUE(std::isnan(b[i])) << i;
    else EXPECT_EQ(a[i], b[i]) << i;
  }
}

// Every column of every event table, with names compared as strings (ids differ between traces).
void ExpectSameEvents(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.kernels.start, b.kernels.start);
  EXPECT_EQ(a.kernels.end, b.kernels.end);
  EXPECT_EQ(Names(a, a.kernels.name), Names(b, b.kernels.name));
  EXPECT_EQ(a.kernels.device, b.kernels.device);
  EXPECT_EQ(a.kernels.stream, b.kernels.stream);
  EXPECT_EQ(a.kernels.correlation, b.kernels.correlation);
  EXPECT_EQ(a.kernels.grid_x, b.kernels.grid_x);
  EXPECT_EQ(a.kernels.grid_y, b.kernels.grid_y);
  EXPECT_EQ(a.kernels.grid_z, b.kernels.grid_z);
  EXPECT_EQ(a.kernels.block_x, b.kernels.block_x);
  EXPECT_EQ(a.kernels.block_y, b.kernels.block_y);
  EXPECT_EQ(a.kernels.block_z, b.kernels.block_z);
  EXPECT_EQ(a.kernels.registers, b.kernels.registers);
  EXPECT_EQ(a.kernels.shared_static, b.kernels.shared_static);
  EXPECT_EQ(a.kernels.shared_dynamic, b.kernels.shared_dynamic);
  EXPECT_EQ(a.kernels.pid, b.kernels.pid);
  EXPECT_EQ(a.kernels.graph_id, b.kernels.graph_id);
  EXPECT_EQ(a.kernels.graph_node_id, b.kernels.graph_node_id);

  EXPECT_EQ(a.memcpys.start, b.memcpys.start);
  EXPECT_EQ(a.memcpys.end, b.memcpys.end);
  EXPECT_EQ(a.memcpys.device, b.memcpys.device);
  EXPECT_EQ(a.memcpys.stream, b.memcpys.stream);
  EXPECT_EQ(a.memcpys.correlation, b.memcpys.correlation);
  EXPECT_EQ(a.memcpys.bytes, b.memcpys.bytes);
  EXPECT_EQ(a.memcpys.kind, b.memcpys.kind);
  EXPECT_EQ(a.memcpys.src_kind, b.memcpys.src_kind);
  EXPECT_EQ(a.memcpys.dst_kind, b.memcpys.dst_kind);
  EXPECT_EQ(a.memcpys.pid, b.memcpys.pid);

  EXPECT_EQ(a.memsets.start, b.memsets.start);
  EXPECT_EQ(a.memsets.end, b.memsets.end);
  EXPECT_EQ(a.memsets.device, b.memsets.device);
  EXPECT_EQ(a.memsets.stream, b.memsets.stream);
  EXPECT_EQ(a.memsets.correlation, b.memsets.correlation);
  EXPECT_EQ(a.memsets.bytes, b.memsets.bytes);
  EXPECT_EQ(a.memsets.value, b.memsets.value);
  EXPECT_EQ(a.memsets.mem_kind, b.memsets.mem_kind);
  EXPECT_EQ(a.memsets.pid, b.memsets.pid);

  EXPECT_EQ(a.syncs.start, b.syncs.start);
  EXPECT_EQ(a.syncs.end, b.syncs.end);
  EXPECT_EQ(a.syncs.device, b.syncs.device);
  EXPECT_EQ(a.syncs.stream, b.syncs.stream);
  EXPECT_EQ(a.syncs.correlation, b.syncs.correlation);
  EXPECT_EQ(a.syncs.kind, b.syncs.kind);
  EXPECT_EQ(a.syncs.event_id, b.syncs.event_id);
  EXPECT_EQ(a.syncs.pid, b.syncs.pid);
  EXPECT_EQ(a.syncs.wait_stream, b.syncs.wait_stream);
  EXPECT_EQ(a.syncs.record_correlation, b.syncs.record_correlation);

  EXPECT_EQ(a.api_calls.start, b.api_calls.start);
  EXPECT_EQ(a.api_calls.end, b.api_calls.end);
  EXPECT_EQ(Names(a, a.api_calls.name), Names(b, b.api_calls.name));
  EXPECT_EQ(a.api_calls.kind, b.api_calls.kind);
  EXPECT_EQ(a.api_calls.pid, b.api_calls.pid);
  EXPECT_EQ(a.api_calls.tid, b.api_calls.tid);
  EXPECT_EQ(a.api_calls.correlation, b.api_calls.correlation);
  EXPECT_EQ(a.api_calls.return_value, b.api_calls.return_value);

  // CPU ranges come back before GPU-projected ones (two tables); keep each group's order.
  auto ranges = [](const Trace& t) {
    using Row = std::tuple<bool, TimeNs, TimeNs, std::string, std::string, int64_t, int64_t, int32_t, int64_t>;
    std::vector<Row> v;
    for (size_t i = 0; i < t.ranges.size(); ++i) {
      Range r = t.ranges.Row(i);
      v.emplace_back(r.on_gpu, r.start, r.end, t.Name(r.name), t.Name(r.domain), r.pid, r.tid, r.depth, r.stream);
    }
    auto gpu_last = [](const Row& x, const Row& y) { return std::get<0>(x) < std::get<0>(y); };
    std::stable_sort(v.begin(), v.end(), gpu_last);
    return v;
  };
  EXPECT_EQ(ranges(a), ranges(b));

  EXPECT_EQ(a.samples.time, b.samples.time);
  EXPECT_EQ(a.samples.device, b.samples.device);
  ExpectSameDoubles(a.samples.temperature_c, b.samples.temperature_c);
  ExpectSameDoubles(a.samples.sm_clock_mhz, b.samples.sm_clock_mhz);
  ExpectSameDoubles(a.samples.mem_clock_mhz, b.samples.mem_clock_mhz);
  ExpectSameDoubles(a.samples.memory_used_mb, b.samples.memory_used_mb);
  ExpectSameDoubles(a.samples.power_w, b.samples.power_w);
}

void ExpectSameFinalState(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const Device &x = a.devices[i], &y = b.devices[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.sm_count, y.sm_count);
    EXPECT_EQ(x.memory_bytes, y.memory_bytes);
    EXPECT_EQ(x.peak_bandwidth_gbs, y.peak_bandwidth_gbs);
    EXPECT_EQ(x.compute_major, y.compute_major);
    EXPECT_EQ(x.compute_minor, y.compute_minor);
  }
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (size_t i = 0; i < a.processes.size(); ++i) {
    EXPECT_EQ(a.processes[i].pid, b.processes[i].pid);
    EXPECT_EQ(a.processes[i].name, b.processes[i].name);
  }
  for (const QualityInfo& q : kQualityInfo) EXPECT_EQ(a.quality.Get(q.id), b.quality.Get(q.id)) << q.key;
}

constexpr int64_t kBigPid = int64_t{1} << 40;  // does not fit nsys's 24-bit pid field

// A trace with every table and every column set, including the ids nsys encodes specially.
Trace FullTrace() {
  Trace t;
  auto s = [&t](const char* v) { return t.strings.Intern(v); };
  t.kernels.Add(
      Kernel{1000, 2000, s("void gemm<float>(float*)"), 0, 7, 11, 128, 2, 3, 256, 4, 5, 64, 1024, 2048, 4242, 9, 17});
  t.kernels.Add(Kernel{2100, 2600, s("relu"), 1, 13, 12, 1, 1, 1, 32, 1, 1, 8, 0, 0, kBigPid, kUnknownId, kUnknownId});
  t.kernels.Add(Kernel{2700, 2700, s(""), -1, kUnknownId, kUnknownId, 0, 0, 0, 0, 0, 0, 0, 0, 0, kUnknownId, kUnknownId,
                       kUnknownId});
  const CopyKind kinds[] = {CopyKind::kUnknown, CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kHtoA,
                            CopyKind::kAtoH,    CopyKind::kAtoA, CopyKind::kAtoD, CopyKind::kDtoA,
                            CopyKind::kDtoD,    CopyKind::kHtoH, CopyKind::kPtoP};
  int64_t corr = 100;
  for (CopyKind k : kinds) {
    auto i = static_cast<int>(k);
    t.memcpys.Add(Memcpy{3000 + 100 * i, 3050 + 100 * i, i % 2, 7 + i, corr++, 1 << i, k, static_cast<MemKind>(i % 8),
                         static_cast<MemKind>((i + 3) % 8), i == 5 ? kBigPid : 4242});
  }
  t.memsets.Add(Memset{5000, 5100, 0, 7, 200, 1 << 20, 0, MemKind::kDevice, 4242});
  t.memsets.Add(Memset{5200, 5300, 1, kUnknownId, kUnknownId, 64, -1, MemKind::kManaged, kUnknownId});
  t.syncs.Add(Sync{6000, 6100, 0, 7, 300, SyncKind::kStreamSync, kUnknownId, 4242});
  t.syncs.Add(Sync{6200, 6300, 0, kUnknownId, 301, SyncKind::kEventSync, 77, 4242, 7, 299});
  t.syncs.Add(Sync{6400, 6500, 1, 9, 302, SyncKind::kStreamWaitEvent, 78, 4243, 13, kUnknownId});
  t.syncs.Add(Sync{6600, 6700, -1, kUnknownId, kUnknownId, SyncKind::kContextSync, kUnknownId, kUnknownId});
  t.syncs.Add(Sync{6800, 6900, 0, 7, 303, SyncKind::kUnknown, 79, 4242});
  t.api_calls.Add(ApiCall{900, 950, s("cudaLaunchKernel"), ApiKind::kRuntime, 4242, 4243, 11, 0});
  t.api_calls.Add(ApiCall{960, 990, s("cuLaunchKernelEx"), ApiKind::kDriver, 4242, 4244, 12, 1});
  t.api_calls.Add(ApiCall{995, 999, s("cudaMemcpyAsync"), ApiKind::kRuntime, kBigPid, 7, 100, -3});
  constexpr int64_t kNone = kUnknownId;
  t.api_calls.Add(ApiCall{1001, 1002, s("cudaGetLastError"), ApiKind::kRuntime, 4242, kNone, kNone, 0});
  t.api_calls.Add(ApiCall{1003, 1004, s("cudaFree"), ApiKind::kRuntime, kNone, kNone, kNone, 0});
  t.api_calls.Add(ApiCall{1005, 1006, s("cudaMalloc"), ApiKind::kRuntime, 4242, int64_t{1} << 33, 13, 2});
  // Nested CPU ranges in two domains, a mark, and GPU-projected ranges on a stream.
  StringId nccl = s("NCCL");
  t.ranges.Add(Range{0, 10000, s("iteration"), 0, 4242, 4243, 0, false, kUnknownId});
  t.ranges.Add(Range{100, 5000, s("forward"), 0, 4242, 4243, 1, false, kUnknownId});
  t.ranges.Add(Range{200, 300, s("allreduce"), nccl, 4242, 4243, 2, false, kUnknownId});
  t.ranges.Add(Range{400, 400, s("checkpoint"), s("app"), 4242, 4243, 2, false, kUnknownId});
  t.ranges.Add(Range{500, 600, s("allreduce"), nccl, 4242, 4244, 0, false, kUnknownId});
  t.ranges.Add(Range{700, 800, s("loader"), nccl, kBigPid, 3, 0, false, kUnknownId});
  t.ranges.Add(Range{1000, 2000, s("forward"), 0, 4242, 4243, 0, true, 7});
  t.ranges.Add(Range{1100, 1900, s("conv"), nccl, 4242, 4243, 1, true, 7});
  t.samples.Add(Sample{0, 0, 54.5, 1980, 2619, 486.25, 300.5});
  t.samples.Add(Sample{100, 1, std::nan(""), -1, 2619, std::nan(""), -1});
  t.devices.push_back(Device{0, "NVIDIA H200", 132, int64_t{141} << 30, 4800, 9, 0});
  t.devices.push_back(Device{1, "NVIDIA A100-SXM4-80GB", 108, int64_t{80} << 30, 2039, 8, 0});
  t.processes.push_back(Process{4242, "python3"});
  t.processes.push_back(Process{kBigPid, "worker"});
  t.metadata = {{"source_format", "kineto_json"},
                {"source_version", "1.1"},
                {"producer", "PyTorch Profiler"},
                {"cuda_version", "12.4"},
                {"host", "gpu-box"},
                {"model", "resnet50_fp16"},
                {"batch", "1"}};
  t.quality.Add(Quality::kSourceDroppedRecords, 3);
  t.quality.Add(Quality::kUnmatchedCorrelation, 2);
  t.quality.Add(Quality::kUnknownCopyKind, 1);
  t.quality.Add(Quality::kDuplicateEvent, 12345678901);
  return t;
}

TEST_F(StoreTest, RoundTripKeepsEveryTableAndColumn) {
  Trace original = FullTrace();
  std::string path = Path("full.tgdb");
  Status w = WriteStore(original, path);
  ASSERT_TRUE(w.ok()) << w.message();
  Trace back;
  Status r = ImportSqlite(path, &back);
  ASSERT_TRUE(r.ok()) << r.message();
  ExpectSameEvents(original, back);
  ExpectSameFinalState(original, back);

  std::map<std::string, std::string, std::less<>> expected = original.metadata;
  expected["origin_source_format"] = "kineto_json";
  expected["origin_source_version"] = "1.1";
  expected["origin_producer"] = "PyTorch Profiler";
  expected["source_format"] = "tracegate";
  expected["source_version"] = std::to_string(kStoreSchemaVersion);
  expected["producer"] = "tracegate " TRACEGATE_VERSION;
  EXPECT_EQ(back.metadata, expected);
  EXPECT_EQ(FilesInDir(), 1u);  // no temp file left beside it
}

TEST_F(StoreTest, RoundTripThroughImportTraceIsStable) {
  // Store -> ImportTrace (FinalizeTrace) -> store -> ImportTrace gives the same trace again.
  std::string first = Path("a.tgdb"), second = Path("b.tgdb");
  ASSERT_TRUE(WriteStore(FullTrace(), first).ok());
  Trace a, b;
  ASSERT_TRUE(ImportTrace(first, &a).ok());
  ASSERT_TRUE(WriteStore(a, second).ok());
  ASSERT_TRUE(ImportTrace(second, &b).ok());
  ExpectSameEvents(a, b);
  ExpectSameFinalState(a, b);
  EXPECT_EQ(b.metadata["origin_source_format"], "kineto_json");
  EXPECT_EQ(b.metadata["source_path"], second);
  EXPECT_EQ(b.metadata["source_format"], "tracegate");
}

TEST_F(StoreTest, WriterMapsEachBatchsStringIds) {
  // Two batches with their own string tables: the same names get the same ids in the file.
  Trace b1, b2;
  b1.kernels.Add(Kernel{0, 10, b1.strings.Intern("gemm"), 0, 7});
  b1.ranges.Add(Range{0, 50, b1.strings.Intern("step"), b1.strings.Intern("app"), 1, 2, 0, false, -1});
  b2.strings.Intern("padding");
  b2.kernels.Add(Kernel{20, 30, b2.strings.Intern("relu"), 0, 7});
  b2.kernels.Add(Kernel{40, 50, b2.strings.Intern("gemm"), 0, 7});
  b2.ranges.Add(Range{60, 90, b2.strings.Intern("step"), b2.strings.Intern("app"), 1, 2, 0, false, -1});
  std::string path = Path("batches.tgdb");
  std::unique_ptr<StoreWriter> w;
  ASSERT_TRUE(StoreWriter::Create(path, &w).ok());
  ASSERT_TRUE(w->Append(b1).ok());
  EXPECT_FALSE(fs::exists(path));  // nothing at the final path until Finish
  ASSERT_TRUE(w->Append(b2).ok());
  Trace final_state;
  final_state.metadata["model"] = "m";
  ASSERT_TRUE(w->Finish(final_state).ok());
  EXPECT_FALSE(w->Append(b1).ok());  // finished writers refuse more rows

  Trace back;
  ASSERT_TRUE(ImportSqlite(path, &back).ok());
  EXPECT_EQ(Names(back, back.kernels.name), (std::vector<std::string>{"gemm", "relu", "gemm"}));
  EXPECT_EQ(back.kernels.start, (std::vector<TimeNs>{0, 20, 40}));
  ASSERT_EQ(back.ranges.size(), 2u);
  EXPECT_EQ(back.Name(back.ranges.domain[1]), "app");
  EXPECT_EQ(back.metadata["model"], "m");
  EXPECT_EQ(SqlPairs(path, "SELECT value, count(*) FROM StringIds GROUP BY 1")["gemm"], 1);
  // One domain-creation row per (domain, process), as nsys writes them.
  EXPECT_EQ(SqlPairs(path, "SELECT 'n', count(*) FROM NVTX_EVENTS WHERE eventType = 75")["n"], 1);
}

TEST_F(StoreTest, NsysKernelSummaryQueryGivesTheModelsAnswer) {
  std::string path = Path("sql.tgdb");
  Trace t = FullTrace();
  Kernel relu{3000, 3500, t.strings.Intern("relu"), 0, 7, 14};
  relu.pid = 4242;
  t.kernels.Add(relu);
  ASSERT_TRUE(WriteStore(t, path).ok());
  std::map<std::string, int64_t> model;
  for (size_t i = 0; i < t.kernels.size(); ++i)
    model[std::string(t.Name(t.kernels.name[i]))] += t.kernels.end[i] - t.kernels.start[i];
  EXPECT_EQ(SqlPairs(path,
                     "SELECT s.value, sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                     "JOIN StringIds s ON k.demangledName = s.id GROUP BY 1"),
            model);
  // nsys's kernel -> launching API join, and its GlobalId decoding.
  EXPECT_EQ(SqlPairs(path,
                     "SELECT s.value, k.correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                     "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
                     "JOIN StringIds s ON s.id = r.nameId"),
            (std::map<std::string, int64_t>{{"cudaLaunchKernel", 11}, {"cuLaunchKernelEx", 12}}));
  EXPECT_EQ(SqlPairs(path,
                     "SELECT s.value, (r.globalTid >> 24) & 0xFFFFFF "
                     "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                     "WHERE eventClass = 1"),
            (std::map<std::string, int64_t>{{"cuLaunchKernelEx", 4242}}));
  EXPECT_EQ(SqlPairs(path,
                     "SELECT p.name, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                     "JOIN PROCESSES p ON p.globalPid = k.globalPid GROUP BY 1"),
            (std::map<std::string, int64_t>{{"python3", 2}}));
  // nsys's NVTX domain naming: domains are eventType 75 rows of the same process.
  EXPECT_EQ(SqlPairs(path,
                     "SELECT d.text || ':' || s.value, count(*) FROM NVTX_EVENTS e "
                     "JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = e.domainId "
                     "AND (d.globalTid & 0x0000FFFFFF000000) = (e.globalTid & 0x0000FFFFFF000000) "
                     "JOIN StringIds s ON s.id = e.textId "
                     "WHERE e.eventType IN (34, 59, 60) GROUP BY 1"),
            (std::map<std::string, int64_t>{{"NCCL:allreduce", 2}, {"app:checkpoint", 1}}));
}

// The column lists the writer and reader are generated from (store_columns.h) are the columns of
// the tables a written store has, in order: store_schema.cpp checks the CREATE TABLE text at
// compile time; this checks what SQLite made of it.
std::vector<std::string> TableColumns(const std::string& path, std::string_view table) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const std::string sql = "PRAGMA table_info(" + std::string(table) + ")";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

template <class... C>
std::vector<std::string> ListedColumns(const internal::StoreTable<C...>& t) {
  std::vector<std::string> out;
  std::apply([&](const auto&... c) { (out.emplace_back(c.name), ...); }, t.columns);
  return out;
}

TEST_F(StoreTest, ColumnListsAreTheStoreTablesColumns) {
  const std::string path = Path("columns.db");
  ASSERT_TRUE(WriteStore(FullTrace(), path).ok());
  EXPECT_EQ(TableColumns(path, internal::kKernelStore.name), ListedColumns(internal::kKernelStore));
  EXPECT_EQ(TableColumns(path, internal::kMemcpyStore.name), ListedColumns(internal::kMemcpyStore));
  EXPECT_EQ(TableColumns(path, internal::kMemsetStore.name), ListedColumns(internal::kMemsetStore));
  EXPECT_EQ(TableColumns(path, internal::kSyncStore.name), ListedColumns(internal::kSyncStore));
  EXPECT_EQ(TableColumns(path, internal::kApiStore.name), ListedColumns(internal::kApiStore));
  EXPECT_EQ(TableColumns(path, internal::kRangeStore.name), ListedColumns(internal::kRangeStore));
  EXPECT_EQ(TableColumns(path, internal::kGpuRangeTable), ListedColumns(internal::kRangeStore));
  EXPECT_EQ(TableColumns(path, internal::kSampleStore.name), ListedColumns(internal::kSampleStore));
  EXPECT_EQ(internal::WrittenColumns(internal::kKernelStore).find(" mangledName"), std::string::npos);  // left NULL
  // no contextId, local memory, gridId; 8 tracegate columns of collective metadata
  EXPECT_EQ(internal::SelectedColumns(internal::kKernelStore).size(), 28u);
}

// Users' two common queries stay indexed: a time window on a table, and the GPU activity ->
// launching API join (through tg_runtime_corr; the GPU tables have no correlation index).
TEST_F(StoreTest, TimeWindowsAndCorrelationJoinsUseIndexes) {
  std::string path = Path("plan.tgdb");
  ASSERT_TRUE(WriteStore(FullTrace(), path).ok());
  EXPECT_NE(QueryPlan(path, "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start BETWEEN 10 AND 20")
                .find("USING INDEX tg_kernel_start"),
            std::string::npos);
  for (const char* gpu : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    std::string plan =
        QueryPlan(path, std::string("SELECT g.start, r.nameId FROM ") + gpu +
                            " g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId");
    EXPECT_NE(plan.find("USING INDEX tg_runtime_corr"), std::string::npos) << gpu << ":\n" << plan;
  }
}

TEST_F(StoreTest, RealNsysExportSurvivesTheStore) {
  const std::string real = std::string(TRACEGATE_SHARED_TRACES_DIR) + "/nsys_2gpu_export.sqlite";
  if (!fs::exists(real)) GTEST_SKIP() << real << " is absent (the shared traces folder)";
  Trace original, back;
  ASSERT_TRUE(ImportTrace(real, &original).ok());
  std::string path = Path("nsys.tgdb");
  ASSERT_TRUE(WriteStore(original, path).ok());
  ASSERT_TRUE(ImportTrace(path, &back).ok());
  ExpectSameEvents(original, back);
  ExpectSameFinalState(original, back);
  EXPECT_EQ(back.metadata["origin_producer"], "NVIDIA Nsight Systems 2026.2.1.210");
}

TEST_F(StoreTest, FutureSchemaVersionIsRefused) {
  std::string path = Path("future.tgdb");
  ASSERT_TRUE(WriteStore(FullTrace(), path).ok());
  ExecSql(path, "UPDATE tracegate_schema SET version = 99");
  Trace t;
  Status s = ImportTrace(path, &t);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  std::string expected = path + ": written by a newer tracegate (store schema 99); this build reads schema <= ";
  EXPECT_EQ(s.message(), expected + std::to_string(kStoreSchemaVersion));
}

TEST_F(StoreTest, UnrelatedSqliteDatabaseIsRefused) {
  std::string path = Path("other.sqlite");
  ExecSql(path, "CREATE TABLE customers (id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'a');");
  Trace t;
  Status s = ImportTrace(path, &t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), path +
                             ": SQLite database has no trace tables (expected a tracegate recording or an "
                             "Nsight Systems export)");
}

TEST_F(StoreTest, TruncatedStoreIsRefused) {
  std::string whole = Path("whole.tgdb"), cut = Path("cut.tgdb");
  ASSERT_TRUE(WriteStore(FullTrace(), whole).ok());
  std::ofstream(cut, std::ios::binary) << ReadFile(whole).substr(0, 1024);
  Trace t;
  Status s = ImportTrace(cut, &t);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(cut + ": truncated SQLite file", 0), 0u) << s.message();
}

TEST_F(StoreTest, WriteIntoMissingDirectoryIsIoErrorAndLeavesNothing) {
  std::string path = Path("no/such/dir/trace.tgdb");
  Status s = WriteStore(FullTrace(), path);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  EXPECT_EQ(FilesInDir(), 0u);
}

TEST_F(StoreTest, FailedWriteKeepsTheExistingFile) {
  std::string path = Path("keep.tgdb");
  { std::ofstream(path) << "previous recording"; }
  Trace bad = FullTrace();
  bad.kernels.Add(Kernel{0, 1, static_cast<StringId>(bad.strings.size() + 5)});  // names no string
  Status s = WriteStore(bad, path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("string id"), std::string::npos) << s.message();
  EXPECT_EQ(ReadFile(path), "previous recording");
  EXPECT_EQ(FilesInDir(), 1u);  // the temp file is gone
}

TEST_F(StoreTest, DestroyingAnUnfinishedWriterRemovesItsTempFile) {
  std::string path = Path("abandoned.tgdb");
  {
    std::unique_ptr<StoreWriter> w;
    ASSERT_TRUE(StoreWriter::Create(path, &w).ok());
    ASSERT_TRUE(w->Append(FullTrace()).ok());
    EXPECT_EQ(FilesInDir(), 1u);  // the temp file
  }
  EXPECT_EQ(FilesInDir(), 0u);
}

}  // namespace
}  // namespace tg
