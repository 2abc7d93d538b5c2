// The SQLite importer on Nsight Systems exports: a hand-written golden export, the real 2-GPU
// export in ../shared/traces, and exports it must refuse.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analyzer/sqlite/table_scan.h"
#include "sqlite_test_util.h"
#include "temp_file.h"
#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {
namespace {

namespace fs = std::filesystem;

const std::string kRealExport = std::string(TRACEGATE_SHARED_TRACES_DIR) + "/nsys_2gpu_export.sqlite";

std::string TempPath(const std::string& name) {
  return testing::RemovedAtExit(::testing::TempDir() + "tg_nsys_" + std::to_string(::getpid()) + "_" + name);
}

// Runs `sql` on a new database at `path` (replacing any file there).
void CreateDb(const std::string& path, const std::string& sql) {
  fs::remove(path);
  testing::ExecSql(path, sql);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The golden export as a database file.
std::string SmallExport(const std::string& name, const std::string& extra_sql = "") {
  std::string path = TempPath(name);
  CreateDb(path, ReadFile(std::string(TRACEGATE_FIXTURES_DIR) + "/nsys/small_export.sql") + extra_sql);
  return path;
}

int64_t SqlInt(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

void ExpectRefused(const std::string& path, const std::string& fragment) {
  Trace t;
  Status s = ImportTrace(path, &t);
  ASSERT_FALSE(s.ok()) << path;
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(NsysGolden, SmallExportMatchesHandComputedValues) {
  std::string path = SmallExport("golden");
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());

  EXPECT_EQ(t.metadata["source_format"], "nsys_sqlite");
  EXPECT_EQ(t.metadata["source_version"], "3.11.0");
  EXPECT_EQ(t.metadata["producer"], "NVIDIA Nsight Systems 2024.2.1.106");
  EXPECT_EQ(t.metadata["host"], "gpu-box");
  EXPECT_EQ(t.metadata["driver_version"], "550.54.15");
  EXPECT_EQ(t.metadata["cuda_version"], "12.4");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].pid, 4242);
  EXPECT_EQ(t.processes[0].name, "python3");
  EXPECT_TRUE(t.devices.empty());  // no TARGET_INFO_GPU table
  EXPECT_EQ(t.syncs.size(), 0u);   // no SYNCHRONIZATION table

  // Kernels: the one that ends before it starts is dropped.
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels.start, (std::vector<TimeNs>{1000, 2500, 4100}));
  EXPECT_EQ(t.kernels.end, (std::vector<TimeNs>{2000, 4000, 4600}));
  EXPECT_EQ(t.kernels.start[1] - t.kernels.end[0], 500);  // the gaps the fixture was built with
  EXPECT_EQ(t.kernels.start[2] - t.kernels.end[1], 100);
  EXPECT_EQ(t.Name(t.kernels.name[0]), "void gemm_kernel<float>(const float *, float *)");
  EXPECT_EQ(t.Name(t.kernels.name[2]), "relu_kernel");  // no demangled name: the short name
  Kernel k = t.kernels.Row(1);
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 3);
  EXPECT_EQ(k.pid, 4242);
  EXPECT_EQ(k.grid_x, 64);
  EXPECT_EQ(k.grid_y, 2);
  EXPECT_EQ(k.grid_z, 1);
  EXPECT_EQ(k.block_x, 128);
  EXPECT_EQ(k.block_y, 2);
  EXPECT_EQ(k.block_z, 1);
  EXPECT_EQ(k.registers, 32);
  EXPECT_EQ(k.shared_static, 1024);
  EXPECT_EQ(t.kernels.shared_dynamic[0], 4096);
  EXPECT_EQ(k.graph_id, kUnknownId);  // column absent in this export
  EXPECT_EQ(k.graph_node_id, kUnknownId);

  ASSERT_EQ(t.memcpys.size(), 3u);
  Memcpy h2d = t.memcpys.Row(0), d2h = t.memcpys.Row(1), uvm = t.memcpys.Row(2);
  EXPECT_EQ(h2d.kind, CopyKind::kHtoD);
  EXPECT_EQ(h2d.src_kind, MemKind::kPageable);
  EXPECT_EQ(h2d.dst_kind, MemKind::kDevice);
  EXPECT_EQ(h2d.bytes, 4096);
  EXPECT_EQ(h2d.end - h2d.start, 400);
  EXPECT_EQ(d2h.kind, CopyKind::kDtoH);
  EXPECT_EQ(d2h.dst_kind, MemKind::kPinned);
  EXPECT_EQ(uvm.kind, CopyKind::kUnknown);  // copyKind 11 (unified memory HtoD)
  EXPECT_EQ(uvm.correlation, kUnknownId);
  EXPECT_EQ(uvm.src_kind, MemKind::kManaged);

  ASSERT_EQ(t.memsets.size(), 1u);
  Memset ms = t.memsets.Row(0);
  EXPECT_EQ(ms.bytes, 1024);
  EXPECT_EQ(ms.value, 0);
  EXPECT_EQ(ms.mem_kind, MemKind::kDevice);
  EXPECT_EQ(ms.correlation, 5);

  ASSERT_EQ(t.api_calls.size(), 7u);
  ApiCall drv = t.api_calls.Row(3);
  EXPECT_EQ(t.Name(drv.name), "cuLaunchKernel");
  EXPECT_EQ(drv.kind, ApiKind::kDriver);
  EXPECT_EQ(drv.correlation, 4);
  EXPECT_EQ(drv.pid, 4242);
  EXPECT_EQ(drv.tid, 4243);
  EXPECT_EQ(t.api_calls.kind[0], ApiKind::kRuntime);
  EXPECT_EQ(t.Name(t.api_calls.name[1]), "cudaLaunchKernel_v7000");
}

TEST(NsysGolden, NvtxRangesMarksAndDomains) {
  std::string path = SmallExport("nvtx");
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());
  // iteration, forward, data_load, checkpoint (mark), ncclAllReduce; never_closed is dropped.
  ASSERT_EQ(t.ranges.size(), 5u);
  std::map<std::string, Range> by_name;
  for (size_t i = 0; i < t.ranges.size(); ++i) by_name[std::string(t.Name(t.ranges.name[i]))] = t.ranges.Row(i);
  ASSERT_EQ(by_name.size(), 5u);
  EXPECT_EQ(by_name["iteration"].start, 300);
  EXPECT_EQ(by_name["iteration"].end, 5100);
  EXPECT_EQ(by_name["iteration"].depth, 0);
  EXPECT_EQ(by_name["forward"].end - by_name["forward"].start, 3800);  // name from StringIds (textId)
  EXPECT_EQ(by_name["forward"].depth, 1);
  EXPECT_EQ(by_name["data_load"].tid, 4244);  // start/end range on the loader thread
  EXPECT_EQ(by_name["data_load"].depth, 0);
  EXPECT_EQ(by_name["checkpoint"].start, 4650);
  EXPECT_EQ(by_name["checkpoint"].end, 4650);  // a mark
  EXPECT_EQ(by_name["checkpoint"].depth, 2);
  EXPECT_EQ(t.Name(by_name["ncclAllReduce"].domain), "NCCL");
  EXPECT_EQ(t.Name(by_name["iteration"].domain), "");
  EXPECT_EQ(by_name["ncclAllReduce"].pid, 4242);
  EXPECT_EQ(by_name["ncclAllReduce"].tid, 4243);
  EXPECT_FALSE(by_name["ncclAllReduce"].on_gpu);
}

// NCCL's NVTX ranges (domain "NCCL", id 1 in the golden export) with the payloads nsys renders as
// JSON: the kernels launched inside them get the collective columns; thread 4243 throughout.
constexpr const char* kNcclSql = R"sql(
ALTER TABLE NVTX_EVENTS ADD COLUMN jsonText TEXT;
INSERT INTO StringIds VALUES (40, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (41, 'ncclDevKernel_AllGather_RING_LL'),
  (42, 'ncclKernel_Broadcast_RING_LL_Sum_int8_t'), (43, 'ncclDevKernel_SendRecv');
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText) VALUES
  (100, 200, 59, 'ncclCommInitRank', 281546145665171, 1,
   '{"NCCL communicator ID": 18446744073709551000, "No. of ranks": 4, "Rank": 0, "CUDA device": 0}'),
  (6000, 6100, 59, 'ncclAllReduce', 281546145665171, 1,
   '{"NCCL communicator ID": 18446744073709551000, "Message size [bytes]": 4096, "Reduction operation": "ncclSum"}'),
  (7100, 7110, 59, 'ncclGroupStart', 281546145665171, 1, NULL),
  (7120, 7130, 59, 'ncclAllGather', 281546145665171, 1, '{"NCCL communicator ID": 18446744073709551000, "Message size [bytes]": 1024}'),
  (7140, 7150, 59, 'ncclAllGather', 281546145665171, 1, '{"NCCL communicator ID": 18446744073709551000, "Message size [bytes]": 1024}'),
  (7160, 7200, 59, 'ncclGroupEnd', 281546145665171, 1, NULL),
  (8100, 8200, 59, 'ncclBroadcast', 281546145665171, 1, NULL),
  (8500, 8600, 59, 'ncclAllReduce', 281546145665171, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (6010, 6020, 0, 281546145665171, 20, 10, 0, NULL), (7170, 7180, 0, 281546145665171, 21, 10, 0, NULL),
  (8110, 8120, 0, 281546145665171, 22, 10, 0, NULL), (8510, 8520, 0, 281546145665171, 23, 10, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (6050, 7000, 0, 1, 40, 20, 281546145660928, 40, 40, 32, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 120),
  (7300, 8000, 0, 1, 40, 21, 281546145660928, 41, 41, 32, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 121),
  (8300, 8400, 0, 1, 40, 22, 281546145660928, 42, 42, 32, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 122),
  (8700, 8800, 0, 1, 40, 23, 281546145660928, 43, 43, 32, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 123);
)sql";

// Event syncs and stream wait events name their event's record through eventSyncId: the
// record's stream and correlation come from CUPTI_ACTIVITY_KIND_CUDA_EVENT, matched within the
// process (a record of another process with the same eventSyncId is not it).
constexpr const char* kEventSyncSql = R"sql(
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER, syncType INTEGER NOT NULL,
  eventId INTEGER NOT NULL, eventSyncId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
  (5000, 5100, 0, 1, NULL, 9, 30, 281546145660928, NULL, 2, 5, 77),
  (5200, 5300, 0, 1, NULL, 4294967295, 31, 281546145660928, NULL, 1, 5, 78),
  (5400, 5500, 0, 1, NULL, 7, 32, 281546145660928, NULL, 3, 4294967295, NULL),
  (5600, 5700, 0, 1, NULL, 9, 33, 281546145660928, NULL, 2, 5, 79);
CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp INTEGER, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, eventId INTEGER NOT NULL, eventSyncId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES
  (0, 0, 1, NULL, 7, 29, 281546145660928, 5, 77),
  (0, 0, 1, NULL, 8, 28, 281546145660928, 5, 78),
  (0, 0, 1, NULL, 8, 27, 999, 5, 79);
)sql";

TEST(NsysSyncs, EventSyncsReadTheirRecordFromCudaEvents) {
  Trace t;
  ASSERT_TRUE(ImportTrace(SmallExport("event_sync", kEventSyncSql), &t).ok());
  ASSERT_EQ(t.syncs.size(), 4u);
  EXPECT_EQ(t.syncs.kind[0], SyncKind::kStreamWaitEvent);
  EXPECT_EQ(t.syncs.stream[0], 9);  // the waiting stream
  EXPECT_EQ(t.syncs.wait_stream[0], 7);
  EXPECT_EQ(t.syncs.record_correlation[0], 29);
  EXPECT_EQ(t.syncs.kind[1], SyncKind::kEventSync);
  EXPECT_EQ(t.syncs.wait_stream[1], 8);
  EXPECT_EQ(t.syncs.record_correlation[1], 28);
  EXPECT_EQ(t.syncs.wait_stream[2], kUnknownId);  // a stream sync: no event
  EXPECT_EQ(t.syncs.record_correlation[2], kUnknownId);
  EXPECT_EQ(t.syncs.wait_stream[3], kUnknownId);  // its eventSyncId's record is another process's
  EXPECT_EQ(t.syncs.record_correlation[3], kUnknownId);
}

TEST(NsysNccl, KernelsLaunchedInsideNcclRangesGetTheCollectiveColumns) {
  Trace t;
  ASSERT_TRUE(ImportTrace(SmallExport("nccl", kNcclSql), &t).ok());
  std::map<std::string, Kernel> by_name;
  for (size_t i = 0; i < t.kernels.size(); ++i) by_name[std::string(t.Name(t.kernels.name[i]))] = t.kernels.Row(i);
  const std::string comm = "18446744073709551000";
  // Called alone: launched inside its own range; the group size from ncclCommInitRank's payload.
  const Kernel ar = by_name["ncclDevKernel_AllReduce_Sum_f32_RING_LL"];
  EXPECT_EQ(t.Name(ar.collective), "allreduce");
  EXPECT_EQ(t.Name(ar.coll_dtype), "Byte");
  EXPECT_EQ(ar.coll_in_nelems, 4096);
  EXPECT_EQ(ar.coll_out_nelems, 4096);
  EXPECT_EQ(ar.coll_group_size, 4);
  EXPECT_EQ(t.Name(ar.coll_group), comm);
  EXPECT_EQ(ar.coll_seq, kUnknownId);  // NCCL's payload has no sequence number: matched by order
  // Two all-gathers in a group: one kernel launched by ncclGroupEnd, 2 x 1024 bytes per rank.
  const Kernel ag = by_name["ncclDevKernel_AllGather_RING_LL"];
  EXPECT_EQ(t.Name(ag.collective), "allgather");
  EXPECT_EQ(ag.coll_in_nelems, 2048);
  EXPECT_EQ(ag.coll_out_nelems, 4 * 2048);
  EXPECT_EQ(ag.coll_group_size, 4);
  // NCCL before 2.19: a range without payload names the collective only.
  const Kernel bc = by_name["ncclKernel_Broadcast_RING_LL_Sum_int8_t"];
  EXPECT_EQ(t.Name(bc.collective), "broadcast");
  EXPECT_EQ(t.Name(bc.coll_dtype), "");
  EXPECT_EQ(bc.coll_in_nelems, kUnknownId);
  EXPECT_EQ(bc.coll_group_size, 0);
  // A range outside the NCCL domain says nothing; the kernel's name still classifies it.
  const Kernel sr = by_name["ncclDevKernel_SendRecv"];
  EXPECT_EQ(t.Name(sr.collective), "");
  KernelClassifier classifier;
  ASSERT_TRUE(KernelClassifier::Create({}, &classifier).ok());
  std::vector<KernelClass> classes = ClassifyKernels(t, classifier);
  for (size_t i = 3; i < t.kernels.size(); ++i) EXPECT_EQ(classes[i], KernelClass::kCommunication) << i;

  // The collectives table as for a Kineto trace: bytes and bandwidths from the metadata.
  CommunicationAnalysis c = AnalyzeCommunication(t, IterationAnalysis{}, classes, {});
  EXPECT_EQ(c.collective_kernels, 4u);
  EXPECT_EQ(c.with_metadata, 3u);
  std::map<std::string, CollectiveStat> stats;
  for (const CollectiveStat& s : c.collectives) stats[s.collective] = s;
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(stats["allreduce"].bytes, 4096);
  EXPECT_EQ(stats["allreduce"].total_ns, 950);
  EXPECT_DOUBLE_EQ(*stats["allreduce"].algbw_gbs, 4096.0 / 950);
  EXPECT_DOUBLE_EQ(*stats["allreduce"].busbw_gbs, 4096.0 / 950 * 2 * 3 / 4);
  EXPECT_EQ(stats["allgather"].bytes, 8192);
  EXPECT_DOUBLE_EQ(*stats["allgather"].busbw_gbs, 8192.0 / 700 * 3 / 4);
  EXPECT_FALSE(stats["broadcast"].bytes);
}

TEST(NsysNccl, ExportsWithoutNcclRangesAreUnchanged) {
  Trace t;
  ASSERT_TRUE(ImportTrace(SmallExport("no_nccl_launch"), &t).ok());
  EXPECT_EQ(t.kernels.collective.stored(), 0u);  // its ncclAllReduce range launches nothing
}

TEST(NsysGolden, DataQualityCounters) {
  std::string path = SmallExport("quality");
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());
  EXPECT_EQ(t.quality.Get(Quality::kNegativeDuration), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCopyKind), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedRangeEnd), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 0u);  // every launch is in RUNTIME
  EXPECT_EQ(t.quality.Total(), 3u);
  EXPECT_FALSE(t.quality.HasErrors());
}

TEST(NsysGolden, NvtxTableFoundByPrefix) {
  // Some nsys versions export NVTX_EVENTS under a longer name.
  std::string path = SmallExport("suffix", "ALTER TABLE NVTX_EVENTS RENAME TO NVTX_EVENTS_V2;");
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());
  EXPECT_EQ(t.ranges.size(), 5u);
}

TEST(NsysBadInput, ExportSchemaFourIsRefused) {
  std::string path =
      SmallExport("schema4", "UPDATE META_DATA_EXPORT SET value = '4.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION';");
  ExpectRefused(path, "export schema 4.0.0 is not supported");
  Trace t;
  EXPECT_EQ(ImportTrace(path, &t).code(), StatusCode::kUnsupported);
}

TEST(NsysBadInput, TruncatedDatabaseIsRefused) {
  std::string whole = SmallExport("whole");
  std::string path = TempPath("truncated.sqlite");
  std::string bytes = ReadFile(whole).substr(0, 1024);
  std::ofstream(path, std::ios::binary) << bytes;
  ExpectRefused(path, "truncated");
}

TEST(NsysBadInput, CorruptDatabaseIsRefused) {
  std::string whole = SmallExport("corrupt_src");
  std::string bytes = ReadFile(whole);
  // Keep the header, scribble over the schema page.
  for (size_t i = 100; i < std::min<size_t>(bytes.size(), 4096); ++i) bytes[i] = static_cast<char>(0xA5);
  std::string path = TempPath("corrupt.sqlite");
  std::ofstream(path, std::ios::binary) << bytes;
  ExpectRefused(path, "SQLite");
}

TEST(NsysRealExport, CountsMatchSql) {
  if (!fs::exists(kRealExport)) GTEST_SKIP() << kRealExport << " is absent (the shared traces folder)";
  Trace t;
  ASSERT_TRUE(ImportTrace(kRealExport, &t).ok());
  auto count = [](const std::string& from) { return SqlInt(kRealExport, "SELECT count(*) FROM " + from); };
  EXPECT_EQ(static_cast<int64_t>(t.kernels.size()), count("CUPTI_ACTIVITY_KIND_KERNEL"));
  EXPECT_EQ(static_cast<int64_t>(t.memcpys.size()), count("CUPTI_ACTIVITY_KIND_MEMCPY"));
  EXPECT_EQ(static_cast<int64_t>(t.memsets.size()), count("CUPTI_ACTIVITY_KIND_MEMSET"));
  EXPECT_EQ(static_cast<int64_t>(t.syncs.size()), count("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"));
  EXPECT_EQ(static_cast<int64_t>(t.api_calls.size()), count("CUPTI_ACTIVITY_KIND_RUNTIME"));
  EXPECT_EQ(static_cast<int64_t>(t.ranges.size()), count("NVTX_EVENTS WHERE eventType IN (59, 60)"));
  size_t driver = 0;
  for (ApiKind k : t.api_calls.kind) driver += k == ApiKind::kDriver;
  EXPECT_EQ(static_cast<int64_t>(driver), count("CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1"));
  EXPECT_EQ(t.kernels.size(), 4010u);  // as the traces README says
  EXPECT_FALSE(t.quality.HasErrors());
  EXPECT_EQ(t.metadata["source_format"], "nsys_sqlite");
  EXPECT_EQ(t.metadata["source_version"], "3.25.0");
  EXPECT_EQ(t.metadata["producer"], "NVIDIA Nsight Systems 2026.2.1.210");
}

TEST(NsysRealExport, PidsAndTidsMatchProcesses) {
  if (!fs::exists(kRealExport)) GTEST_SKIP() << kRealExport << " is absent (the shared traces folder)";
  Trace t;
  ASSERT_TRUE(ImportTrace(kRealExport, &t).ok());
  ASSERT_EQ(static_cast<int64_t>(t.processes.size()), SqlInt(kRealExport, "SELECT count(*) FROM PROCESSES"));
  std::set<int64_t> pids;
  for (const Process& p : t.processes) pids.insert(p.pid);
  EXPECT_TRUE(pids.count(144) && pids.count(145));  // the two training ranks (python3)
  for (int64_t pid : t.kernels.pid) ASSERT_TRUE(pids.count(pid)) << pid;
  for (int64_t pid : t.api_calls.pid) ASSERT_TRUE(pids.count(pid)) << pid;
  for (int64_t pid : t.ranges.pid) ASSERT_TRUE(pids.count(pid)) << pid;
  // The decoding nsys documents: pid = (globalTid >> 24) & 0xFFFFFF, tid = globalTid & 0xFFFFFF.
  auto first = [](const std::string& expr) {
    return SqlInt(kRealExport, "SELECT " + expr + " FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1");
  };
  EXPECT_EQ(t.api_calls.tid[0], first("globalTid & 0xFFFFFF"));
  EXPECT_EQ(t.api_calls.pid[0], first("(globalTid >> 24) & 0xFFFFFF"));
  std::set<int32_t> devices(t.kernels.device.begin(), t.kernels.device.end());
  EXPECT_EQ(devices, (std::set<int32_t>{0, 1}));
}

}  // namespace
}  // namespace tg

namespace tg {
namespace {

// Reading the event tables from the file's pages, the kernels split between two cores and the
// API calls on the second (sqlite_events.cpp ReadOnTwoCores), builds the very trace SQLite alone
// builds: every column of every table, the strings in the same order, the same counters. The
// export has enough rows to split (4 KiB pages; 1.5 kernels a call, so the kernels outweigh the
// calls by more than the half of a root child the split rounds to); the later kernels and the
// API calls bring names of their own (so the order the second core's names are resolved in
// shows in the strings), and
// names missing from StringIds; rows are dropped for their times; kernels lack a demangled name;
// syncs are read through SQLite's join with CUDA events while the second core reads.
TEST(NsysDirectReads, SameTraceAsSqliteAlone) {
  const std::string extra = kEventSyncSql + std::string(R"(
    BEGIN;
    INSERT INTO StringIds SELECT 1000 + i, 'kernel_' || i || '_' || printf('%.*c', i % 40, 'x')
      FROM (WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 200) SELECT i FROM n);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
      SELECT 10000 + i * 100, CASE WHEN i % 997 = 0 THEN 9000 ELSE 10000 + i * 100 + 60 END, i % 2, 1, 7 + i % 4,
             100 + i, 281546145660928,
             CASE WHEN i % 11 = 0 THEN NULL WHEN i % 389 = 0 THEN 7000 + i % 5
                  WHEN i < 25000 THEN 1000 + i % 61 ELSE 1061 + i % 70 END,
             1000 + (i * 7) % 61, 32, 1 + i % 300, 1 + i % 2, 1, 128, 1, 1, 0, (i % 5) * 1024, 0, 0, 200 + i
      FROM (WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) SELECT i FROM n);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
      SELECT 9990 + i * 100, 9990 + i * 100 + CASE WHEN i % 1009 = 0 THEN -5 ELSE 8 END, i % 3 = 0,
             281546145665171 + i % 3, 100 + i,
             CASE WHEN i % 401 = 0 THEN 8000 + i % 3 WHEN i % 2 = 0 THEN 1000 + (i * 13) % 61 ELSE 1131 + i % 70 END, 0, NULL
      FROM (WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) SELECT i FROM n);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
      SELECT 20000 + i * 1000, 20000 + i * 1000 + 90, 0, 1, 7, 50000 + i, 281546145660928, 4096 * i, 1 + i % 2, 0, 2, NULL, 0
      FROM (WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) SELECT i FROM n);
    COMMIT;)");
  const std::string path = SmallExport("direct", extra);
  Trace direct, sqlite_only;
  const internal::ScanCounts before = internal::ScanCountsForTesting();
  ASSERT_TRUE(ImportTrace(path, &direct).ok());
  const internal::ScanCounts after = internal::ScanCountsForTesting();
  EXPECT_GE(after.opened - before.opened, 4u);  // API calls, two kernel parts, copies at least
  EXPECT_EQ(after.split - before.split, 2u);    // the kernel table, in two
  internal::SetDirectReadsForTesting(false);
  Status s = ImportTrace(path, &sqlite_only);
  internal::SetDirectReadsForTesting(true);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(internal::ScanCountsForTesting().opened, after.opened);  // SQLite read every table
  ASSERT_GT(direct.kernels.size(), 39000u);
  ASSERT_GT(direct.api_calls.size(), 39000u);
  auto same_table = [](const auto& a, const auto& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    EXPECT_TRUE(a.Columns() == b.Columns()) << what;  // every column, row by row
  };
  same_table(direct.kernels, sqlite_only.kernels, "kernels");
  same_table(direct.api_calls, sqlite_only.api_calls, "API calls");
  same_table(direct.memcpys, sqlite_only.memcpys, "memcpys");
  same_table(direct.memsets, sqlite_only.memsets, "memsets");
  same_table(direct.ranges, sqlite_only.ranges, "ranges");
  same_table(direct.syncs, sqlite_only.syncs, "syncs");
  ASSERT_EQ(direct.syncs.size(), 4u);
  ASSERT_EQ(direct.strings.size(), sqlite_only.strings.size());
  for (StringId id = 0; id < direct.strings.size(); ++id) EXPECT_EQ(direct.Name(id), sqlite_only.Name(id));
  for (const QualityInfo& q : kQualityInfo) EXPECT_EQ(direct.quality.Get(q.id), sqlite_only.quality.Get(q.id)) << q.key;
  EXPECT_GT(direct.quality.Get(Quality::kUnresolvedName), 0u);
  EXPECT_GT(direct.quality.Get(Quality::kNegativeDuration), 0u);
}

}  // namespace
}  // namespace tg
