// The legacy autograd profiler's Chrome trace, as PyTorch without Kineto writes it (Debian's
// torch 1.13: torch.profiler.profile(...).export_chrome_trace): a bare array of 'X' events
// without "cat", every one on pid "CPU functions". The fixture was written by that torch
// (tests/python/torch_workload.py); it reads as a CPU-only trace whose iterations are its steps.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/summary.h"

namespace tg {
namespace {

const std::string kFixture = std::string(TRACEGATE_FIXTURES_DIR) + "/kineto/legacy_autograd_profiler.json";

TEST(KinetoLegacy, DebianTorchTraceIsACpuOnlyTraceWithProfilerSteps) {
  Trace t;
  ASSERT_TRUE(ImportTrace(kFixture, &t).ok());
  // All 81 entries are CPU ops: ranges, nothing skipped, no device activity.
  EXPECT_EQ(t.ranges.size(), 81u);
  EXPECT_EQ(t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.syncs.size() + t.api_calls.size(), 0u);
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 0u);
  EXPECT_EQ(t.metadata.at(std::string(meta::kProducer)),
            "PyTorch profiler without Kineto (legacy autograd profiler trace)");
  const StringId step2 = t.strings.Find("ProfilerStep#2");
  ASSERT_NE(step2, StringTable::kNotFound);
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    EXPECT_EQ(t.Name(t.ranges.domain[i]), "cpu_op");
    if (t.ranges.name[i] != step2) continue;
    EXPECT_EQ(t.ranges.start[i], 641000);  // "ts": 641, "dur": 24 (microseconds)
    EXPECT_EQ(t.ranges.end[i], 665000);
  }

  IterationAnalysis it;
  ASSERT_TRUE(AnalyzeIterations(t, IterationOptions{}, &it).ok());
  EXPECT_TRUE(it.from_markers);
  ASSERT_EQ(it.iterations.size(), 3u);
  EXPECT_EQ(it.iterations[0].name, "ProfilerStep#1");
  EXPECT_EQ(it.iterations[2].name, "ProfilerStep#3");
  EXPECT_FALSE(Summarize(t, AnalyzeOptions{}).no_device_activity.empty());
}

TEST(KinetoLegacy, OnlyTheLegacyPidMakesAnEventWithoutCategoryACpuOp) {
  const std::string path = testing::TempDir() + "/kineto_legacy_mixed.json";
  std::ofstream(path) << R"([
    {"name": "ProfilerStep#1", "ph": "X", "ts": 10, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "other", "ph": "X", "ts": 11, "dur": 1, "tid": 1, "pid": "Spans", "args": {}},
    {"name": "cudaLaunchKernel", "ph": "X", "cat": "cuda_runtime", "ts": 12, "dur": 1, "pid": 7, "tid": 7,
     "args": {"correlation": 1}}])";
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());
  EXPECT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.quality.Get(Quality::kUnknownCategorySkipped), 1u);
  EXPECT_EQ(t.metadata.at("unmodelled_categories"), "(no category) 1");
  // Not every kept event is a legacy one: the producer stays Kineto's.
  EXPECT_EQ(t.metadata.at(std::string(meta::kProducer)), "PyTorch profiler (Kineto)");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tg
