// The pattern matrix: every rule on synthetic traces built so the metric is known exactly, once
// just past its threshold (fires) and once just short of it (does not). Iterations are markers
// named "iteration" of 100,000 ns unless a test says otherwise.
#include "tracegate/analyzer/findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "analysis_test_util.h"
#include "temp_file.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddCopy;
using testing::AddKernel;
using testing::AddRange;
using testing::AddSample;
using testing::AddSync;

constexpr TimeNs kIter = 100'000;

Analysis Analyze(const Trace& t, const AnalysisConfig& config = {}) { return testing::AnalyzeOk(t, config); }
const Finding* Find(const Analysis& a, std::string_view id) { return testing::FindFinding(a, id); }

bool Fires(const Trace& t, std::string_view id, const AnalysisConfig& config = {}) {
  return Find(Analyze(t, config), id) != nullptr;
}

// One iteration marker [0, kIter) with one kernel covering [0, busy): idle is kIter - busy.
Trace IdleTrace(TimeNs busy) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, "gemm_kernel", 0, busy);
  return t;
}

TEST(Rules, IdleGapsFiresAt12PercentNotAt8) {
  Analysis a = Analyze(IdleTrace(88'000));  // idle 12,000 / 100,000 = 0.12 > 0.10
  const Finding* f = Find(a, "idle_gaps");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->priority, Priority::kMedium);  // +6.4% predicted: between kMediumGainPct and kHighGainPct
  ASSERT_FALSE(f->evidence.empty());
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.12);
  EXPECT_DOUBLE_EQ(f->evidence[0].threshold, 0.10);
  // Amdahl with the assumed S = 2: 1 / (0.88 + 0.12 / 2) = 1 / 0.94.
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.12);
  EXPECT_DOUBLE_EQ(f->amdahl.speedup, 2.0);
  EXPECT_NEAR(f->amdahl.overall, 1.0 / 0.94, 1e-12);
  EXPECT_NEAR(f->amdahl.upper_bound, 1.0 / 0.88, 1e-12);
  EXPECT_EQ(f->amdahl.basis, "assumed");
  EXPECT_FALSE(Fires(IdleTrace(92'000), "idle_gaps"));  // idle 0.08
}

TEST(Rules, H2dBoundFiresAbove20Percent) {
  auto trace = [](TimeNs copy) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, copy);
    AddKernel(t, "gemm_kernel", copy, kIter);
    return t;
  };
  Analysis a = Analyze(trace(21'000));  // h2d 0.21 > 0.20
  const Finding* f = Find(a, "h2d_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.21);
  ASSERT_FALSE(f->involved.empty());
  EXPECT_EQ(f->involved[0].kind, "copy");
  EXPECT_FALSE(Fires(trace(19'000), "h2d_bound"));
}

TEST(Rules, SlowPostFiresAbove25Percent) {
  auto trace = [](TimeNs post) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddKernel(t, "gemm_kernel", 0, kIter - post);
    AddRange(t, "post", kIter - post, kIter, 100, 100, 1);
    return t;
  };
  Analysis a = Analyze(trace(26'000));
  const Finding* f = Find(a, "slow_post");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.26);
  EXPECT_FALSE(Fires(trace(24'000), "slow_post"));
}

TEST(Rules, SingleStreamFiresOnSerialCopiesOnOneStream) {
  auto trace = [](TimeNs copy, int64_t kernel_stream) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, copy, MemKind::kPinned, MemKind::kDevice, 0, 7);
    AddKernel(t, "gemm_kernel", copy, kIter, 0, kernel_stream);
    return t;
  };
  Analysis a = Analyze(trace(6'000, 7));  // copies 0.06 >= 0.05, one stream
  const Finding* f = Find(a, "single_stream");
  ASSERT_NE(f, nullptr);
  // Overlap could hide min(copy 6,000, kernel 94,000) = 6,000 ns: P = 0.06, S unbounded.
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.06);
  EXPECT_NEAR(f->amdahl.overall, 1.0 / 0.94, 1e-12);
  EXPECT_FALSE(Fires(trace(4'000, 7), "single_stream"));  // 0.04
  EXPECT_FALSE(Fires(trace(6'000, 8), "single_stream"));  // two streams
}

// Two devices, one stream each: the copy can hide behind at most the kernels' wall time (40,000
// ns, both devices at once), not their summed time (80,000).
TEST(Rules, SingleStreamHidesAtMostTheKernelsWallTime) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, 60'000);
  AddKernel(t, "gemm_kernel", 60'000, kIter, 0, 7);
  AddKernel(t, "gemm_kernel", 60'000, kIter, 1, 7);
  const Finding* f = nullptr;
  Analysis a = Analyze(t);
  ASSERT_NE(f = Find(a, "single_stream"), nullptr);
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.4);  // min(copy 60,000, kernels 40,000) / 100,000
}

TEST(Rules, PageableCopiesFireAt3PercentNotAt1) {
  auto trace = [](TimeNs copy) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, copy, MemKind::kPageable, MemKind::kDevice);
    AddKernel(t, "gemm_kernel", copy, kIter, 0, 8);
    return t;
  };
  const Finding* f = nullptr;
  Analysis a = Analyze(trace(3'000));
  ASSERT_NE(f = Find(a, "pageable_copies"), nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.03);
  EXPECT_FALSE(Fires(trace(1'000), "pageable_copies"));
}

TEST(Rules, SmallCopiesFireAtThreePerIteration) {
  auto trace = [](int copies) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    for (int i = 0; i < copies; ++i) AddCopy(t, CopyKind::kHtoD, 1024, i * 1'000, i * 1'000 + 1'000);
    AddKernel(t, "gemm_kernel", 10'000, kIter, 0, 8);
    return t;
  };
  Analysis a = Analyze(trace(3));
  const Finding* f = Find(a, "small_copies");
  ASSERT_NE(f, nullptr);
  // 3 copies of 1,000 ns: share 0.03; merged into one they would cost one: S = 3.
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.03);
  EXPECT_DOUBLE_EQ(f->amdahl.speedup, 3.0);
  EXPECT_FALSE(Fires(trace(2), "small_copies"));
}

TEST(Rules, SyncInLoopFiresAboveOnePerIteration) {
  auto trace = [](int syncs) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddKernel(t, "gemm_kernel", 0, 50'000);
    for (int i = 0; i < syncs; ++i) AddSync(t, SyncKind::kStreamSync, 60'000 + i * 10'000, 65'000 + i * 10'000);
    return t;
  };
  Analysis a = Analyze(trace(2));
  const Finding* f = Find(a, "sync_in_loop");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 2.0);
  EXPECT_DOUBLE_EQ(f->evidence[1].value, 0.10);  // 2 x 5,000 ns of 100,000
  EXPECT_FALSE(Fires(trace(1), "sync_in_loop"));
}

TEST(Rules, SyncInLoopCountsApiCallsWhenThereAreNoSyncRecords) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, "gemm_kernel", 0, 50'000);
  AddApi(t, "cudaDeviceSynchronize", 60'000, 70'000, 1);
  AddApi(t, "cudaStreamSynchronize", 80'000, 90'000, 2);
  EXPECT_TRUE(Fires(t, "sync_in_loop"));
}

TEST(Rules, LaunchBoundFiresOnManyShortKernelsWithGaps) {
  auto trace = [](TimeNs dur) {
    Trace t;
    AddRange(t, "iteration", -10'000, 30 * 10'000);
    // Each launch call returns 1 us before its kernel starts, after the previous kernel ended:
    // every gap waits for the host (host_launch).
    for (int i = 0; i < 30; ++i) {
      AddApi(t, "cudaLaunchKernel", i * 10'000 - 4'000, i * 10'000 - 1'000, i + 1);
      AddKernel(t, "tiny_kernel", i * 10'000, i * 10'000 + dur, 0, 7, i + 1);
    }
    return t;
  };
  // 30 kernels of 5 us every 10 us: all short, idle 0.5.
  Analysis a = Analyze(trace(5'000));
  const Finding* f = Find(a, "launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 1.0);
  EXPECT_DOUBLE_EQ(f->evidence[1].value, 30.0);
  EXPECT_FALSE(Fires(trace(9'900), "launch_bound"));  // 9.9 us: short, but idle only 1%
}

TEST(Rules, TransformKernelsFireAt12PercentOfKernelTime) {
  auto trace = [](TimeNs transpose) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddKernel(t, "gemm_kernel", 0, kIter - transpose);
    AddKernel(t, "transpose_kernel", kIter - transpose, kIter);
    return t;
  };
  Analysis a = Analyze(trace(12'000));
  const Finding* f = Find(a, "transform_kernels");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->heuristic);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.12);
  EXPECT_FALSE(Fires(trace(8'000), "transform_kernels"));
}

// Iterations back to back with the given latencies (us); each is one kernel.
Trace LatencyTrace(const std::vector<int>& latencies_us) {
  Trace t;
  TimeNs at = 0;
  for (int us : latencies_us) {
    AddRange(t, "iteration", at, at + us * 1'000);
    AddKernel(t, "gemm_kernel", at, at + us * 1'000);
    at += us * 1'000;
  }
  return t;
}

TEST(Rules, UnstableFiresWhenCvAbove015) {
  // 100,100,100,100,200: mean 120, population std sqrt((4 x 400 + 6400) / 5) = 40, CV 1/3.
  Analysis a = Analyze(LatencyTrace({100, 100, 100, 100, 200}));
  const Finding* f = Find(a, "unstable");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->evidence[0].value, 1.0 / 3.0, 1e-12);
  // Excess over the median: 100 us of 600 us -> P = 1/6, S unbounded, overall 1.2.
  EXPECT_NEAR(f->amdahl.share, 1.0 / 6.0, 1e-12);
  EXPECT_NEAR(f->amdahl.overall, 1.2, 1e-12);
  // 100 x4 and 110: mean 102, std sqrt((4 x 4 + 64) / 5) = 4, CV 0.039.
  EXPECT_FALSE(Fires(LatencyTrace({100, 100, 100, 100, 110}), "unstable"));
}

TEST(Rules, DriftFiresOnARisingTrend) {
  std::vector<int> rising, flat(10, 100);
  for (int i = 0; i < 10; ++i) rising.push_back(100 + 2 * i);
  // Slope 2 us per iteration over 9 steps against a mean of 109 us: rise 18/109 = 0.165, r = 1.
  Analysis a = Analyze(LatencyTrace(rising));
  const Finding* f = Find(a, "drift");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->evidence[0].value, 18.0 / 109.0, 1e-9);
  EXPECT_NEAR(f->evidence[1].value, 1.0, 1e-9);
  EXPECT_FALSE(Fires(LatencyTrace(flat), "drift"));
  EXPECT_FALSE(Fires(LatencyTrace({100, 102, 104}), "drift"));  // too few iterations
}

TEST(Rules, ThrottlingFiresWhenClockFallsAsTemperatureRises) {
  auto trace = [](bool falls) {
    Trace t = IdleTrace(kIter);
    for (int i = 0; i < 6; ++i) AddSample(t, i * 10'000, 60 + 4 * i, falls ? 1980 - 56 * i : 1980);
    return t;
  };
  // Clock 1980 -> 1700 MHz: drop 280 / 1980 = 0.141 >= 0.10, r(temperature, clock) = -1.
  Analysis a = Analyze(trace(true));
  const Finding* f = Find(a, "throttling");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->evidence[0].value, 280.0 / 1980.0, 1e-12);
  EXPECT_NEAR(f->evidence[1].value, -1.0, 1e-12);
  // Measured S: highest clock over the mean clock (1980 / 1840) for the GPU share (1.0).
  EXPECT_NEAR(f->amdahl.speedup, 1980.0 / 1840.0, 1e-12);
  EXPECT_FALSE(Fires(trace(false), "throttling"));
}

TEST(Rules, MemoryBoundByNameIsMarkedHeuristic) {
  auto trace = [](TimeNs elementwise) {
    Trace t;
    AddRange(t, "iteration", 0, kIter);
    AddKernel(t, "gemm_kernel", 0, kIter - elementwise);
    AddKernel(t, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()",
              kIter - elementwise, kIter);
    return t;
  };
  Analysis a = Analyze(trace(12'000));
  const Finding* f = Find(a, "memory_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->heuristic);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.12);
  EXPECT_FALSE(Fires(trace(8'000), "memory_bound"));
}

// Shares of the iteration are wall time: work that runs at once on several streams counts once
// (summed durations would give more than the whole iteration).
TEST(Rules, SharesCountConcurrentStreamsOnce) {
  const std::string elementwise =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()";
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  // Element-wise kernels on streams 7, 8 and 9 at the same 60,000 ns, and on stream 7 for
  // 10,000 ns more: union 70,000 ns (summed: 190,000 = 1.9 iterations).
  AddKernel(t, elementwise, 0, 60'000, 0, 7);
  AddKernel(t, elementwise, 0, 60'000, 0, 8);
  AddKernel(t, elementwise, 0, 60'000, 0, 9);
  AddKernel(t, elementwise, 60'000, 70'000, 0, 7);
  AddKernel(t, "gemm_kernel", 70'000, kIter, 0, 7);
  // Two pageable copies at once on two streams: union 5,000 ns (summed 10,000).
  AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, 5'000, MemKind::kPageable, MemKind::kDevice, 0, 10);
  AddCopy(t, CopyKind::kDtoH, 1 << 20, 0, 5'000, MemKind::kDevice, MemKind::kPageable, 0, 11);
  Analysis a = Analyze(t);
  const Finding* f = Find(a, "memory_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.7);  // 70,000 / 100,000
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.7);
  ASSERT_NE(f = Find(a, "pageable_copies"), nullptr);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.05);  // 5,000 / 100,000
  ASSERT_FALSE(f->involved.empty());
  EXPECT_EQ(f->involved[0].time_ns, 5'000);  // the involved list keeps each copy's own time
}

TEST(Rules, MemoryBoundFromCostsUsesTheRoofline) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, "gemm_kernel", 0, 50'000);
  AddKernel(t, "stream_copy", 50'000, kIter);
  AnalysisConfig config;
  config.peak = PeakOverride{4800, 989};
  // 150 MB in 50 us = 3000 GB/s (62.5% of 4800) with 1 FLOP per 4 bytes: far below the ridge.
  config.costs.push_back(KernelCost{"stream_copy", std::regex("stream_copy"), 150e6, 37.5e6});
  Analysis a = Analyze(t, config);
  const Finding* f = Find(a, "memory_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->heuristic);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.5);
  // At 40% of peak bandwidth it is not "near peak": no finding.
  config.costs[0].bytes = 96e6;  // 1920 GB/s
  EXPECT_FALSE(Fires(t, "memory_bound", config));
}

TEST(Rules, Int8NoGainNeedsAnInt8RunAndAReference) {
  Trace t = IdleTrace(kIter);  // 0.1 ms per iteration
  AnalysisConfig config;
  config.precision = "INT8";
  config.reference = ReferenceRun{"fp16.json", "fp16", 0.105};  // 5% gain < 10%
  Analysis a = Analyze(t, config);
  const Finding* f = Find(a, "int8_no_gain");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->evidence[0].value, 0.05, 1e-9);
  // P = 1, S = 1.5 / 1.05: +42.9% predicted, so high (the table's low is only the default).
  EXPECT_EQ(f->priority, Priority::kHigh);
  config.reference->avg_latency_ms = 0.15;  // 50% gain
  EXPECT_FALSE(Fires(t, "int8_no_gain", config));
  config.reference->avg_latency_ms = 0.105;
  config.precision = "fp16";
  EXPECT_FALSE(Fires(t, "int8_no_gain", config));
}

// One 1 ms iteration with three conv -> BN -> ReLU chains, 300 us apart.
Trace ThreeChains() {
  Trace t;
  AddRange(t, "iteration", 0, 1'000'000);
  for (int c = 0; c < 3; ++c) {
    TimeNs at = c * 300'000;
    AddKernel(t, "implicit_convolve_sgemm", at, at + 100'000);
    AddKernel(t, "cudnn::bn_fw_inf_1C11_kernel_NCHW", at + 102'000, at + 122'000);
    AddKernel(t, "relu_kernel", at + 124'000, at + 134'000);
  }
  return t;
}

TEST(Rules, ThreeRepeatedChainsGiveOneFusionFinding) {
  Trace t = ThreeChains();
  Analysis a = Analyze(t);
  int count = 0;
  for (const Finding& f : a.findings) count += f.id == "fusion_candidate";
  ASSERT_EQ(count, 1);
  const Finding* f = Find(a, "fusion_candidate");
  // Per chain: 134 us long, followers 30 us, gaps 4 us: saving 0.75 x 30 + 4 = 26.5 us.
  // Three chains: P = 402 / 1000, S = 402 / (402 - 79.5) = 1.2465; overall 1000 / (1000 - 79.5).
  EXPECT_NEAR(f->amdahl.share, 0.402, 1e-12);
  EXPECT_NEAR(f->amdahl.speedup, 402.0 / 322.5, 1e-12);
  EXPECT_NEAR(f->amdahl.overall, 1000.0 / 920.5, 1e-12);
  EXPECT_EQ(f->involved.size(), 3u);
  EXPECT_EQ(f->involved[0].count, 3u);
}

// RunAnalysis evaluates fusion_candidate apart (its input is found on a second thread): the
// two subsets, concatenated and ordered, are exactly the single evaluation.
TEST(Rules, FusionEvaluatedApartGivesTheSameFindings) {
  Trace t = ThreeChains();
  AddCopy(t, CopyKind::kHtoD, 1 << 20, 900'000, 990'000, MemKind::kPageable, MemKind::kDevice);
  Analysis a = Analyze(t);  // RunAnalysis: the split evaluation
  FindingsInput in;
  in.trace = &t;
  in.summary = &a.summary;
  in.iterations = &a.iterations;
  in.kernel_classes = &a.kernel_classes;
  in.roofline = &a.roofline;
  in.peak = &a.peak;
  in.fusion = &a.fusion;
  in.small_copy_bytes = AnalysisConfig{}.summary.small_copy_bytes;
  std::vector<Finding> all = EvaluateRules(in, RulesConfig{});
  ASSERT_GE(all.size(), 3u);  // fusion_candidate among others
  ASSERT_EQ(all.size(), a.findings.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].id, a.findings[i].id) << i;
    EXPECT_EQ(all[i].amdahl.overall, a.findings[i].amdahl.overall) << i;
  }
  std::vector<Finding> others = EvaluateRules(in, RulesConfig{}, RuleSubset::kAllButFusion);
  for (const Finding& f : others) EXPECT_NE(f.id, "fusion_candidate");
  std::vector<Finding> fusion = EvaluateRules(in, RulesConfig{}, RuleSubset::kFusionOnly);
  ASSERT_EQ(fusion.size(), 1u);
  EXPECT_EQ(fusion[0].id, "fusion_candidate");
  // The rules but fusion_candidate in two parts (two threads share them): up to memory_bound, the
  // one that reads the roofline, and after it. The parts' lists in that order, then fusion's,
  // ordered, are the single evaluation again.
  std::vector<Finding> parts = EvaluateRules(in, RulesConfig{}, RuleSubset::kUpToRoofline);
  const size_t up_to = parts.size();
  std::vector<Finding> after = EvaluateRules(in, RulesConfig{}, RuleSubset::kAfterRoofline);
  EXPECT_EQ(up_to + after.size(), others.size());
  for (const Finding& f : after) {
    EXPECT_NE(f.id, "fusion_candidate");
    EXPECT_NE(f.id, "memory_bound");
  }
  parts.insert(parts.end(), after.begin(), after.end());
  parts.insert(parts.end(), fusion.begin(), fusion.end());
  OrderFindings(parts);
  ASSERT_EQ(parts.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(parts[i].id, all[i].id) << i;
    EXPECT_EQ(parts[i].amdahl.overall, all[i].amdahl.overall) << i;
  }
}

TEST(Rules, FindingsAreOrderedByPriorityThenGain) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddCopy(t, CopyKind::kHtoD, 1 << 20, 0, 30'000, MemKind::kPageable, MemKind::kDevice);  // h2d 0.30
  AddKernel(t, "gemm_kernel", 30'000, 70'000, 0, 8);                                      // idle 0.20
  AddKernel(t, "transpose_kernel", 70'000, 80'000, 0, 8);                                 // 10 of 50 us
  Analysis a = Analyze(t);
  ASSERT_GE(a.findings.size(), 3u);
  for (size_t i = 1; i < a.findings.size(); ++i) {
    const Finding& x = a.findings[i - 1];
    const Finding& y = a.findings[i];
    EXPECT_TRUE(x.priority < y.priority || (x.priority == y.priority && x.amdahl.overall >= y.amdahl.overall))
        << x.id << " before " << y.id;
  }
  // transform_kernels: P = 0.10, S = 2, +5.3%: medium by its gain (heuristic caps only high).
  const Finding* transform = Find(a, "transform_kernels");
  ASSERT_NE(transform, nullptr);
  EXPECT_EQ(transform->priority, Priority::kMedium);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  return ::tg::testing::WriteTempFile(name, text);
}

TEST(RulesFile, OverridesThresholdsAndDisablesRules) {
  AnalysisConfig config;
  std::string path = WriteTemp("rules_ok.json", R"({"rules": {"idle_gaps": {"threshold": 0.15},
                                                            "h2d_bound": {"enabled": false}}})");
  ASSERT_TRUE(LoadRules(path, &config.rules).ok());
  EXPECT_DOUBLE_EQ(config.rules.Get("idle_gaps", "threshold"), 0.15);
  EXPECT_FALSE(config.rules.Enabled("h2d_bound"));
  EXPECT_FALSE(Fires(IdleTrace(88'000), "idle_gaps", config));  // 0.12 no longer > 0.15
  EXPECT_TRUE(Fires(IdleTrace(80'000), "idle_gaps", config));
}

TEST(RulesFile, RejectsTyposWithTheFileNamed) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {R"({"rules": {"idle_gap": {"threshold": 0.2}}})", "unknown rule 'idle_gap'"},
      {R"({"rules": {"idle_gaps": {"treshold": 0.2}}})", "has no parameter 'treshold'"},
      {R"({"rules": {"idle_gaps": {"threshold": "high"}}})", "must be a number"},
      {R"({"rules": {"idle_gaps": {"threshold": -1}}})", "must be a finite number >= 0"},
      {R"({"rules": {"idle_gaps": {"enabled": 1}}})", "'enabled' must be true or false"},
      {R"({"kernel_classes": {"blas": "gemm"}})", "unknown kernel class 'blas'"},
      {R"({"gpu": {"peak_bandwidth_gbs": 0}})", "must be a number > 0"},
      {R"({"thresholds": {}})", "unknown key 'thresholds'"},
      {R"([1, 2])", "a rules file is a JSON object"},
      {R"({"rules": )", "not valid JSON"},
  };
  int n = 0;
  for (const Case& c : cases) {
    RulesConfig rules;
    std::string path = WriteTemp("rules_bad_" + std::to_string(n++) + ".json", c.text);
    Status s = LoadRules(path, &rules);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find(path + ": "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
  }
  RulesConfig rules;
  EXPECT_EQ(LoadRules("/nonexistent/rules.json", &rules).code(), StatusCode::kNotFound);
}

TEST(RulesFile, EveryRuleHasParamsStrategiesAndASource) {
  for (const RuleDef& d : RuleDefs()) {
    EXPECT_NE(d.params.size(), 0u) << d.id;
    EXPECT_NE(d.strategies.size(), 0u) << d.id;
    EXPECT_NE(std::string(d.source), "") << d.id;
    EXPECT_EQ(FindRule(d.id), &d) << d.id;
  }
  EXPECT_EQ(RuleDefs().size(), 20u);
  EXPECT_EQ(FindRule("idle_gap"), nullptr);
}

// docs/RULES.md has one section per rule of the rule table, in the table's order: its heading
// "### `id`: title", its default priority and source, and each parameter named with its default,
// "`key` (default)", in the section.
TEST(RulesFile, DocsHaveOneSectionPerRule) {
  std::ifstream in(std::string(TRACEGATE_SOURCE_DIR) + "/docs/RULES.md");
  ASSERT_TRUE(in);
  std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t previous = 0;
  for (const RuleDef& d : RuleDefs()) {
    const std::string heading = "\n### `" + std::string(d.id) + "`";
    const size_t at = docs.find(heading);
    ASSERT_NE(at, std::string::npos) << heading;
    EXPECT_EQ(docs.find(heading, at + 1), std::string::npos) << d.id << " has two sections";
    EXPECT_EQ(docs.substr(at + heading.size(), 2 + std::strlen(d.title)), ": " + std::string(d.title)) << d.id;
    EXPECT_GT(at, previous) << d.id << " is out of the rule table's order";
    previous = at;
    // The section: up to the next heading.
    const size_t end = docs.find("\n#", at + 1);
    const std::string section = docs.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    // Its text is wrapped: compare with the line breaks as spaces.
    std::string flat = section;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    EXPECT_NE(flat.find("Default priority **" + std::string(PriorityName(d.priority)) + "**"), std::string::npos)
        << d.id;
    EXPECT_NE(flat.find("source: " + std::string(d.source) + "."), std::string::npos) << d.id;
    for (const RuleParam& p : d.params) {
      const std::string named = "`" + std::string(p.key) + "` (";
      const size_t k = section.find(named);
      ASSERT_NE(k, std::string::npos) << d.id << "." << p.key << " is not in its section";
      EXPECT_DOUBLE_EQ(std::strtod(section.c_str() + k + named.size(), nullptr), p.value) << d.id << "." << p.key;
    }
  }
}

}  // namespace
}  // namespace tg
