#include "tracegate/reports/chrome_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "tracegate/analyzer/import.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Times an order of magnitude like real CUPTI timestamps, with odd nanoseconds so that any
// rounding through a double would show.
constexpr TimeNs kBase = 1'700'000'000'123'456'789;

Trace HandBuiltTrace() {
  Trace t;
  t.devices.push_back(Device{0, "NVIDIA H200", 132, 150'000'000'000, 0, 9, 0});
  t.processes.push_back(Process{4242, "python3"});
  t.api_calls.Add(
      ApiCall{kBase, kBase + 4'321, t.strings.Intern("cudaLaunchKernel"), ApiKind::kRuntime, 4242, 4243, 101, 0});
  t.api_calls.Add(ApiCall{kBase + 5'000, kBase + 6'001, t.strings.Intern("cudaMemcpyAsync"), ApiKind::kRuntime, 4242,
                          4243, 102, 0});
  t.api_calls.Add(
      ApiCall{kBase + 7'000, kBase + 7'003, t.strings.Intern("cuMemsetD8Async"), ApiKind::kDriver, 4242, 4243, 103, 0});
  t.api_calls.Add(ApiCall{kBase + 8'000, kBase + 8'500, t.strings.Intern("cudaStreamSynchronize"), ApiKind::kRuntime,
                          4242, 4243, 104, 0});
  Kernel k;
  k.start = kBase + 10'007;
  k.end = kBase + 1'234'567'891;
  k.name = t.strings.Intern("_Z4gemmPfS_i");
  k.device = 0;
  k.stream = 7;
  k.correlation = 101;
  k.grid_x = 8;
  k.grid_y = 16;
  k.grid_z = 5;
  k.block_x = 128;
  k.block_y = 1;
  k.block_z = 1;
  k.registers = 122;
  k.shared_static = 12'000;
  k.shared_dynamic = 544;
  k.pid = 4242;
  t.kernels.Add(k);
  k.start = kBase + 20'001;
  k.end = kBase + 20'002;
  k.name = t.strings.Intern("relu");
  k.stream = 8;
  k.correlation = kUnknownId;
  t.kernels.Add(k);
  Memcpy m;
  m.start = kBase + 30'000;
  m.end = kBase + 31'999;
  m.device = 0;
  m.stream = 7;
  m.correlation = 102;
  m.bytes = 92'928;
  m.kind = CopyKind::kHtoD;
  m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  m.pid = 4242;
  t.memcpys.Add(m);
  Memset ms;
  ms.start = kBase + 40'000;
  ms.end = kBase + 40'500;
  ms.device = 0;
  ms.stream = 8;
  ms.correlation = 103;
  ms.bytes = 512;
  ms.mem_kind = MemKind::kDevice;
  ms.pid = 4242;
  t.memsets.Add(ms);
  Sync sy;
  sy.start = kBase + 41'000;
  sy.end = kBase + 42'000;
  sy.device = 0;
  sy.stream = 7;
  sy.correlation = 104;
  sy.kind = SyncKind::kStreamSync;
  sy.pid = 4242;
  t.syncs.Add(sy);
  t.ranges.Add(Range{kBase, kBase + 50'000, t.strings.Intern("ProfilerStep#1"), 0, 4242, 4243, 0, false, kUnknownId});
  t.ranges.Add(Range{kBase + 10'000, kBase + 40'000, t.strings.Intern("ProfilerStep#1"), 0, 0, 0, 0, true, 7});
  return t;
}

class ChromeExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracegate_chrome_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  json ExportAndParse(const Trace& t) {
    std::string path = (dir_ / "trace.json").string();
    Status s = WriteChromeTrace(t, path);
    EXPECT_TRUE(s.ok()) << s.message();
    std::ifstream in(path);
    return json::parse(in);  // throws (fails the test) on invalid JSON
  }

  static std::vector<json> Events(const json& doc, std::string_view ph, std::string_view cat = "") {
    std::vector<json> out;
    for (const json& e : doc["traceEvents"])
      if (e.value("ph", "") == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
    return out;
  }

  // Absolute nanoseconds from a relative microsecond value, as importers reconstruct them.
  static TimeNs Abs(const json& doc, const json& us) {
    return doc["baseTimeNanoseconds"].get<int64_t>() + std::llround(us.get<double>() * 1000.0);
  }

  fs::path dir_;
};

TEST_F(ChromeExport, WritesGpuWorkOnDeviceProcessesAndStreamThreads) {
  json doc = ExportAndParse(HandBuiltTrace());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["baseTimeNanoseconds"], kBase);
  EXPECT_EQ(doc["deviceProperties"][0]["name"], "NVIDIA H200");

  // The device's process: its own pid (not the device id, which a host process may have).
  int64_t gpu_pid = -1;
  for (const json& e : Events(doc, "M"))
    if (e["name"] == "process_name" && e["args"]["name"] == "GPU 0 NVIDIA H200") gpu_pid = e["pid"];
  EXPECT_GT(gpu_pid, 4242);
  auto kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]["name"], "_Z4gemmPfS_i");  // names as the source gave them
  EXPECT_EQ(kernels[0]["pid"], gpu_pid);
  EXPECT_EQ(kernels[0]["tid"], 7);
  const json& args = kernels[0]["args"];
  EXPECT_EQ(args["device"], 0);
  EXPECT_EQ(args["stream"], 7);
  EXPECT_EQ(args["correlation"], 101);
  EXPECT_EQ(args["grid"], json::array({8, 16, 5}));
  EXPECT_EQ(args["block"], json::array({128, 1, 1}));
  EXPECT_EQ(args["registers per thread"], 122);
  EXPECT_EQ(args["shared memory"], 12'544);
  EXPECT_EQ(kernels[1]["tid"], 8);

  auto copies = Events(doc, "X", "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["name"], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies[0]["args"]["bytes"], 92'928);
  auto memsets = Events(doc, "X", "gpu_memset");
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0]["name"], "Memset (Device)");
  auto syncs = Events(doc, "X", "cuda_sync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["name"], "Stream Sync");
  EXPECT_EQ(syncs[0]["pid"], gpu_pid);
  EXPECT_NE(syncs[0]["tid"], 7);  // not on the stream's track: it times the host waiting
  EXPECT_EQ(Events(doc, "X", "cuda_runtime").size(), 3u);
  EXPECT_EQ(Events(doc, "X", "cuda_driver").size(), 1u);
  auto host_ranges = Events(doc, "X", "user_annotation");
  ASSERT_EQ(host_ranges.size(), 1u);
  EXPECT_EQ(host_ranges[0]["pid"], 4242);
  EXPECT_EQ(host_ranges[0]["tid"], 4243);
  auto gpu_ranges = Events(doc, "X", "gpu_user_annotation");
  ASSERT_EQ(gpu_ranges.size(), 1u);
  EXPECT_EQ(gpu_ranges[0]["pid"], gpu_pid);
  // It overlaps the long kernel on stream 7 partially: the annotation, not the kernel, moves to
  // an overflow lane of the stream.
  EXPECT_NE(gpu_ranges[0]["tid"], 7);

  // Track names: one process per device, one thread per stream, host process from trace.processes.
  std::set<std::tuple<std::string, int64_t, int64_t, std::string>> meta;
  for (const json& e : Events(doc, "M"))
    if (e["args"].contains("name")) meta.emplace(e["name"], e["pid"], e["tid"], e["args"]["name"]);
  EXPECT_TRUE(meta.count({"process_name", gpu_pid, 0, "GPU 0 NVIDIA H200"}));
  EXPECT_TRUE(meta.count({"thread_name", gpu_pid, 7, "stream 7"}));
  EXPECT_TRUE(meta.count({"thread_name", gpu_pid, 8, "stream 8"}));
  EXPECT_TRUE(meta.count({"thread_name", gpu_pid, syncs[0]["tid"], "stream 7 sync: host waits"}));
  EXPECT_TRUE(meta.count({"thread_name", gpu_pid, gpu_ranges[0]["tid"], "stream 7 (overlapping 1)"}));
  EXPECT_TRUE(meta.count({"process_name", 4242, 0, "python3"}));
  EXPECT_TRUE(meta.count({"thread_name", 4242, 4243, "thread 4243"}));
}

TEST_F(ChromeExport, RelativeTimestampsReconstructExactNanoseconds) {
  Trace t = HandBuiltTrace();
  json doc = ExportAndParse(t);
  auto kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(Abs(doc, kernels[i]["ts"]), t.kernels.start[i]);
    EXPECT_EQ(Abs(doc, kernels[i]["ts"]) + std::llround(kernels[i]["dur"].get<double>() * 1000.0), t.kernels.end[i]);
  }
  // Three decimals are written even when they are zeros.
  std::ifstream in(dir_ / "trace.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"ts\":10.007,\"dur\":1234557.884"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":0.000,\"dur\":4.321"), std::string::npos);
}

TEST_F(ChromeExport, FlowsGoFromLaunchToGpuOperation) {
  json doc = ExportAndParse(HandBuiltTrace());
  auto starts = Events(doc, "s", "ac2g");
  auto finishes = Events(doc, "f", "ac2g");
  // Kernel 101, copy 102, memset 103 and the sync 104 have their calls; the uncorrelated kernel not.
  ASSERT_EQ(finishes.size(), 4u);
  ASSERT_EQ(starts.size(), 4u);
  const int64_t gpu_pid = Events(doc, "X", "kernel")[0]["pid"];
  std::set<int64_t> ids;
  for (const json& f : finishes) {
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["pid"], gpu_pid);
    ids.insert(f["id"].get<int64_t>());
  }
  EXPECT_EQ(ids, (std::set<int64_t>{101, 102, 103, 104}));
  for (const json& s : starts) {
    EXPECT_EQ(s["pid"], 4242);
    EXPECT_EQ(s["tid"], 4243);
    EXPECT_TRUE(ids.count(s["id"].get<int64_t>()));
  }
  const json& kernel_flow =
      *std::find_if(finishes.begin(), finishes.end(), [](const json& f) { return f["id"] == 101; });
  EXPECT_EQ(Abs(doc, kernel_flow["ts"]), kBase + 10'007);
  EXPECT_EQ(kernel_flow["tid"], 7);
}

TEST_F(ChromeExport, EscapesNamesAndReplacesInvalidUtf8) {
  Trace t;
  Kernel k;
  k.start = 0;
  k.end = 10;
  k.device = 0;
  k.stream = 1;
  k.name = t.strings.Intern("say \"hi\" \\ back\nslash\t\x01 caf\xC3\xA9 bad\xFF\xFE end");
  t.kernels.Add(k);
  t.ranges.Add(Range{0, 10, t.strings.Intern("</script>\"quoted\""), 0, 1, 1, 0, false, kUnknownId});
  json doc = ExportAndParse(t);
  auto kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["name"], "say \"hi\" \\ back\nslash\t\x01 caf\xC3\xA9 bad\xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(Events(doc, "X", "user_annotation")[0]["name"], "</script>\"quoted\"");
}

TEST_F(ChromeExport, EmptyTraceIsValidJson) {
  Trace t;
  json doc = ExportAndParse(t);
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_EQ(doc["baseTimeNanoseconds"], 0);
}

TEST_F(ChromeExport, SamplesBecomeCounterTracksEvenBeforeTheWindow) {
  Trace t;
  Kernel k;
  k.start = 10'000;
  k.end = 20'000;
  k.device = 0;
  k.stream = 1;
  t.kernels.Add(k);
  t.samples.Add(Sample{8'500, 0, 55.0, 1980.0, -1, 1024.0, 300.5});  // before the window start
  json doc = ExportAndParse(t);
  // One counter per quantity ("power W" in Perfetto), numbers only, on the device's process.
  std::map<std::string, json> counters;
  for (const json& c : Events(doc, "C")) counters[c["name"]] = c;
  ASSERT_EQ(counters.size(), 4u);  // the memory clock was not sampled
  const int64_t gpu_pid = Events(doc, "X", "kernel")[0]["pid"];
  EXPECT_EQ(counters["power"]["args"], json({{"W", 300.5}}));
  EXPECT_EQ(counters["temperature"]["args"], json({{"C", 55.0}}));
  EXPECT_EQ(counters["SM clock"]["args"], json({{"MHz", 1980.0}}));
  EXPECT_EQ(counters["memory used"]["args"], json({{"MB", 1024.0}}));
  for (const auto& [name, c] : counters) {
    EXPECT_EQ(c["pid"], gpu_pid) << name;
    EXPECT_EQ(Abs(doc, c["ts"]), 8'500) << name;
    EXPECT_GE(c["ts"].get<double>(), 0.0) << name;  // the base is the earliest time written
  }
  EXPECT_EQ(doc["baseTimeNanoseconds"], 8'500);
}

TEST_F(ChromeExport, FailedWriteLeavesNoFile) {
  fs::path missing = dir_ / "no_such_dir" / "trace.json";
  Status s = WriteChromeTrace(HandBuiltTrace(), missing.string());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message().rfind(missing.string() + ": ", 0), 0u) << s.message();
  EXPECT_FALSE(fs::exists(missing));
  // A successful write leaves only the file itself (no temp file beside it).
  ASSERT_TRUE(WriteChromeTrace(HandBuiltTrace(), (dir_ / "ok.json").string()).ok());
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u);
}

// Acceptance: our Kineto importer reads the export back with the same GPU work and times.
TEST_F(ChromeExport, RoundTripsThroughKinetoImporter) {
  Trace t = HandBuiltTrace();
  std::string path = (dir_ / "trace.json").string();
  ASSERT_TRUE(WriteChromeTrace(t, path).ok());
  Trace back;
  Status s = ImportTrace(path, &back);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(back.kernels.size(), t.kernels.size());
  auto kernel_rows = [](const Trace& tr) {
    std::vector<std::tuple<TimeNs, TimeNs, std::string, int32_t, int64_t, int64_t, int32_t, int32_t, int32_t>> rows;
    for (size_t i = 0; i < tr.kernels.size(); ++i)
      rows.emplace_back(tr.kernels.start[i], tr.kernels.end[i], std::string(tr.Name(tr.kernels.name[i])),
                        tr.kernels.device[i], tr.kernels.stream[i], tr.kernels.correlation[i], tr.kernels.grid_y[i],
                        tr.kernels.block_x[i], tr.kernels.registers[i]);
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  EXPECT_EQ(kernel_rows(back), kernel_rows(t));
  ASSERT_EQ(back.memcpys.size(), 1u);
  Memcpy m = back.memcpys.Row(0);
  EXPECT_EQ(m.start, t.memcpys.start[0]);
  EXPECT_EQ(m.end, t.memcpys.end[0]);
  EXPECT_EQ(m.bytes, 92'928);
  EXPECT_EQ(m.kind, CopyKind::kHtoD);
  EXPECT_EQ(m.src_kind, MemKind::kPageable);
  EXPECT_EQ(m.dst_kind, MemKind::kDevice);
  ASSERT_EQ(back.memsets.size(), 1u);
  EXPECT_EQ(back.memsets.start[0], t.memsets.start[0]);
  EXPECT_EQ(back.memsets.bytes[0], 512);
  EXPECT_EQ(back.syncs.size(), 1u);
  EXPECT_EQ(back.api_calls.size(), t.api_calls.size());
  EXPECT_EQ(back.ranges.size(), t.ranges.size());
  for (size_t i = 0; i < back.ranges.size(); ++i) {  // a GPU-projected range keeps its device as pid
    if (back.ranges.on_gpu[i]) {
      EXPECT_EQ(back.ranges.pid[i], 0);
    }
  }
  EXPECT_EQ(back.Window(), t.Window());
}

}  // namespace
}  // namespace tg
