// The injected collector's environment.
#include "options.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace tg::cupti {
namespace {

CollectorOptions Read(const std::map<std::string, std::string>& env, std::vector<std::string>* warnings) {
  return ReadCollectorOptions(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

TEST(CuptiOptions, DefaultsWithoutEnvironmentElseEveryVariable) {
  std::vector<std::string> warnings;
  CollectorOptions d = Read({}, &warnings);
  CollectorOptions o = Read({{"TRACEGATE_PARTS_DIR", "/tmp/p"},
                             {"TRACEGATE_FLUSH_MS", "250"},
                             {"TRACEGATE_DRIVER_API", "0"},
                             {"TRACEGATE_BUFFER_MB", "4"},
                             {"TRACEGATE_BUFFER_CAP_MB", "64"}},
                            &warnings);
  EXPECT_TRUE(warnings.empty());
  // {parts dir, flush ms, driver API, buffer MB, cap MB}: defaults, then as set.
  auto fields = [](const CollectorOptions& c) {
    const RecordingOptions& r = c.recording;
    return std::make_tuple(c.parts_dir, r.flush_ms, r.driver_api, r.buffer_mb, r.buffer_cap_mb);
  };
  EXPECT_EQ(fields(d), std::make_tuple(std::string(), int64_t{1000}, true, int64_t{8}, int64_t{512}));
  EXPECT_EQ(fields(o), std::make_tuple(std::string("/tmp/p"), int64_t{250}, false, int64_t{4}, int64_t{64}));
}

TEST(CuptiOptions, BadValuesKeepTheDefaultAndWarnOnceEach) {
  std::vector<std::string> warnings;
  CollectorOptions o = Read({{"TRACEGATE_FLUSH_MS", "soon"},
                             {"TRACEGATE_BUFFER_MB", "0"},
                             {"TRACEGATE_BUFFER_CAP_MB", "-5"},
                             {"TRACEGATE_DRIVER_API", "no"}},
                            &warnings);
  EXPECT_EQ(o.recording.flush_ms, 1000);
  EXPECT_EQ(o.recording.buffer_mb, 8);
  EXPECT_EQ(o.recording.buffer_cap_mb, 512);
  EXPECT_TRUE(o.recording.driver_api);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "TRACEGATE_FLUSH_MS=soon is not an integer from 1 to 3600000; using 1000");
  EXPECT_EQ(warnings[3], "TRACEGATE_DRIVER_API=no is neither 0 nor 1; recording driver API calls");
}

TEST(CuptiOptions, CapBelowOneBufferIsSaid) {
  std::vector<std::string> warnings;
  CollectorOptions o = Read({{"TRACEGATE_BUFFER_MB", "16"}, {"TRACEGATE_BUFFER_CAP_MB", "8"}}, &warnings);
  EXPECT_EQ(o.recording.buffer_cap_mb, 8);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "TRACEGATE_BUFFER_CAP_MB=8 is below TRACEGATE_BUFFER_MB=16; the pool holds one buffer");
}

// The recording tiers: the default records what the analysis reads, every node of a CUDA graph,
// the whole run; each can be changed by its variable, which `record` sets from its options.
TEST(CuptiOptions, TiersAndCaptureWindow) {
  std::vector<std::string> warnings;
  CollectorOptions d = Read({}, &warnings);
  EXPECT_EQ(d.recording.api, ApiRecording::kAnalysis);
  EXPECT_EQ(d.recording.graph_trace, GraphTrace::kNode);
  EXPECT_EQ(d.recording.capture_nvtx, "");
  EXPECT_EQ(d.recording.skip_ranges, 0);
  EXPECT_EQ(d.recording.record_ranges, 0);
  CollectorOptions o = Read({{"TRACEGATE_API", "all"},
                             {"TRACEGATE_CUDA_GRAPH_TRACE", "graph"},
                             {"TRACEGATE_CAPTURE_RANGE", "nvtx:step"},
                             {"TRACEGATE_ITERATIONS", "20:10"}},
                            &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(o.recording.api, ApiRecording::kAll);
  EXPECT_EQ(o.recording.graph_trace, GraphTrace::kGraph);
  EXPECT_EQ(o.recording.capture_nvtx, "step");
  EXPECT_EQ(o.recording.skip_ranges, 20);
  EXPECT_EQ(o.recording.record_ranges, 10);
  // `record` always sets them; empty means the default.
  o = Read({{"TRACEGATE_API", "default"}, {"TRACEGATE_CUDA_GRAPH_TRACE", "node"}, {"TRACEGATE_CAPTURE_RANGE", ""},
            {"TRACEGATE_ITERATIONS", ""}},
           &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(o.recording.api, ApiRecording::kAnalysis);
  EXPECT_EQ(o.recording.capture_nvtx, "");
}

TEST(CuptiOptions, BadTierValuesKeepTheDefaultAndSaySo) {
  std::vector<std::string> warnings;
  CollectorOptions o = Read({{"TRACEGATE_API", "some"},
                             {"TRACEGATE_CUDA_GRAPH_TRACE", "nodes"},
                             {"TRACEGATE_CAPTURE_RANGE", "step"},
                             {"TRACEGATE_ITERATIONS", "5"}},
                            &warnings);
  EXPECT_EQ(o.recording.api, ApiRecording::kAnalysis);
  EXPECT_EQ(o.recording.graph_trace, GraphTrace::kNode);
  EXPECT_EQ(o.recording.capture_nvtx, "");
  EXPECT_EQ(o.recording.record_ranges, 0);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "TRACEGATE_API=some is neither default nor all; recording the default API calls");
  EXPECT_EQ(warnings[1], "TRACEGATE_CUDA_GRAPH_TRACE=nodes is neither node nor graph; recording every graph node");
  EXPECT_EQ(warnings[2],
            "TRACEGATE_CAPTURE_RANGE=step: capture range 'step' is not nvtx:NAME (an NVTX range's name); recording the "
            "whole run");
  EXPECT_EQ(warnings[3],
            "TRACEGATE_ITERATIONS=5: iterations '5' is not K:N (skip K ranges, then record N; K >= 0, N >= 1); "
            "recording every range");
  warnings.clear();
  o = Read({{"TRACEGATE_ITERATIONS", "1:2"}}, &warnings);
  EXPECT_EQ(o.recording.record_ranges, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "TRACEGATE_ITERATIONS=1:2 counts the ranges of TRACEGATE_CAPTURE_RANGE, which is not set; recording the "
            "whole run");
}

}  // namespace
}  // namespace tg::cupti
