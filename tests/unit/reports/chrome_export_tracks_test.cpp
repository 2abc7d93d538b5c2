// The Chrome export's processes and tracks (reports/export/chrome_tracks.h): one test per defect
// of issue 19 (a GPU sharing a pid with a host process, names overwritten, syncs on GPU 0 and on
// the stream's track, no thread names or sort order, telemetry as one stacked counter, no
// findings) and for the Trace Event Format's rules (slices nest, ids fit 0..2^31-1, ts >= 0).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "trace_builder.h"
#include "tracegate/reports/chrome_export.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::AddApi;
using testing::AddKernel;

class ChromeTracksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracegate_chrome_tracks_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Export(const Trace& t, const ChromeExportOptions& options = {}) {
    std::string path = (dir_ / "trace.json").string();
    Status s = WriteChromeTrace(t, path, options);
    ASSERT_TRUE(s.ok()) << s.message();
    std::ifstream in(path);
    doc_ = json::parse(in);
    process_names_.clear();
    thread_names_.clear();
    for (const json& e : doc_["traceEvents"]) {
      if (e["ph"] != "M") continue;
      if (e["name"] == "process_name") process_names_.emplace(e["pid"].get<int64_t>(), e["args"]["name"]);
      if (e["name"] == "thread_name")
        thread_names_.emplace(std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>()), e["args"]["name"]);
      if (e["name"] == "process_sort_index") process_sort_[e["pid"].get<int64_t>()] = e["args"]["sort_index"];
      if (e["name"] == "thread_sort_index")
        thread_sort_[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["sort_index"];
    }
  }
  std::vector<json> Events(std::string_view ph, std::string_view cat = "") const {
    std::vector<json> out;
    for (const json& e : doc_["traceEvents"])
      if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
    return out;
  }
  // The pid whose (only) process_name is `name`; -1 when none.
  int64_t PidNamed(const std::string& name) const {
    int64_t found = -1;
    for (const auto& [pid, n] : process_names_)
      if (n == name) found = pid;
    return found;
  }
  std::string ThreadName(const json& e) const {
    auto it = thread_names_.find({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
    return it == thread_names_.end() ? "" : it->second;
  }

  fs::path dir_;
  json doc_;
  std::multimap<int64_t, std::string> process_names_;
  std::multimap<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<int64_t, int64_t> process_sort_;
  std::map<std::pair<int64_t, int64_t>, int64_t> thread_sort_;
};

// A container's pid 1 (dumb-init) and GPU 1: today both were pid 1 and GPU 1 read "dumb-init".
TEST_F(ChromeTracksTest, DevicesAndHostProcessesHaveSeparatePids) {
  Trace t;
  t.devices.push_back(Device{1, "NVIDIA H100", 132, 0, 0, 9, 0});
  t.processes.push_back(Process{1, "dumb-init"});
  t.processes.push_back(Process{2, "python"});
  AddApi(t, "cudaLaunchKernel", 1'000, 2'000, 11, /*pid=*/1, /*tid=*/1);
  AddApi(t, "cudaLaunchKernel", 1'500, 2'500, 12, /*pid=*/2, /*tid=*/2);
  AddKernel(t, "k1", 3'000, 4'000, /*device=*/1, /*stream=*/7, 11);
  AddKernel(t, "k0", 3'000, 4'000, /*device=*/0, /*stream=*/7, 12);
  Export(t);
  EXPECT_EQ(process_names_.count(1), 1u);
  EXPECT_EQ(process_names_.find(1)->second, "dumb-init");
  EXPECT_EQ(process_names_.find(2)->second, "python");
  const int64_t gpu1 = PidNamed("GPU 1 NVIDIA H100"), gpu0 = PidNamed("GPU 0");
  EXPECT_GT(gpu1, 2);
  EXPECT_GT(gpu0, 2);
  EXPECT_NE(gpu0, gpu1);
  for (const json& k : Events("X", "kernel")) EXPECT_EQ(k["pid"], k["name"] == "k1" ? gpu1 : gpu0);
  // Every pid with events has exactly one name.
  std::set<int64_t> pids;
  for (const json& e : doc_["traceEvents"])
    if (e["ph"] != "M") pids.insert(e["pid"].get<int64_t>());
  for (int64_t pid : pids) EXPECT_EQ(process_names_.count(pid), 1u) << pid;
}

// The source's process names never rename a device, and a second name of a pid is not written.
TEST_F(ChromeTracksTest, NamesAreNeverOverwritten) {
  Trace t;
  t.processes.push_back(Process{0, "swapper"});  // a host pid equal to a device id
  t.processes.push_back(Process{0, "renamed"});
  t.processes.push_back(Process{77, "no events"});
  AddApi(t, "cudaLaunchKernel", 1'000, 2'000, 11, /*pid=*/0, /*tid=*/5);
  AddKernel(t, "k", 3'000, 4'000, /*device=*/0, /*stream=*/7, 11);
  Export(t);
  EXPECT_EQ(process_names_.count(0), 1u);
  EXPECT_EQ(process_names_.find(0)->second, "swapper");
  EXPECT_EQ(process_names_.count(77), 0u);  // no events: no empty process
  EXPECT_EQ(PidNamed("GPU 0"), Events("X", "kernel")[0]["pid"]);
  for (const auto& [pid, name] : process_names_) EXPECT_EQ(process_names_.count(pid), 1u) << name;
  for (const auto& [track, name] : thread_names_) EXPECT_EQ(thread_names_.count(track), 1u) << name;
}

// nsys exports record every sync on device 0: a sync belongs to the device its stream ran on (in
// its process), else to its process's device; and it sits on its own track, not the stream's.
TEST_F(ChromeTracksTest, SyncsOnTheirOwnDeviceAndStreamTrack) {
  Trace t;
  Kernel k;
  k.start = 1'000;
  k.end = 9'000;
  k.name = t.strings.Intern("gemm");
  k.device = 1;
  k.stream = 15;
  k.pid = 145;
  t.kernels.Add(k);
  k.device = 0;
  k.stream = 7;
  k.pid = 144;
  t.kernels.Add(k);
  Sync s;
  s.start = 2'000;
  s.end = 9'500;
  s.device = 0;
  s.stream = 15;
  s.pid = 145;
  s.kind = SyncKind::kStreamSync;
  t.syncs.Add(s);  // overlaps the kernel on stream 15 partially
  s.stream = 161;
  s.kind = SyncKind::kStreamWaitEvent;  // a stream with no work: the process's device
  t.syncs.Add(s);
  s.stream = kUnknownId;
  s.kind = SyncKind::kContextSync;
  s.pid = 144;
  t.syncs.Add(s);
  Export(t);
  const int64_t gpu0 = PidNamed("GPU 0"), gpu1 = PidNamed("GPU 1");
  auto syncs = Events("X", "cuda_sync");
  ASSERT_EQ(syncs.size(), 3u);
  std::map<std::string, json> by_track;
  for (const json& e : syncs) by_track[ThreadName(e)] = e;
  ASSERT_TRUE(by_track.count("stream 15 sync: host waits"));
  EXPECT_EQ(by_track["stream 15 sync: host waits"]["pid"], gpu1);
  EXPECT_EQ(by_track["stream 15 sync: host waits"]["args"]["device"], 1);
  EXPECT_EQ(by_track["stream 15 sync: host waits"]["args"]["recorded device"], 0);
  EXPECT_EQ(by_track["stream 161 sync: host waits"]["pid"], gpu1);
  EXPECT_EQ(by_track["device sync: host waits"]["pid"], gpu0);
  for (const json& e : Events("X", "kernel"))
    for (const json& y : syncs)
      if (e["pid"] == y["pid"]) {
        EXPECT_NE(e["tid"], y["tid"]) << "a sync shares its stream's track";
      }
}

TEST_F(ChromeTracksTest, ThreadNamesAndSortIndices) {
  Trace t;
  t.processes.push_back(Process{300, "python3"});
  AddApi(t, "cudaLaunchKernel", 1'000, 2'000, 11, 300, 310);
  AddApi(t, "cudaLaunchKernel", 3'000, 4'000, 12, 300, 300);
  AddKernel(t, "a", 5'000, 6'000, 0, 13, 11);
  AddKernel(t, "b", 5'000, 6'000, 0, 7, 12);
  Export(t);
  const int64_t gpu = PidNamed("GPU 0");
  EXPECT_EQ(thread_names_.find({300, 300})->second, "thread 300 (main)");
  EXPECT_EQ(thread_names_.find({300, 310})->second, "thread 310");
  EXPECT_EQ(thread_names_.find({gpu, 7})->second, "stream 7");
  // Host processes before devices; the main thread first, streams by id.
  EXPECT_LT(process_sort_.at(300), process_sort_.at(gpu));
  EXPECT_LT(thread_sort_.at({300, 300}), thread_sort_.at({300, 310}));
  EXPECT_LT(thread_sort_.at({gpu, 7}), thread_sort_.at({gpu, 13}));
  // Every track with events has one name and one sort index.
  for (const json& e : doc_["traceEvents"]) {
    if (e["ph"] != "X" && e["ph"] != "s" && e["ph"] != "f") continue;
    std::pair<int64_t, int64_t> track{e["pid"], e["tid"]};
    EXPECT_EQ(thread_names_.count(track), 1u) << e.dump();
    EXPECT_EQ(thread_sort_.count(track), 1u) << e.dump();
  }
}

// Slices that overlap partially move to an overflow lane of their track; slices starting together
// are written longest first (readers keep the file order of equal timestamps).
TEST_F(ChromeTracksTest, SlicesOfATrackNest) {
  Trace t;
  AddKernel(t, "first", 1'000, 5'000, 0, 7);
  AddKernel(t, "overlapping", 4'000, 8'000, 0, 7);
  AddKernel(t, "short", 10'000, 11'000, 0, 7);
  AddKernel(t, "long", 10'000, 20'000, 0, 7);
  Export(t);
  std::map<std::string, json> k;
  std::vector<std::string> order;
  for (const json& e : Events("X", "kernel")) {
    k[e["name"]] = e;
    order.push_back(e["name"]);
  }
  EXPECT_EQ(k["first"]["tid"], 7);
  EXPECT_NE(k["overlapping"]["tid"], 7);
  EXPECT_EQ(k["overlapping"]["pid"], k["first"]["pid"]);
  EXPECT_EQ(ThreadName(k["overlapping"]), "stream 7 (overlapping 1)");
  EXPECT_EQ(k["long"]["tid"], 7);
  EXPECT_EQ(k["short"]["tid"], 7);
  EXPECT_LT(std::find(order.begin(), order.end(), "long"), std::find(order.begin(), order.end(), "short"));
  EXPECT_LT(thread_sort_.at({k["first"]["pid"], 7}),
            thread_sort_.at({k["overlapping"]["pid"], k["overlapping"]["tid"]}));
}

// Kineto writes 32-bit pthread ids as negative tids; Perfetto reads pid and tid as uint32 and a
// tid of 0 as "no tid".
TEST_F(ChromeTracksTest, IdsOutsideTheRangeReadersTakeGetFreshOnes) {
  Trace t;
  AddApi(t, "cudaEventQuery", 1'000, 2'000, 11, 2910249, -549452224);
  AddApi(t, "cudaEventQuery", 1'000, 2'000, 12, -1, -1);
  AddKernel(t, "on the legacy stream", 3'000, 4'000, 0, /*stream=*/0);  // Perfetto reads tid 0 as none
  Export(t);
  for (const json& e : doc_["traceEvents"]) {
    EXPECT_GE(e["pid"].get<int64_t>(), 0) << e.dump();
    EXPECT_LE(e["pid"].get<int64_t>(), 2147483647) << e.dump();
    EXPECT_GE(e["tid"].get<int64_t>(), 0) << e.dump();
    EXPECT_LE(e["tid"].get<int64_t>(), 2147483647) << e.dump();
  }
  std::set<std::string> names;
  for (const json& e : Events("X")) names.insert(ThreadName(e));
  EXPECT_TRUE(names.count("thread -549452224"));
  EXPECT_TRUE(names.count("stream 0"));
  EXPECT_NE(Events("X", "kernel")[0]["tid"], 0);
  EXPECT_EQ(PidNamed("process (source pid -1)"), Events("X")[1]["pid"]);
}

// Findings: a process of their own, a track per finding with a slice per claimed interval, and an
// instant carrying the summary.
TEST_F(ChromeTracksTest, FindingsAnnotateTheTimeline) {
  Trace t;
  AddKernel(t, "k", 1'000, 2'000, 0, 7);
  AddKernel(t, "k", 5'000, 6'000, 0, 7);
  std::vector<Finding> findings(2);
  findings[0].id = "idle_gaps";
  findings[0].title = "GPU idle between kernels";
  findings[0].priority = Priority::kHigh;
  findings[0].summary = "The GPU is idle 60% of the time.";
  findings[0].strategies = {"Use CUDA graphs"};
  findings[0].amdahl = MakeAmdahl(0.6, 2.0, "assumed", "half the idle time");
  findings[0].claim.push_back(ClaimPart{ClaimSpace::kIdle, 0.6, {{2'000, 5'000}}});
  findings[1].id = "latency_variance";
  findings[1].title = "Latency varies";
  findings[1].priority = Priority::kLow;
  Export(t, ChromeExportOptions{&findings});
  const int64_t pid = PidNamed("tracegate findings");
  ASSERT_GE(pid, 0);
  auto slices = Events("X", "finding");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["pid"], pid);
  EXPECT_EQ(slices[0]["name"], "GPU idle between kernels");
  EXPECT_EQ(slices[0]["dur"], 3.0);
  EXPECT_EQ(slices[0]["args"]["claimed time"], "idle");
  EXPECT_EQ(ThreadName(slices[0]), "#1 high: GPU idle between kernels");
  auto marks = Events("i", "finding");
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0]["s"], "t");
  EXPECT_EQ(marks[0]["args"]["summary"], "The GPU is idle 60% of the time.");
  EXPECT_EQ(marks[0]["args"]["strategy 1"], "Use CUDA graphs");
  EXPECT_EQ(marks[0]["ts"], slices[0]["ts"]);
  EXPECT_EQ(ThreadName(marks[1]), "#2 low: Latency varies");
  EXPECT_EQ(process_sort_.at(pid), 0);  // findings first, above the timeline they annotate
}

}  // namespace
}  // namespace tg
