// The what-if replay (tracegate/analyzer/replay.h) against runs with known truth: each run is
// generated twice by the same small causal model (a host thread launching kernels, streams
// running them in order, a sync at the step's end), once as recorded and once with the change
// made; the replay of the first must give the second's step time. Amdahl's figure for the same
// change is checked to be what it is: a bound that the replay can be far below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/causal_model.h"
#include "trace_builder.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/analyzer/replay.h"

namespace tg {
namespace {

using testing::Generate;
using testing::kUs;
using testing::Model;
using testing::Op;

IterationAnalysis Iterations(const Trace& t) {
  IterationOptions o;
  o.skip = 0;
  IterationAnalysis its;
  EXPECT_TRUE(AnalyzeIterations(t, o, &its).ok());
  return its;
}

double MeanMs(const IterationAnalysis& its) {
  TimeNs total = 0;
  for (const Iteration& it : its.iterations) total += it.latency_ns();
  return static_cast<double>(total) / static_cast<double>(its.iterations.size()) / 1e6;
}

struct Outcome {
  double base_ms, predicted_ms, truth_ms, amdahl;
};

Outcome RunChange(const std::vector<Op>& ops, const Model& m, const std::string& kernel, double speedup) {
  const Trace before = Generate(ops, m, 6);
  const Trace after = Generate(ops, m, 6, kernel, speedup);
  const IterationAnalysis its = Iterations(before);
  ReplayChange change;
  change.kernels_regex = "^" + kernel + "$";
  change.kernel_speedup = speedup;
  ReplayResult r;
  const Status s = Replay(before, its, change, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  MeasuredShare share;
  EXPECT_TRUE(MeasureKernelShare(before, its, change.kernels_regex, &share).ok());
  const double n = static_cast<double>(r.iterations.size());
  return {static_cast<double>(r.base_total_ns) / n / 1e6, static_cast<double>(r.predicted_total_ns) / n / 1e6,
          MeanMs(Iterations(after)), AmdahlSpeedup(share.share, speedup)};
}

// Nothing changed: every step's time comes back exactly.
TEST(Replay, NoChangeGivesTheRecordedTimes) {
  const std::vector<Op> ops = {{"gemm", 100}, {"relu", 30}, {"gemm", 100}, {"norm", 20, 8}};
  Model m;
  m.mid_sync = true;
  const Trace t = Generate(ops, m, 5);
  const IterationAnalysis its = Iterations(t);
  ReplayChange change;
  change.kernels_regex = "gemm";
  change.kernel_speedup = 1;
  ReplayResult r;
  ASSERT_TRUE(Replay(t, its, change, &r).ok());
  ASSERT_EQ(r.iterations.size(), its.iterations.size());
  for (size_t i = 0; i < r.iterations.size(); ++i)
    EXPECT_EQ(r.iterations[i].predicted_ns, r.iterations[i].base_ns) << i;
}

// GPU-bound: the host launches far ahead; 10% faster GEMMs shorten the step by their saving.
TEST(Replay, GpuBoundLoopGainsWhatTheGemmsSave) {
  const std::vector<Op> ops = {{"gemm", 300}, {"relu", 200}, {"gemm", 300}, {"softmax", 200}};
  const Outcome o = RunChange(ops, Model{}, "gemm", 1.1);
  EXPECT_NEAR(o.predicted_ms, o.truth_ms, 0.02 * o.truth_ms) << o.base_ms;
  const double gain = 1 - o.truth_ms / o.base_ms;
  EXPECT_GT(gain, 0.04);                                    // ~5.4%: 600 of ~1,010 us sped up by 1/11
  EXPECT_NEAR(o.base_ms / o.predicted_ms, o.amdahl, 0.01);  // on the path: Amdahl holds here
}

// Host-bound: each kernel waits for its launch; faster GEMMs change (almost) nothing, while
// Amdahl, with the GEMMs' share, promises a gain.
TEST(Replay, HostBoundLoopGainsNearlyNothing) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({i % 2 ? "gemm" : "relu", 40, 7, 150});
  const Outcome o = RunChange(ops, Model{}, "gemm", 1.1);
  EXPECT_NEAR(o.predicted_ms, o.truth_ms, 0.02 * o.truth_ms);
  EXPECT_LT(1 - o.predicted_ms / o.base_ms, 0.005);  // the last GEMM's 3.6 us of a ~1.3 ms step
  EXPECT_GT(o.amdahl, 1.01);                         // Amdahl: 160 us of GEMM, ~1.1% of the step
}

// Two streams: the GEMMs run beside a long kernel on another stream that decides the step.
TEST(Replay, AFasterKernelOffThePathGainsNothing) {
  const std::vector<Op> ops = {{"long", 2000, 9}, {"gemm", 200, 7}, {"gemm", 200, 7}, {"relu", 100, 7}};
  const Outcome o = RunChange(ops, Model{}, "gemm", 2.0);
  EXPECT_NEAR(o.predicted_ms, o.truth_ms, 0.02 * o.truth_ms);
  EXPECT_DOUBLE_EQ(o.predicted_ms, o.base_ms);
  EXPECT_GT(o.amdahl, 1.1);  // Amdahl would promise ~10%
}

// A mid-step stream sync that holds the host back: removed, the host launches the second half
// while the first still runs.
TEST(Replay, ARemovedSyncLetsTheHostRunAhead) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({"gemm", 100});
  Model with = Model{}, without = Model{};
  with.mid_sync = true;
  const Trace before = Generate(ops, with, 6);
  const Trace truth = Generate(ops, without, 6);
  const IterationAnalysis its = Iterations(before);
  ReplayChange change;
  change.remove_syncs_regex = "StreamSynchronize";
  ReplayResult r;
  const Status s = Replay(before, its, change, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r.syncs_removed, 6u);
  const double n = static_cast<double>(r.iterations.size());
  const double predicted = static_cast<double>(r.predicted_total_ns) / n / 1e6;
  const double measured = MeanMs(Iterations(truth));
  EXPECT_LT(predicted, static_cast<double>(r.base_total_ns) / n / 1e6);
  EXPECT_NEAR(predicted, measured, 0.02 * measured);
}

// Host-bound with the host's work in a named frame: that frame 2x faster shortens the step by
// about half of it, while faster GEMMs would not.
TEST(Replay, FasterHostFramesShortenAHostBoundStep) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({"relu", 40, 7, 150, "resize.py(12): resize"});
  const Trace before = Generate(ops, Model{}, 6);
  const Trace truth = Generate(ops, Model{}, 6, "", 1, 2.0);
  const IterationAnalysis its = Iterations(before);
  ReplayChange change;
  change.host_regex = "resize";
  change.host_speedup = 2;
  ReplayResult r;
  const Status s = Replay(before, its, change, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r.host_part_ns, 6 * 8 * 150 * kUs);
  const double n = static_cast<double>(r.iterations.size());
  const double predicted = static_cast<double>(r.predicted_total_ns) / n / 1e6;
  const double measured = MeanMs(Iterations(truth));
  EXPECT_LT(measured, 0.7 * static_cast<double>(r.base_total_ns) / n / 1e6);
  EXPECT_NEAR(predicted, measured, 0.02 * measured);
}

TEST(Replay, AChangeThatNamesNothingSaysSo) {
  const Trace t = Generate({{"gemm", 100}}, Model{}, 3);
  const IterationAnalysis its = Iterations(t);
  ReplayChange change;
  change.kernels_regex = "conv";
  change.kernel_speedup = 2;
  ReplayResult r;
  const Status s = Replay(t, its, change, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("matches no kernel"), std::string::npos) << s.message();
  change.kernels_regex = "(";
  EXPECT_FALSE(Replay(t, its, change, &r).ok());
  change.kernels_regex = "gemm";
  change.kernel_speedup = 0;
  EXPECT_FALSE(Replay(t, its, change, &r).ok());
}

}  // namespace
}  // namespace tg
