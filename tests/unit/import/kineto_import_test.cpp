// Kineto / Chrome-trace JSON importer: golden fixtures (tests/fixtures/kineto, expected values
// computed by hand), the real traces in ../shared/traces checked against an independent count
// with nlohmann::json, data-quality rules, and bad input through ImportTrace.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/analyzer/summary.h"

namespace tg {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) { return std::string(TRACEGATE_FIXTURES_DIR) + "/kineto/" + name; }

std::string ReadAll(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  EXPECT_NE(gz, nullptr) << path;
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while (gz && (n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  if (gz) gzclose(gz);
  return out;
}

std::string ReadAllRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh directory per test.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) / (std::string("kineto_") + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string WriteGzip(const std::string& name, const std::string& content) const {
    std::string path = (dir_ / name).string();
    gzFile gz = gzopen(path.c_str(), "wb");
    EXPECT_NE(gz, nullptr);
    EXPECT_EQ(gzwrite(gz, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
    gzclose(gz);
    return path;
  }

 private:
  fs::path dir_;
};

Status Import(const std::string& path, Trace& trace) { return ImportTrace(path, &trace); }

void ExpectFailure(const std::string& path, const std::string& what) {
  Trace trace;
  trace.metadata["marker"] = "untouched";
  Status s = ImportTrace(path, &trace);
  ASSERT_FALSE(s.ok()) << path;
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  // No partial result: the caller's trace is left as it was.
  EXPECT_EQ(trace.kernels.size() + trace.api_calls.size() + trace.ranges.size(), 0u);
  EXPECT_EQ(trace.metadata.size(), 1u);
}

TEST(KinetoGolden, NewGenerationObjectWithFloatTimestamps) {
  Trace t;
  ASSERT_TRUE(Import(Fixture("new_generation.json"), t).ok());

  ASSERT_EQ(t.kernels.size(), 2u);
  Kernel k = t.kernels.Row(0);
  EXPECT_EQ(t.Name(k.name), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(k.start, 1695835572943030001);  // 1695835572943030.001 us, not rounded through a double
  EXPECT_EQ(k.end, 1695835572943071000);
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 101);
  EXPECT_EQ(k.grid_x, 8);
  EXPECT_EQ(k.grid_y, 16);
  EXPECT_EQ(k.grid_z, 5);
  EXPECT_EQ(k.block_x, 128);
  EXPECT_EQ(k.block_y, 1);
  EXPECT_EQ(k.block_z, 1);
  EXPECT_EQ(k.registers, 122);
  EXPECT_EQ(k.shared_static, 12544);
  EXPECT_EQ(k.pid, kUnknownId);
  k = t.kernels.Row(1);
  EXPECT_EQ(t.Name(k.name), "triton_poi_fused_add_0");
  EXPECT_EQ(k.correlation, 108);  // no args.correlation: taken from the ac2g flow bound to it
  EXPECT_EQ(k.stream, 20);
  EXPECT_EQ(k.grid_x, 1024);
  EXPECT_EQ(k.registers, 0);

  ASSERT_EQ(t.memcpys.size(), 5u);
  Memcpy m = t.memcpys.Row(0);
  EXPECT_EQ(m.kind, CopyKind::kHtoD);
  EXPECT_EQ(m.src_kind, MemKind::kPageable);
  EXPECT_EQ(m.dst_kind, MemKind::kDevice);
  EXPECT_EQ(m.bytes, 4194304);
  EXPECT_EQ(m.start, 1695835572943071500);
  EXPECT_EQ(m.end, 1695835572943074000);
  EXPECT_EQ(m.device, 0);
  EXPECT_EQ(m.stream, 7);
  EXPECT_EQ(m.correlation, 102);
  m = t.memcpys.Row(1);
  EXPECT_EQ(m.kind, CopyKind::kDtoH);
  EXPECT_EQ(m.src_kind, MemKind::kDevice);
  EXPECT_EQ(m.dst_kind, MemKind::kPinned);
  EXPECT_EQ(m.bytes, 1024);
  m = t.memcpys.Row(2);
  EXPECT_EQ(m.kind, CopyKind::kDtoD);
  EXPECT_EQ(m.device, 1);
  EXPECT_EQ(m.stream, 9);
  EXPECT_EQ(m.bytes, 2048);
  EXPECT_EQ(t.memcpys.Row(3).kind, CopyKind::kPtoP);
  m = t.memcpys.Row(4);
  EXPECT_EQ(m.kind, CopyKind::kUnknown);
  EXPECT_EQ(m.src_kind, MemKind::kUnknown);
  EXPECT_EQ(m.end - m.start, 1);  // 0.001 us

  ASSERT_EQ(t.memsets.size(), 1u);
  Memset ms = t.memsets.Row(0);
  EXPECT_EQ(ms.bytes, 512);
  EXPECT_EQ(ms.stream, 20);
  EXPECT_EQ(ms.correlation, 107);
  EXPECT_EQ(ms.mem_kind, MemKind::kDevice);
  EXPECT_EQ(ms.end - ms.start, 1250);

  ASSERT_EQ(t.syncs.size(), 4u);
  Sync s = t.syncs.Row(0);
  EXPECT_EQ(s.kind, SyncKind::kEventSync);
  EXPECT_EQ(s.stream, -1);
  EXPECT_EQ(s.event_id, 9);
  EXPECT_EQ(s.correlation, 109);
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.wait_stream, 7);  // the event's record: wait_on_stream, wait_on_cuda_event_record_corr_id
  EXPECT_EQ(s.record_correlation, 101);
  s = t.syncs.Row(1);
  EXPECT_EQ(s.kind, SyncKind::kStreamWaitEvent);
  EXPECT_EQ(s.stream, 20);
  EXPECT_EQ(s.event_id, 4);
  EXPECT_EQ(s.start, s.end);
  EXPECT_EQ(s.wait_stream, 7);
  EXPECT_EQ(s.record_correlation, kUnknownId);  // no wait_on_cuda_event_record_corr_id
  EXPECT_EQ(t.syncs.Row(2).kind, SyncKind::kStreamSync);
  EXPECT_EQ(t.syncs.Row(2).event_id, kUnknownId);
  EXPECT_EQ(t.syncs.Row(2).wait_stream, kUnknownId);
  EXPECT_EQ(t.syncs.Row(3).kind, SyncKind::kContextSync);  // from the name: no cuda_sync_kind

  ASSERT_EQ(t.api_calls.size(), 3u);
  ApiCall a = t.api_calls.Row(0);
  EXPECT_EQ(t.Name(a.name), "cudaLaunchKernel");
  EXPECT_EQ(a.kind, ApiKind::kRuntime);
  EXPECT_EQ(a.pid, 1234);
  EXPECT_EQ(a.tid, 1240);
  EXPECT_EQ(a.correlation, 101);
  EXPECT_EQ(a.start, 1695835572943020123);
  EXPECT_EQ(a.end, 1695835572943026000);
  EXPECT_EQ(t.api_calls.Row(2).kind, ApiKind::kDriver);
  EXPECT_EQ(t.Name(t.api_calls.Row(2).name), "cuLaunchKernel");

  ASSERT_EQ(t.ranges.size(), 5u);
  std::map<std::string, Range> ranges;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    Range r = t.ranges.Row(i);
    ranges[std::string(t.Name(r.name)) + (r.on_gpu ? "@gpu" : "")] = r;
  }
  EXPECT_EQ(t.Name(ranges.at("ProfilerStep#7").domain), "");
  EXPECT_EQ(t.Name(ranges.at("aten::linear").domain), "cpu_op");
  EXPECT_EQ(ranges.at("aten::linear").start, 1695835572943010250);
  EXPECT_EQ(ranges.at("aten::linear").end, 1695835572943060375);
  EXPECT_EQ(t.Name(ranges.at("model.py(42): forward").domain), "python_function");
  const Range& gpu = ranges.at("ProfilerStep#7@gpu");
  EXPECT_EQ(gpu.stream, 7);
  EXPECT_EQ(gpu.pid, 0);
  const Range& named_thread = ranges.at("data \"loader\" \xC3\xA9");  // escapes decoded
  EXPECT_LT(named_thread.tid, -1);                                    // a string tid maps to a stable negative id
  EXPECT_EQ(ranges.at("ProfilerStep#7").depth, 0);                    // "data loader" is on another thread
  EXPECT_EQ(ranges.at("model.py(42): forward").depth, 1);             // nesting from FinalizeTrace

  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 2u);  // overhead, Trace
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCopyKind), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 5u);  // copies 103-106, memset 107
  EXPECT_EQ(t.quality.Get(Quality::kMalformedEvent), 0u);
  EXPECT_FALSE(t.quality.HasErrors());

  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].pid, 1234);
  EXPECT_EQ(t.processes[0].name, "python3.10");
  ASSERT_EQ(t.devices.size(), 2u);
  const Device* d = t.FindDevice(1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->sm_count, 132);
  EXPECT_EQ(d->memory_bytes, 85031714816);
  EXPECT_EQ(d->compute_major, 9);
  EXPECT_EQ(d->compute_minor, 0);

  EXPECT_EQ(t.metadata.at("source_format"), "kineto_json");
  EXPECT_EQ(t.metadata.at("source_version"), "1");
  EXPECT_EQ(t.metadata.at("producer"), "PyTorch profiler (Kineto)");
  EXPECT_EQ(t.metadata.at("rank"), "3");
  EXPECT_EQ(t.metadata.at("cupti_version"), "24");
  EXPECT_EQ(t.metadata.at("cuda_version"), "12060");
  EXPECT_EQ(t.metadata.at("driver_version"), "12040");
  EXPECT_EQ(t.metadata.at("trace_name"), "fixture_new_generation.json");
  EXPECT_EQ(t.metadata.at("source_path"), Fixture("new_generation.json"));
  EXPECT_EQ(t.Window(), std::make_pair(TimeNs{1695835572942000000}, TimeNs{1695835572944000000}));
}

TEST(KinetoGolden, OldGenerationBareArrayWithCapitalisedCategories) {
  Trace t;
  ASSERT_TRUE(Import(Fixture("old_generation.json"), t).ok());
  ASSERT_EQ(t.kernels.size(), 2u);
  Kernel k = t.kernels.Row(0);
  EXPECT_EQ(t.Name(k.name), "volta_sgemm_128x64_nn");
  EXPECT_EQ(k.start, 1618000000000180000);
  EXPECT_EQ(k.end, 1618000000000280000);
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 334);
  EXPECT_EQ(k.grid_x, 16);
  EXPECT_EQ(k.grid_y, 8);
  EXPECT_EQ(k.block_x, 256);
  EXPECT_EQ(k.registers, 128);
  EXPECT_EQ(k.shared_static, 16384);
  k = t.kernels.Row(1);
  EXPECT_EQ(k.device, 1);   // no args.device: Kineto's GPU pid is the device
  EXPECT_EQ(k.stream, 13);  // no args.stream: from tid "stream 13"
  EXPECT_EQ(k.end - k.start, 7000);

  ASSERT_EQ(t.memcpys.size(), 2u);
  EXPECT_EQ(t.memcpys.Row(0).kind, CopyKind::kHtoD);
  EXPECT_EQ(t.memcpys.Row(0).bytes, 1048576);
  EXPECT_EQ(t.memcpys.Row(1).kind, CopyKind::kDtoH);
  EXPECT_EQ(t.memcpys.Row(1).dst_kind, MemKind::kPageable);
  EXPECT_EQ(t.memcpys.Row(1).device, 0);  // "inDevice" of the old Memcpy2 form
  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets.Row(0).bytes, 256);
  EXPECT_EQ(t.memsets.Row(0).device, 0);

  ASSERT_EQ(t.api_calls.size(), 3u);
  EXPECT_EQ(t.api_calls.Row(0).tid, 456);  // numeric string tid
  EXPECT_EQ(t.api_calls.Row(0).correlation, 334);
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.Name(t.ranges.Row(0).name), "ProfilerStep#1");
  EXPECT_EQ(t.Name(t.ranges.Row(0).domain), "cpu_op");  // "Operator" was cpu_op's old name
  EXPECT_EQ(t.ranges.Row(0).tid, 123);
  EXPECT_EQ(t.ranges.Row(1).depth, 1);

  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 1u);  // Trace
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 2u);    // 336, 338 have no API call
  EXPECT_FALSE(t.quality.HasErrors());
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].name, "python");
  EXPECT_EQ(t.metadata.count("source_version"), 0u);
}

TEST(KinetoGolden, GzipVariantImportsTheSame) {
  TempDir dir;
  std::string gz = dir.WriteGzip("new_generation.json.gz", ReadAll(Fixture("new_generation.json")));
  Trace plain, zipped;
  ASSERT_TRUE(Import(Fixture("new_generation.json"), plain).ok());
  Status s = Import(gz, zipped);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(zipped.kernels.start, plain.kernels.start);
  EXPECT_EQ(zipped.kernels.correlation, plain.kernels.correlation);
  EXPECT_EQ(zipped.memcpys.bytes, plain.memcpys.bytes);
  EXPECT_EQ(zipped.syncs.kind, plain.syncs.kind);
  EXPECT_EQ(zipped.api_calls.end, plain.api_calls.end);
  EXPECT_EQ(zipped.ranges.start, plain.ranges.start);
  EXPECT_EQ(zipped.devices.size(), plain.devices.size());
  EXPECT_EQ(zipped.quality.Total(), plain.quality.Total());
}

TEST(KinetoGolden, RelativeTimestampsGetBaseTimeFromTheEndOfTheFile) {
  Trace t;
  ASSERT_TRUE(Import(Fixture("relative_time.json"), t).ok());
  ASSERT_EQ(t.api_calls.size(), 1u);
  // 1743521598000000000 ns + 198093488368.463 us
  EXPECT_EQ(t.api_calls.Row(0).start, 1743719691488368463);
  EXPECT_EQ(t.api_calls.Row(0).end, 1743719691488372664);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.Row(0).start, 1743719691488380000);
  EXPECT_EQ(t.kernels.Row(0).end, 1743719691488381500);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 0u);
}

TEST(KinetoGolden, BaseTimeBeforeTheEventsAndOverflowingSums) {
  TempDir dir;
  std::string path = dir.Write("base_first.json", R"({"baseTimeNanoseconds": 9223372036854775000,
    "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "fits", "pid": 1, "tid": 1, "ts": 0.5, "dur": 0.307},
      {"ph": "X", "cat": "cpu_op", "name": "overflows", "pid": 1, "tid": 1, "ts": 0.5, "dur": 0.308}]})");
  Trace t;
  ASSERT_TRUE(Import(path, t).ok());
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.Name(t.ranges.Row(0).name), "fits");
  EXPECT_EQ(t.ranges.Row(0).end, INT64_MAX);
  EXPECT_EQ(t.quality.Get(Quality::kTimestampOverflow), 1u);
}

// Enough rows for the base to be added on two cores: a table where one time overflows drops that
// row only; the others take the base whole.
TEST(KinetoGolden, BaseTimeOnManyRowsDropsOnlyTheOverflowingRows) {
  TempDir dir;
  std::string events;
  for (int i = 0; i < 40000; ++i) {
    events += R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) +
              R"(, "dur": 0.5},)";
    events += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" + std::to_string(i) +
              R"(, "dur": 0.25, "args": {"device": 0, "stream": 7}},)";
  }
  events += R"({"ph": "X", "cat": "cpu_op", "name": "overflows", "pid": 1, "tid": 1, "ts": 9000000000, "dur": 1})";
  std::string path =
      dir.Write("many.json", R"({"traceEvents": [)" + events + R"(], "baseTimeNanoseconds": 9223372030000000000})");
  Trace t;
  ASSERT_TRUE(Import(path, t).ok());
  ASSERT_EQ(t.ranges.size(), 40000u);
  ASSERT_EQ(t.kernels.size(), 40000u);
  EXPECT_EQ(t.quality.Get(Quality::kTimestampOverflow), 1u);
  for (size_t i : {size_t{0}, size_t{1}, size_t{39999}}) {
    EXPECT_EQ(t.ranges.Row(i).start, 9223372030000000000 + static_cast<int64_t>(i) * 1000);
    EXPECT_EQ(t.ranges.Row(i).end, 9223372030000000000 + static_cast<int64_t>(i) * 1000 + 500);
    EXPECT_EQ(t.kernels.Row(i).end, 9223372030000000000 + static_cast<int64_t>(i) * 1000 + 250);
  }
}

TEST(KinetoQuality, CountsAndDropsBadEventsAndConvertsTimesExactly) {
  Trace t;
  Status s = Import(Fixture("quality_rules.json"), t);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.quality.Get(Quality::kNegativeDuration), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kMissingTimestamp), 2u);  // absent, null
  EXPECT_EQ(t.quality.Get(Quality::kMalformedEvent), 13u);
  EXPECT_EQ(t.quality.Get(Quality::kTimestampOverflow), 3u);
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 5u);  // B, E, C, cuda_profiler_range, no cat
  EXPECT_EQ(t.quality.Get(Quality::kNegativeTimestamp), 2u);       // negative, round_negative
  EXPECT_FALSE(t.quality.HasErrors());

  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels.Row(1).correlation, 7);  // 7.0 is an integer
  std::map<std::string, Range> r;
  for (size_t i = 0; i < t.ranges.size(); ++i) r[std::string(t.Name(t.ranges.Row(i).name))] = t.ranges.Row(i);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.at("max").start, 9223372036854775000);
  EXPECT_EQ(r.at("max").end, INT64_MAX);
  EXPECT_EQ(r.at("exponent").start, 1500000);  // 1.5e3 us
  EXPECT_EQ(r.at("exponent").end, 1502500);    // + 25E-1 us
  EXPECT_EQ(r.at("round").start, 1001);        // 1000.5 ns rounds away from zero
  EXPECT_EQ(r.at("round").end, 1001);          // + 0.4 ns rounds to 0
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_LT(t.processes[0].pid, -1);  // "Spans"
}

// Nothing of one event leaks into the next: a kernel with grid, block, registers and stream
// arguments followed by one without them gets the defaults.
TEST(KinetoQuality, FieldsOfOneEventDoNotCarryIntoTheNext) {
  TempDir dir;
  const std::string path = dir.Write("carry.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
     "args": {"device": 0, "stream": 7, "correlation": 5, "registers per thread": 32, "shared memory": 128,
              "grid": [4, 2, 1], "block": [128, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 9, "ts": 4, "dur": 2}
  ]})");
  Trace t;
  ASSERT_TRUE(Import(path, t).ok());
  ASSERT_EQ(t.kernels.size(), 2u);
  const Kernel k1 = t.kernels.Row(0), k2 = t.kernels.Row(1);
  EXPECT_EQ(k1.grid_x, 4);
  EXPECT_EQ(k1.block_x, 128);
  EXPECT_EQ(k1.registers, 32);
  EXPECT_EQ(k2.grid_x, 0);
  EXPECT_EQ(k2.grid_y, 0);
  EXPECT_EQ(k2.block_x, 0);
  EXPECT_EQ(k2.registers, 0);
  EXPECT_EQ(k2.shared_static, 0);
  EXPECT_EQ(k2.stream, 9);  // from its tid, not k1's args
  EXPECT_EQ(k2.correlation, kUnknownId);
}

// An accelerator tracegate does not model writes its work under its own categories: they are
// counted and named, the most frequent first (the no-device-activity line shows them).
TEST(KinetoQuality, NamesTheCategoriesItDoesNotModel) {
  TempDir dir;
  const std::string path = dir.Write("mtia.json", R"({"traceEvents": [
    {"ph": "X", "cat": "mtia_runtime", "name": "launch", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "mtia_kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 2},
    {"ph": "X", "cat": "mtia_kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2},
    {"ph": "X", "cat": "mtia_runtime", "name": "launch", "pid": 1, "tid": 1, "ts": 4, "dur": 1},
    {"ph": "X", "cat": "mtia_kernel", "name": "k", "pid": 0, "tid": 7, "ts": 8, "dur": 2},
    {"ph": "X", "name": "no category", "pid": 1, "tid": 1, "ts": 9, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 9}
  ]})");
  Trace t;
  ASSERT_TRUE(Import(path, t).ok());
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 6u);
  EXPECT_EQ(t.metadata["unmodelled_categories"], "mtia_kernel 3, mtia_runtime 2, (no category) 1");
  EXPECT_EQ(t.kernels.size(), 0u);
  const std::string why = Summarize(t, AnalyzeOptions{}).no_device_activity;
  EXPECT_NE(why.find("6 events of categories tracegate does not model (unknown_category_skipped: mtia_kernel 3, "
                     "mtia_runtime 2, (no category) 1), which may be an accelerator's activity"),
            std::string::npos)
      << why;
}

// Each real trace: counts equal an independent count of X events by category.
TEST(KinetoRealTraces, CountsMatchAnIndependentParse) {
  fs::path dir = TRACEGATE_SHARED_TRACES_DIR;
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no shared traces folder at " << dir;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("kineto_", 0) != 0 || entry.path().extension() != ".gz") continue;
    SCOPED_TRACE(name);
    ++files;
    nlohmann::json j = nlohmann::json::parse(ReadAll(entry.path().string()));
    const nlohmann::json& events = j.is_array() ? j : j.at("traceEvents");
    std::map<std::string, size_t> by_cat;
    int64_t copied_bytes = 0;
    for (const auto& e : events) {
      if (e.value("ph", "") != "X") continue;
      std::string cat = e.value("cat", "");
      ++by_cat[cat];
      // ROCm traces (kineto_amd_mi250_train) write copies without "bytes": their size is unknown.
      if (cat == "gpu_memcpy") copied_bytes += e.at("args").value("bytes", int64_t{0});
    }
    Trace t;
    Status s = Import(entry.path().string(), t);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(t.kernels.size(), by_cat["kernel"]);
    EXPECT_EQ(t.memcpys.size(), by_cat["gpu_memcpy"]);
    EXPECT_EQ(t.memsets.size(), by_cat["gpu_memset"]);
    EXPECT_EQ(t.syncs.size(), by_cat["cuda_sync"]);
    EXPECT_EQ(t.api_calls.size(), by_cat["cuda_runtime"] + by_cat["cuda_driver"]);
    EXPECT_EQ(t.ranges.size(),
              by_cat["user_annotation"] + by_cat["gpu_user_annotation"] + by_cat["cpu_op"] + by_cat["python_function"]);
    int64_t imported_bytes = 0;
    for (int64_t b : t.memcpys.bytes) imported_bytes += b;
    EXPECT_EQ(imported_bytes, copied_bytes);
    EXPECT_GT(t.kernels.size(), 0u);
    // kineto_compare_test lacks the kernel of correlation 1972583 (in kineto_compare_base) while its
    // cudaLaunchKernel and a later cudaDeviceSynchronize are there: one lost GPU record.
    const bool lost_kernel = entry.path().filename() == "kineto_compare_test.json.gz";
    EXPECT_EQ(t.quality.Get(Quality::kUnmatchedLaunch), lost_kernel ? 1u : 0u) << entry.path();
    EXPECT_EQ(t.quality.HasErrors(), lost_kernel) << entry.path();
    EXPECT_EQ(t.quality.Get(Quality::kMalformedEvent), 0u);
    EXPECT_EQ(t.metadata.at("source_format"), "kineto_json");
  }
  EXPECT_GE(files, 3);
}

// Events straddle the 1 MiB read buffer, names carry escapes at every offset, and one name is
// larger than the buffer (it has to grow).
TEST(KinetoStreaming, EventsAcrossReadBuffersAndAHugeName) {
  TempDir dir;
  std::ostringstream out;
  out << "{\"traceEvents\": [\n";
  const int n = 20000;
  std::string huge(1500000, 'x');
  for (int i = 0; i < n; ++i) {
    std::string name = "k" + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'a') + "\\\"q\\\\";
    if (i == n / 2) name = huge;
    out << (i ? ",\n" : "") << "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" << name
        << "\", \"pid\": 0, \"tid\": 7, "
        << "\"ts\": " << i << "." << (i % 1000) << ", \"dur\": 1.5, \"args\": {\"device\": 0, \"stream\": 7, "
        << "\"correlation\": " << i << ", \"grid\": [1, 1, 1], \"block\": [32, 1, 1]}}";
  }
  out << "\n]}\n";
  std::string path = dir.Write("many.json", out.str());
  Trace t;
  Status s = Import(path, t);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(t.kernels.size(), static_cast<size_t>(n));
  for (int i : {0, 1, 777, n / 2, n - 1}) {
    Kernel k = t.kernels.Row(static_cast<size_t>(i));
    EXPECT_EQ(k.correlation, i);
    EXPECT_EQ(k.start, int64_t{i} * 1000 + (i % 1000) * (i % 1000 < 10 ? 100 : i % 1000 < 100 ? 10 : 1));
  }
  EXPECT_EQ(t.Name(t.kernels.Row(1).name), "k1a\"q\\");
  EXPECT_EQ(t.Name(t.kernels.Row(n / 2).name).size(), huge.size());
}

TEST(KinetoBadInput, EmptyFile) {
  TempDir dir;
  ExpectFailure(dir.Write("empty.json", ""), "empty");
  ExpectFailure(dir.Write("blank.json", " \n\t "), "white space");
  Trace t;
  Status s = ImportKineto(dir.Write("empty2.json", ""), &t);
  EXPECT_NE(s.message().find("no JSON content"), std::string::npos) << s.message();
}

TEST(KinetoBadInput, TruncatedJson) {
  TempDir dir;
  std::string text = ReadAll(Fixture("new_generation.json"));
  ExpectFailure(dir.Write("cut.json", text.substr(0, text.size() / 2)), "truncated JSON");
  ExpectFailure(dir.Write("cut_end.json", text.substr(0, text.rfind(']'))), "truncated JSON");
  ExpectFailure(dir.Write("no_close.json", "[{\"ph\": \"X\"}, "), "truncated JSON");
}

TEST(KinetoBadInput, TruncatedAndCorruptGzip) {
  TempDir dir;
  std::string gz = dir.WriteGzip("whole.json.gz", ReadAll(Fixture("new_generation.json")));
  std::string bytes = ReadAllRaw(gz);
  ExpectFailure(dir.Write("cut.json.gz", bytes.substr(0, bytes.size() - 6)), "gzip");
  ExpectFailure(dir.Write("half.json.gz", bytes.substr(0, bytes.size() / 2)), "truncated");
  // A broken CRC is only seen at the very end, after all the JSON has been read (the file is
  // large enough that format detection, which reads the first 4 KiB, does not get there).
  std::string big = "[";
  for (int i = 0; i < 5000; ++i) {
    big += (i ? ",\n" : "") + std::string(R"({"ph": "X", "cat": "cpu_op", "name": "op)") + std::to_string(i) +
           R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) + R"(, "dur": 1})";
  }
  std::string big_gz = ReadAllRaw(dir.WriteGzip("big.json.gz", big + "]"));
  std::string bad_crc = big_gz;
  bad_crc[big_gz.size() - 8] = static_cast<char>(~bad_crc[big_gz.size() - 8]);
  std::string path = dir.Write("bad_crc.json.gz", bad_crc);
  ExpectFailure(path, "corrupt gzip data (incorrect data check)");
  Trace t;
  Status s = ImportKineto(path, &t);
  EXPECT_EQ(s.message(), path + ": corrupt gzip data (incorrect data check)");
  std::string corrupt = bytes;
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 16; ++i) corrupt[i] = static_cast<char>(~corrupt[i]);
  ExpectFailure(dir.Write("corrupt.json.gz", corrupt), "gzip");
}

TEST(KinetoBadInput, NoEvents) {
  TempDir dir;
  ExpectFailure(dir.Write("no_events.json", R"({"schemaVersion": 1, "traceName": "x"})"), "no trace events");
  ExpectFailure(dir.Write("empty_array.json", "[]"), "no trace events");
  ExpectFailure(dir.Write("empty_events.json", R"({"traceEvents": []})"), "no trace events");
  ExpectFailure(dir.Write("only_metadata.json", R"([{"name": "thread_name", "ph": "M", "pid": 1, "tid": 1,
      "args": {"name": "main"}}])"),
                "no trace events");
}

TEST(KinetoBadInput, NotAnObjectOrArray) {
  TempDir dir;
  ExpectFailure(dir.Write("number.json", "42"), "not a trace");
  Trace t;
  Status s = ImportKineto(dir.Write("number2.json", "42"), &t);
  EXPECT_NE(s.message().find("not an object or an array"), std::string::npos) << s.message();
  ExpectFailure(dir.Write("events_object.json", R"({"traceEvents": {"ph": "X"}})"), "\"traceEvents\" is not an array");
}

TEST(KinetoBadInput, DeepNestingIsAnErrorNotACrash) {
  TempDir dir;
  ExpectFailure(dir.Write("deep.json", std::string(100000, '[')), "nested deeper than 512 levels");
  std::string deep_event =
      "{\"traceEvents\": [{\"ph\": \"X\", \"args\": " + std::string(600, '[') + std::string(600, ']') + "}]}";
  ExpectFailure(dir.Write("deep_event.json", deep_event), "nested deeper than 512 levels");
}

TEST(KinetoBadInput, InvalidJson) {
  TempDir dir;
  ExpectFailure(
      dir.Write("bad_literal.json", R"([{"ph": "X", "cat": "kernel", "ts": 1, "dur": 1, "args": {"x": tru}}])"),
      "(in the event at byte 1): Problem while parsing an atom starting with the letter 't'");
  ExpectFailure(dir.Write("bad_number.json", R"([{"ph": "X", "cat": "kernel", "ts": 01, "dur": 1}])"), "invalid JSON");
  ExpectFailure(dir.Write("missing_comma.json", R"([{"ph": "X"} {"ph": "X"}])"), "expected ',' or ']'");
  ExpectFailure(dir.Write("missing_colon.json", R"([{"ph" "X"}])"), "invalid JSON");
  ExpectFailure(dir.Write("mismatched.json", R"([{"ph": "X"]])"), "closes");
  ExpectFailure(dir.Write("trailing_comma.json", R"({"traceEvents": [{"ph": "X"}],})"), "expected a member name");
  ExpectFailure(dir.Write("garbage_after.json", R"([{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 1}] xyz)"),
                "after the top-level value");
  ExpectFailure(dir.Write("bad_member.json", R"({"traceName": nope, "traceEvents": []})"), "invalid JSON");
}

TEST(KinetoBadInput, InvalidUtf8InANameImports) {
  TempDir dir;
  std::string path = dir.Write("utf8.json",
                               "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"bad\xC3\x28name\xFF\", "
                               "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2}]");
  Trace t;
  Status s = Import(path, t);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.Name(t.kernels.Row(0).name), "bad\xEF\xBF\xBD(name\xEF\xBF\xBD");  // U+FFFD for each bad byte
  EXPECT_EQ(t.quality.Get(Quality::kInvalidUtf8), 1u);                           // one event repaired
  EXPECT_EQ(t.quality.Total(), 1u);
}

TEST(KinetoBadInput, DepthLimitFollowsTheOption) {
  TempDir dir;
  std::string path = dir.Write("nested.json",
                               "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1, \"args\": "
                               "{\"a\": [[[[1]]]]}}]");
  Trace t;
  ImportOptions tight;
  tight.max_json_depth = 5;  // array, event, args, then 4 arrays = 7 levels
  Status s = ImportTrace(path, tight, &t);
  EXPECT_NE(s.message().find("nested deeper than 5 levels"), std::string::npos) << s.message();
  tight.max_json_depth = 7;
  EXPECT_TRUE(ImportTrace(path, tight, &t).ok());
}

// The UTF-8 rules of strings.h, which FinalizeTrace applies to names from every format.
TEST(Utf8, ValidatesAndRepairsByteByByte) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // e-acute, euro sign, an emoji
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));                             // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));                         // UTF-16 surrogate D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                     // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));                             // truncated sequence
  EXPECT_EQ(RepairUtf8("a\xE2\x82"
                       "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");                                 // each bad byte -> U+FFFD
  EXPECT_EQ(RepairUtf8("\xC3\xA9"), "\xC3\xA9");  // valid text is unchanged
}

}  // namespace
}  // namespace tg
