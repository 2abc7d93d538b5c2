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

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;
using testing::Generate;
using testing::Iterations;
using testing::kUs;
using testing::MeanMs;
using testing::Model;
using testing::Op;

// A replay's mean step before and after the change, in ms.
double BaseMs(const ReplayResult& r) {
  return static_cast<double>(r.base_total_ns) / static_cast<double>(r.iterations.size()) / 1e6;
}
double PredictedMs(const ReplayResult& r) {
  return static_cast<double>(r.predicted_total_ns) / static_cast<double>(r.iterations.size()) / 1e6;
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
  return {BaseMs(r), PredictedMs(r), MeanMs(Iterations(after)), AmdahlSpeedup(share.share, speedup)};
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
  const double predicted = PredictedMs(r);
  const double measured = MeanMs(Iterations(truth));
  EXPECT_LT(predicted, BaseMs(r));
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
  const double predicted = PredictedMs(r);
  const double measured = MeanMs(Iterations(truth));
  EXPECT_LT(measured, 0.7 * BaseMs(r));
  EXPECT_NEAR(predicted, measured, 0.02 * measured);
}

// --launched-in: the kernels launched inside a stage's range, whatever their names. The stage's
// GEMMs 1.5x faster: the truth generated with them faster, and the same kernels named by regex
// give the same replay exactly.
TEST(Replay, KernelsLaunchedInAStageRange) {
  std::vector<Op> ops;
  for (int i = 0; i < 3; ++i) ops.push_back({"gemm_a", 200, 7, 1, "", "stage_a"});
  for (int i = 0; i < 3; ++i) ops.push_back({"gemm_b", 200, 7, 1, "", "stage_b"});
  const Trace before = Generate(ops, Model{}, 5);
  const Trace truth = Generate(ops, Model{}, 5, "gemm_b", 1.5);
  const IterationAnalysis its = Iterations(before);
  ReplayChange change;
  change.kernels_launched_in = "^stage_b$";
  change.kernel_speedup = 1.5;
  ReplayResult r;
  const Status s = Replay(before, its, change, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(r.selections.size(), 1u);
  EXPECT_EQ(r.selections[0].kernels, 5u * 3);
  EXPECT_EQ(r.selections[0].part_ns, 5 * 3 * 200 * kUs);
  const double predicted = PredictedMs(r);
  const double measured = MeanMs(Iterations(truth));
  EXPECT_NEAR(predicted, measured, 0.02 * measured);
  ReplayChange by_name;
  by_name.kernels_regex = "^gemm_b$";
  by_name.kernel_speedup = 1.5;
  ReplayResult named;
  ASSERT_TRUE(Replay(before, its, by_name, &named).ok());
  EXPECT_EQ(named.predicted_total_ns, r.predicted_total_ns);
  // With a name too: both must hold (gemm_a is not launched in stage_b).
  change.kernels_regex = "gemm_a";
  const Status none = Replay(before, its, change, &r);
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.message().find("--kernels 'gemm_a' with --launched-in '^stage_b$' matches no kernel"),
            std::string::npos)
      << none.message();
  change.kernels_regex.clear();
  change.kernels_launched_in = "no such stage";
  const Status no_range = Replay(before, its, change, &r);
  EXPECT_NE(no_range.message().find("--launched-in: no host range matches 'no such stage'"), std::string::npos)
      << no_range.message();
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

// The truth for --graph, from the causal model of causal_model.h: each step's launches are one
// graph launch made at its first launch call, which takes m.launch_us; the other launch calls
// take no time (the host's think time stays); every kernel starts once the graph launch's delay
// has passed and its stream's previous kernel has ended, plus the back-to-back gap.
Trace GenerateGraph(const std::vector<Op>& ops, const Model& m, int steps, const std::string& faster = "",
                    double speedup = 1) {
  Trace t;
  TimeNs h = 0;
  int64_t corr = 1;
  std::map<int64_t, TimeNs> stream_free;
  TimeNs last_end = 0;
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = h;
    h += 2 * kUs;
    const TimeNs graph = h;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const TimeNs launch = i == 0 ? m.launch_us * kUs : 0;
      AddApi(t, "cudaLaunchKernel", h, h + launch, corr);
      TimeNs dur = op.kernel_us * kUs;
      if (op.kernel == faster) dur = static_cast<TimeNs>(std::llround(static_cast<double>(dur) / speedup));
      auto free = stream_free.find(op.stream);
      TimeNs start = graph + m.delay_us * kUs;
      if (free != stream_free.end()) start = std::max(start, free->second + m.gap_us * kUs);
      AddKernel(t, op.kernel, start, start + dur, 0, op.stream, corr++);
      stream_free[op.stream] = start + dur;
      last_end = std::max(last_end, start + dur);
      h += launch + op.think_us * kUs;
    }
    testing::EndStep(t, &h, last_end, m.wake_us, s, step_start);
  }
  FinalizeTrace(t);
  return t;
}

struct ReplayRun {
  ReplayResult r;
  double base_ms = 0, predicted_ms = 0;
};
ReplayRun ReplayMean(const Trace& t, const ReplayChange& change) {
  ReplayRun run;
  const Status s = Replay(t, Iterations(t), change, &run.r);
  EXPECT_TRUE(s.ok()) << s.message();
  const double n = static_cast<double>(std::max<size_t>(1, run.r.iterations.size()));
  run.base_ms = static_cast<double>(run.r.base_total_ns) / n / 1e6;
  run.predicted_ms = static_cast<double>(run.r.predicted_total_ns) / n / 1e6;
  return run;
}

// A launch-bound loop (20 us launch calls; a 60 us GEMM, then 15 kernels of 5 us, the first two
// of them queued behind the GEMM, the rest launched onto an idle stream) as one graph launch per
// step: the step shrinks to the GPU's busy time plus its gaps: 2 us to the first launch, 10 us of
// launch delay, 60 + 15 x 5 us of kernels with 15 gaps of 1 us (the gap the stream showed while
// busy), the sync's 5 us wake-up and 2 us after it: 169 us, from ~345 us.
TEST(Replay, GraphShrinksALaunchBoundStepToTheGpuTime) {
  std::vector<Op> ops = {{"gemm", 60}};
  for (int i = 0; i < 15; ++i) ops.push_back({i % 2 ? "add" : "mul", 5});
  Model m;
  m.launch_us = 20;
  const Trace before = Generate(ops, m, 6);
  const double truth = MeanMs(Iterations(GenerateGraph(ops, m, 6)));
  EXPECT_NEAR(truth, 0.169, 1e-9);
  ReplayChange change;
  change.graph = true;
  const ReplayRun run = ReplayMean(before, change);
  EXPECT_EQ(run.r.graph_launches, 6u);
  EXPECT_EQ(run.r.graph_folded, 6u * 15);
  EXPECT_NEAR(run.predicted_ms, truth, 0.02 * truth) << run.base_ms;
  EXPECT_LT(run.predicted_ms, 0.55 * run.base_ms);  // ~0.345 ms recorded
  // The step markers are host ranges: a graph of each one's launches is the same graph.
  change.graph_regex = "ProfilerStep";
  EXPECT_EQ(ReplayMean(before, change).r.predicted_total_ns, run.r.predicted_total_ns);
  change.graph_regex = "no_such_range";
  ReplayResult r;
  const Status s = Replay(before, Iterations(before), change, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--graph 'no_such_range' matches no host range"), std::string::npos) << s.message();
}

// A GPU-bound loop: the host launches far ahead already; one graph launch per step gains ~nothing.
TEST(Replay, GraphGainsNothingOnAGpuBoundStep) {
  const std::vector<Op> ops = {{"gemm", 300}, {"relu", 200}, {"gemm", 300}, {"softmax", 200}};
  const Trace before = Generate(ops, Model{}, 6);
  const double truth = MeanMs(Iterations(GenerateGraph(ops, Model{}, 6)));
  ReplayChange change;
  change.graph = true;
  const ReplayRun run = ReplayMean(before, change);
  EXPECT_NEAR(run.predicted_ms, truth, 0.02 * truth);
  EXPECT_LT(1 - run.predicted_ms / run.base_ms, 0.01) << run.base_ms << " " << run.predicted_ms;
}

// --class: the GEMMs by class (cuBLAS's name says gemm), alone and narrowed by --kernels.
TEST(Replay, ClassSelectsTheKernelsOfAClass) {
  const std::vector<Op> ops = {
      {"ampere_sgemm_128x64_nn", 300}, {"relu", 200}, {"ampere_sgemm_64x32_tn", 300}, {"softmax", 200}};
  ReplayChange change;
  change.kernel_class = "gemm";
  change.kernel_speedup = 1.5;
  const Trace before = Generate(ops, Model{}, 6);
  const ReplayRun run = ReplayMean(before, change);
  EXPECT_EQ(run.r.kernels_changed, 12u);
  // Truth: both GEMMs 1.5x faster (Generate speeds up one name; the model is linear in each).
  std::vector<Op> faster = ops;
  faster[0].kernel_us = 200;
  faster[2].kernel_us = 200;
  const double truth = MeanMs(Iterations(Generate(faster, Model{}, 6)));
  EXPECT_NEAR(run.predicted_ms, truth, 0.02 * truth) << run.base_ms;
  // With --kernels: only the class's kernels that match it.
  change.kernels_regex = "128x64";
  const ReplayRun one = ReplayMean(before, change);
  EXPECT_EQ(one.r.kernels_changed, 6u);
  const double truth_one = MeanMs(Iterations(Generate(ops, Model{}, 6, "ampere_sgemm_128x64_nn", 1.5)));
  EXPECT_NEAR(one.predicted_ms, truth_one, 0.02 * truth_one);
  change.kernels_regex = "relu";  // a relu is no gemm
  ReplayResult r;
  Status s = Replay(before, Iterations(before), change, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--class gemm with --kernels 'relu' matches no kernel"), std::string::npos) << s.message();
  change.kernels_regex.clear();
  change.kernel_class = "matmul";
  s = Replay(before, Iterations(before), change, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--class 'matmul': expected one of communication, attention"), std::string::npos)
      << s.message();
}

// Two kernel selections, each with its own speedup (--kernels gemm --speedup 1.5 --kernels softmax
// --speedup 2), replayed together; two selections holding one kernel are refused.
TEST(Replay, KernelSelectionsWithTheirOwnSpeedups) {
  const std::vector<Op> ops = {{"gemm", 300}, {"relu", 200}, {"gemm", 300}, {"softmax", 200}};
  const Trace before = Generate(ops, Model{}, 6);
  ReplayChange change;
  change.kernels_regex = "gemm";
  change.kernel_speedup = 1.5;
  change.more_kernels.push_back({"softmax", "", 2, ""});
  const ReplayRun run = ReplayMean(before, change);
  ASSERT_EQ(run.r.selections.size(), 2u);
  EXPECT_EQ(run.r.selections[0].kernels, 12u);
  EXPECT_EQ(run.r.selections[1].kernels, 6u);
  EXPECT_EQ(run.r.selections[1].part_ns, 6 * 200 * kUs);
  std::vector<Op> faster = ops;
  faster[0].kernel_us = faster[2].kernel_us = 200;
  faster[3].kernel_us = 100;
  const double truth = MeanMs(Iterations(Generate(faster, Model{}, 6)));
  EXPECT_NEAR(run.predicted_ms, truth, 0.02 * truth) << run.base_ms;
  change.more_kernels = {{"", "reduction", 2, ""}};  // softmax is a reduction: the same kernels by class
  EXPECT_EQ(ReplayMean(before, change).r.predicted_total_ns, run.r.predicted_total_ns);
  change.more_kernels = {{"gemm|softmax", "", 2, ""}};
  ReplayResult r;
  const Status s = Replay(before, Iterations(before), change, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("two kernel selections (--kernels / --class) both hold 'gemm'"), std::string::npos)
      << s.message();
}

// Changes replayed together in one pass: faster GEMMs, 2 us launch calls and a graph launch per
// step, on a loop the GPU just decides (40 us GEMMs and 5 us kernels, launched every 21 us): the
// graph alone gains nothing (0.206 ms), the GEMMs 1.2x faster alone make it launch-bound and gain
// less than Amdahl says (0.184 ms, 1.118x; Amdahl 1.149x); together they gain more than either
// (0.179 ms, exactly the truth).
TEST(Replay, SeveralChangesReplayTogether) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({i % 2 ? "relu" : "gemm", i % 2 ? 5 : 40});
  Model m;
  m.launch_us = 20;
  const Trace before = Generate(ops, m, 6);
  Model fast = m;
  fast.launch_us = 2;
  const double truth = MeanMs(Iterations(GenerateGraph(ops, fast, 6, "gemm", 1.2)));
  ReplayChange change;
  change.kernels_regex = "^gemm$";
  change.kernel_speedup = 1.2;
  change.launch_us = 2;
  change.graph = true;
  const ReplayRun all = ReplayMean(before, change);
  EXPECT_NEAR(all.predicted_ms, truth, 0.02 * truth) << all.base_ms;
  // Each alone gains less than all together.
  ReplayChange gemm_only;
  gemm_only.kernels_regex = "^gemm$";
  gemm_only.kernel_speedup = 1.2;
  ReplayChange graph_only;
  graph_only.graph = true;
  EXPECT_LT(all.predicted_ms, ReplayMean(before, gemm_only).predicted_ms);
  EXPECT_LT(all.predicted_ms, ReplayMean(before, graph_only).predicted_ms);
}

}  // namespace
}  // namespace tg
