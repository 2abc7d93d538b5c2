// Findings replayed (issue 31): located speedups in the replay (ReplayChange::located) against
// runs with known truth from the causal model (causal_model.h), the piecewise largest-S function,
// a finding's claim as a change (tracegate/analyzer/finding_replay.h), and on the real traces
// every replayable finding's replayed gain against its Amdahl bound.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "analysis/causal_model.h"
#include "analyzer/analysis/replay_engine.h"
#include "trace_builder.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/finding_replay.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/analyzer/replay.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using testing::Generate;
using testing::Iterations;
using testing::kUs;
using testing::MeanMs;
using testing::Model;
using testing::Op;

using Intervals = std::vector<std::pair<TimeNs, TimeNs>>;

// The recorded [start, end) of the kernels named `name`.
Intervals KernelIntervals(const Trace& t, const std::string& name) {
  Intervals v;
  for (size_t i = 0; i < t.kernels.size(); ++i)
    if (t.Name(t.kernels.name[i]) == name) v.emplace_back(t.kernels.start[i], t.kernels.end[i]);
  return v;
}
// The recorded [start, end) of the host ranges named `name`.
Intervals RangeIntervals(const Trace& t, const std::string& name) {
  Intervals v;
  for (size_t i = 0; i < t.ranges.size(); ++i)
    if (t.Name(t.ranges.name[i]) == name) v.emplace_back(t.ranges.start[i], t.ranges.end[i]);
  return v;
}

ReplayResult MustReplay(const Trace& t, const IterationAnalysis& its, const ReplayChange& c) {
  ReplayResult r;
  const Status s = Replay(t, its, c, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}
double PredictedMs(const ReplayResult& r) {
  return static_cast<double>(r.predicted_total_ns) / static_cast<double>(r.iterations.size()) / 1e6;
}
double BaseMs(const ReplayResult& r) {
  return static_cast<double>(r.base_total_ns) / static_cast<double>(r.iterations.size()) / 1e6;
}

// GPU-bound: softmax 2x faster over its own recorded intervals is the run generated with softmax
// 2x faster, and the same replay as --kernels '^softmax$' --speedup 2, iteration by iteration.
TEST(ReplayLocated, GpuSpeedupOverOneKernelIsTheTruth) {
  const std::vector<Op> ops = {{"gemm", 300}, {"relu", 200}, {"gemm", 300}, {"softmax", 200}};
  const Trace before = Generate(ops, Model{}, 6);
  const Trace truth = Generate(ops, Model{}, 6, "softmax", 2);
  const IterationAnalysis its = Iterations(before);
  ReplayChange located;
  located.located.push_back({false, KernelIntervals(before, "softmax"), 2});
  const ReplayResult r = MustReplay(before, its, located);
  ReplayChange by_name;
  by_name.kernels_regex = "^softmax$";
  by_name.kernel_speedup = 2;
  const ReplayResult k = MustReplay(before, its, by_name);
  ASSERT_EQ(r.iterations.size(), k.iterations.size());
  for (size_t i = 0; i < r.iterations.size(); ++i)
    EXPECT_EQ(r.iterations[i].predicted_ns, k.iterations[i].predicted_ns);
  EXPECT_DOUBLE_EQ(PredictedMs(r), MeanMs(Iterations(truth)));  // 100 us a step shorter
  EXPECT_NEAR(BaseMs(r) - PredictedMs(r), 0.100, 1e-9);
  EXPECT_EQ(r.located_gpu_ns, 6 * 200 * kUs);
  EXPECT_EQ(r.located_gpu_activities, 6u);
  EXPECT_EQ(r.located_host_ns, 0);
}

// Host-bound, the host work after each launch in a frame: those instants 2x faster (host) give
// --host's replay exactly and the truth; the relu kernels' instants 2x faster (GPU) gain ~0 while
// Amdahl, with their share, promises more than 5%.
TEST(ReplayLocated, HostBoundLoopGainsFromHostNotGpu) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({"relu", 40, 7, 150, "work"});
  const Trace before = Generate(ops, Model{}, 6);
  const Trace truth = Generate(ops, Model{}, 6, "", 1, 2.0);
  const IterationAnalysis its = Iterations(before);
  ReplayChange host;
  host.located.push_back({true, RangeIntervals(before, "work"), 2});
  const ReplayResult h = MustReplay(before, its, host);
  EXPECT_EQ(h.located_host_ns, 6 * 8 * 150 * kUs);
  EXPECT_EQ(h.located_gpu_ns, 0);
  ReplayChange by_name;
  by_name.host_regex = "^work$";
  by_name.host_speedup = 2;
  const ReplayResult n = MustReplay(before, its, by_name);
  for (size_t i = 0; i < h.iterations.size(); ++i)
    EXPECT_EQ(h.iterations[i].predicted_ns, n.iterations[i].predicted_ns);
  // 8 x 75 us of host work saved a step, the GPU following the host.
  EXPECT_NEAR(BaseMs(h) - PredictedMs(h), 0.600, 1e-9);
  EXPECT_DOUBLE_EQ(PredictedMs(h), MeanMs(Iterations(truth)));

  ReplayChange gpu;
  gpu.located.push_back({false, KernelIntervals(before, "relu"), 2});
  const ReplayResult g = MustReplay(before, its, gpu);
  EXPECT_EQ(g.located_gpu_ns, 6 * 8 * 40 * kUs);
  const double gain = BaseMs(g) / PredictedMs(g) - 1;
  EXPECT_LT(gain, 0.02);  // the last relu's 20 us of a ~1.3 ms step
  const double share = static_cast<double>(g.located_gpu_ns) / static_cast<double>(g.base_total_ns);
  EXPECT_GT(AmdahlSpeedup(share, 2) - 1, 0.05);  // Amdahl: 320 us of ~1.3 ms made 2x faster
}

// Overlapping located speedups: each instant takes the largest S.
TEST(ReplayLocated, OverlapsTakeTheLargestSpeedup) {
  using internal::MaxSpeedupPieces;
  using internal::SpeedupPiece;
  const std::vector<LocatedSpeedup> l = {{false, {{0, 10}, {30, 40}}, 2}, {false, {{5, 20}}, 3}, {true, {{0, 100}}, 9}};
  const std::vector<SpeedupPiece> p = MaxSpeedupPieces(l, false);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].start, 0);
  EXPECT_EQ(p[0].end, 5);
  EXPECT_EQ(p[0].speedup, 2);
  EXPECT_EQ(p[1].start, 5);
  EXPECT_EQ(p[1].end, 20);
  EXPECT_EQ(p[1].speedup, 3);
  EXPECT_EQ(p[2].start, 30);
  EXPECT_EQ(p[2].end, 40);
  // The larger first: it keeps its whole interval; equal neighbours merge.
  const std::vector<SpeedupPiece> q = MaxSpeedupPieces({{false, {{0, 10}}, 3}, {false, {{5, 20}, {20, 25}}, 2}}, false);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].end, 10);
  EXPECT_EQ(q[0].speedup, 3);
  EXPECT_EQ(q[1].start, 10);
  EXPECT_EQ(q[1].end, 25);
  // A duration over them: outside as is, inside / S; an infinite S takes the time away.
  TimeNs inside = 0;
  EXPECT_EQ(internal::ScaledDuration(p, -10, 50, &inside), 30 + 13);  // 30 outside, 2.5 + 5 + 5 rounded
  EXPECT_EQ(inside, 30);
  const std::vector<SpeedupPiece> gone =
      MaxSpeedupPieces({{false, {{0, 10}}, std::numeric_limits<double>::infinity()}}, false);
  EXPECT_EQ(internal::ScaledDuration(gone, 0, 30, &inside), 20);
  EXPECT_EQ(inside, 10);

  // In the replay: softmax at 2 and softmax + relu at 1.5 is softmax 2x and relu 1.5x faster.
  const std::vector<Op> ops = {{"gemm", 300}, {"relu", 200}, {"gemm", 300}, {"softmax", 200}};
  const Trace t = Generate(ops, Model{}, 4);
  const IterationAnalysis its = Iterations(t);
  Intervals both = KernelIntervals(t, "softmax");
  for (const auto& x : KernelIntervals(t, "relu")) both.push_back(x);
  ReplayChange overlapping;
  overlapping.located = {{false, both, 1.5}, {false, KernelIntervals(t, "softmax"), 2}};
  ReplayChange by_name;
  by_name.kernels_regex = "^softmax$";
  by_name.kernel_speedup = 2;
  by_name.more_kernels.push_back({"^relu$", "", 1.5, ""});
  const ReplayResult a = MustReplay(t, its, overlapping), b = MustReplay(t, its, by_name);
  EXPECT_EQ(a.predicted_total_ns, b.predicted_total_ns);
  EXPECT_LT(a.predicted_total_ns, a.base_total_ns);
  EXPECT_EQ(a.located_gpu_ns, 4 * 400 * kUs);
}

// No change (S = 1 over everything, or none) gives back every recorded time exactly.
TEST(ReplayLocated, NoChangeGivesTheRecordedTimes) {
  const std::vector<Op> ops = {{"gemm", 100}, {"relu", 30, 7, 20, "work"}, {"gemm", 100, 9}, {"norm", 20, 8}};
  Model m;
  m.mid_sync = true;
  const Trace t = Generate(ops, m, 5);
  const IterationAnalysis its = Iterations(t);
  ReplayChange change;
  change.located = {{false, {{0, std::numeric_limits<TimeNs>::max() / 4}}, 1},
                    {true, {{0, std::numeric_limits<TimeNs>::max() / 4}}, 1}};
  const ReplayResult r = MustReplay(t, its, change);
  ASSERT_EQ(r.iterations.size(), its.iterations.size());
  for (size_t i = 0; i < r.iterations.size(); ++i)
    EXPECT_EQ(r.iterations[i].predicted_ns, r.iterations[i].base_ns) << i;
  EXPECT_GT(r.located_gpu_ns, 0);
  EXPECT_GT(r.located_host_ns, 0);
}

TEST(ReplayLocated, RejectsTwoSpeedupsForOneKernel) {
  const Trace t = Generate({{"gemm", 100}}, Model{}, 3);
  const IterationAnalysis its = Iterations(t);
  ReplayChange c;
  c.kernels_regex = "gemm";
  c.kernel_speedup = 2;
  c.located.push_back({false, KernelIntervals(t, "gemm"), 2});
  ReplayResult r;
  EXPECT_FALSE(Replay(t, its, c, &r).ok());
  c = ReplayChange{};
  c.located.push_back({false, KernelIntervals(t, "gemm"), 0});
  EXPECT_FALSE(Replay(t, its, c, &r).ok());
}

Finding Made(const std::string& id, double share, double speedup, std::vector<ClaimPart> claim) {
  Finding f;
  f.id = id;
  f.amdahl = MakeAmdahl(share, speedup, "assumed", "");
  f.claim = std::move(claim);
  return f;
}

// A finding's claim as a change: gpu parts GPU speedups, idle and post parts host ones; run
// parts, unlocated parts, S <= 1 and inapplicable estimates are left out with why.
TEST(FindingReplay, ClaimsBecomeLocatedSpeedups) {
  std::vector<Finding> f;
  f.push_back(Made("memory_bound", 0.2, 1.3, {{ClaimSpace::kGpu, 0.2, {{10, 20}}}}));
  f.push_back(Made("fusion_candidate", 0.1, 1.5,
                   {{ClaimSpace::kGpu, 0.05, {{30, 35}}}, {ClaimSpace::kIdle, 0.05, {{35, 40}}}}));
  f.push_back(Made("fusion_candidate", 0.1, 1.2, {{ClaimSpace::kGpu, 0.1, {{50, 60}}}}));
  f.push_back(Made("idle_gaps", 0.3, 2, {{ClaimSpace::kIdle, 0.3, {}}}));
  f.push_back(Made("latency_variance", 0.1, 2, {}));
  f.push_back(Made("throttling", 0.5, 1, {{ClaimSpace::kGpu, 0.5, {{0, 100}}}}));
  f.back().amdahl.applicable = false;
  f.back().amdahl.reason = "no samples";
  EXPECT_EQ(FindingNotReplayable(f[0]), "");
  EXPECT_EQ(FindingNotReplayable(f[3]), "its idle part is not located (no instants to replay)");
  EXPECT_EQ(FindingNotReplayable(f[4]), "it claims the run as a whole, not located work");
  EXPECT_EQ(FindingNotReplayable(f[5]), "its Amdahl estimate does not apply (no samples)");
  EXPECT_EQ(FindingNotReplayable(Made("x", 0.1, 1, {{ClaimSpace::kGpu, 0.1, {{0, 1}}}})), "its S is 1: not a speedup");

  FindingsChange one;
  ASSERT_TRUE(FindingsReplayChange(f, {"fusion_candidate#1"}, &one).ok());
  ASSERT_EQ(one.replayed, std::vector<size_t>{1});
  ASSERT_EQ(one.change.located.size(), 2u);
  EXPECT_FALSE(one.change.located[0].host);
  EXPECT_TRUE(one.change.located[1].host);
  EXPECT_EQ(one.change.located[1].intervals, (Intervals{{35, 40}}));
  EXPECT_EQ(one.change.located[1].speedup, 1.5);

  FindingsChange all;
  ASSERT_TRUE(FindingsReplayChange(f, {"all"}, &all).ok());
  EXPECT_EQ(all.replayed, (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(all.left_out.size(), 3u);
  EXPECT_EQ(all.left_out[0].finding, 3u);

  FindingsChange bad;
  const Status unknown = FindingsReplayChange(f, {"gpu_idle"}, &bad);
  EXPECT_EQ(unknown.message(),
            "--finding 'gpu_idle': no such finding; the findings are: memory_bound, fusion_candidate#1, "
            "fusion_candidate#2, idle_gaps, latency_variance, throttling");
  const Status run = FindingsReplayChange(f, {"latency_variance"}, &bad);
  EXPECT_EQ(run.message(),
            "finding latency_variance is not a speedup of located work the replay can make: it claims the run as a "
            "whole, not located work");
  EXPECT_FALSE(FindingsReplayChange(f, {"memory_bound", "memory_bound"}, &bad).ok());
}

// Every replayable finding of the real traces, replayed alone and all together: the replayed
// gain never exceeds the finding's Amdahl figure, nor its bound (the combined estimate's for all),
// and analyze --replay-findings reports the same figures (Finding::replay, CombinedEstimate::replay).
void CheckFile(const std::string& path) {
  Trace t;
  const Status s = ImportTrace(path, &t);
  ASSERT_TRUE(s.ok()) << path << ": " << s.message();
  AnalysisConfig config;
  config.commit = "-";
  config.replay_findings = true;     // analyze --replay-findings: every finding replayed (Finding::replay)
  config.locate_idle_claims = true;  // and the idle claims kept located, as predict --finding has them
  Analysis a;
  ASSERT_TRUE(RunAnalysis(t, config, &a).ok()) << path;
  if (a.iterations.iterations.empty()) return;
  for (const Finding& f : a.findings) {
    EXPECT_EQ(f.replay_reason.empty(), f.replay.has_value()) << path << " " << f.id << ": " << f.replay_reason;
    // Not replayable, or replayed without a figure (which reason: checked below).
    if (!f.replay && FindingNotReplayable(f).empty()) {
      EXPECT_FALSE(f.replay_reason.empty()) << path << " " << f.id;  // its replay gives no figure
    } else if (!f.replay) {
      EXPECT_EQ(f.replay_reason, FindingNotReplayable(f)) << path << " " << f.id;
    }
  }
  const std::vector<std::string> refs = FindingRefs(a.findings);
  size_t replayed = 0;
  for (size_t i = 0; i < a.findings.size(); ++i) {
    if (!FindingNotReplayable(a.findings[i]).empty()) continue;
    FindingsChange fc;
    ASSERT_TRUE(FindingsReplayChange(a.findings, {refs[i]}, &fc).ok());
    ReplayResult r;
    const Status st = Replay(t, a.iterations, fc.change, &r);
    ASSERT_TRUE(st.ok()) << path << " " << refs[i] << ": " << st.message();
    const AmdahlEstimate& e = a.findings[i].amdahl;
    EXPECT_LE(r.speedup(), e.upper_bound * (1 + 1e-9)) << path << " " << refs[i];
    EXPECT_LE(r.speedup(), e.overall * (1 + 1e-9)) << path << " " << refs[i] << " P " << e.share << " S " << e.speedup;
    // analyze's figure is this replay's: `predict --finding REF` and the report agree; where the
    // replay made iterations longer under the finding's speedup, analyze gives no figure and says why.
    // Likewise where it re-timed nothing.
    if (const std::string none = NothingCovered(r); !none.empty() || r.longer() > 0) {
      EXPECT_FALSE(a.findings[i].replay.has_value()) << path << " " << refs[i];
      EXPECT_EQ(a.findings[i].replay_reason, (none.empty() ? LongerIterationsCaution(r) : none))
          << path << " " << refs[i];
      ++replayed;
      continue;
    }
    ASSERT_TRUE(a.findings[i].replay.has_value()) << path << " " << refs[i];
    EXPECT_EQ(a.findings[i].replay->base_total_ns, r.base_total_ns) << path << " " << refs[i];
    EXPECT_EQ(a.findings[i].replay->predicted_total_ns, r.predicted_total_ns) << path << " " << refs[i];
    EXPECT_DOUBLE_EQ(a.findings[i].replay->overall, r.speedup()) << path << " " << refs[i];
    ::testing::Test::RecordProperty(fs::path(path).filename().string() + ":" + refs[i],
                                    std::to_string(r.speedup()) + " <= " + std::to_string(e.overall));
    ++replayed;
  }
  if (replayed == 0) {
    EXPECT_FALSE(a.combined.replay.has_value()) << path;
    EXPECT_EQ(a.combined.replay_reason, "no finding is a speedup of located work the replay can make") << path;
    return;
  }
  // The combined estimate replayed is `predict --finding` with the refs of the findings that got a
  // figure (`--finding all` when all did).
  std::vector<std::string> with_figure;
  for (size_t i = 0; i < a.findings.size(); ++i)
    if (a.findings[i].replay) with_figure.push_back(refs[i]);
  if (with_figure.empty()) {
    EXPECT_FALSE(a.combined.replay.has_value()) << path;
    EXPECT_EQ(a.combined.replay_reason, "no finding's replay gives a figure (each says why)") << path;
    return;
  }
  EXPECT_EQ(a.combined.replayed, with_figure) << path;
  FindingsChange all;
  ASSERT_TRUE(FindingsReplayChange(a.findings, with_figure, &all).ok());
  ReplayResult r;
  ASSERT_TRUE(Replay(t, a.iterations, all.change, &r).ok()) << path;
  if (const std::string none = NothingCovered(r); !none.empty() || r.longer() > 0) {
    EXPECT_FALSE(a.combined.replay.has_value()) << path;
    EXPECT_EQ(a.combined.replay_reason, (none.empty() ? LongerIterationsCaution(r) : none)) << path;
    return;
  }
  ASSERT_TRUE(a.combined.replay.has_value()) << path << ": " << a.combined.replay_reason;
  EXPECT_EQ(a.combined.replay->predicted_total_ns, r.predicted_total_ns) << path;
  EXPECT_EQ(a.combined.replay->base_total_ns, r.base_total_ns) << path;
  EXPECT_EQ(a.combined.replay_assumptions, r.assumptions) << path;
  std::vector<Finding> chosen;
  for (size_t i : all.replayed) chosen.push_back(a.findings[i]);
  const CombinedEstimate c = RelateFindings(chosen);
  EXPECT_LE(r.speedup(), c.upper_bound * (1 + 1e-9)) << path;
  EXPECT_LE(r.speedup(), c.overall * (1 + 1e-9)) << path;
}

// The idle findings' instants (LocateIdleClaims) are the time their P measures: idle_gaps' and
// launch_bound's claim part is exactly P of the kept iterations' time; sync_in_loop's P is at
// most its instants' (P = min(wait, idle x host_launch share)); host_bound's is exactly P. And
// analyze --replay-findings reports the same figures with the claims unlocated, as without it.
void CheckIdleClaims(const std::string& path) {
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok()) << path;
  AnalysisConfig config;
  config.commit = "-";
  config.locate_idle_claims = true;
  Analysis a, plain;
  ASSERT_TRUE(RunAnalysis(t, config, &a).ok()) << path;
  config.locate_idle_claims = false;
  config.replay_findings = true;  // located for its replays, then dropped: the report's claims as without it
  ASSERT_TRUE(RunAnalysis(t, config, &plain).ok()) << path;
  ASSERT_EQ(a.findings.size(), plain.findings.size()) << path;
  EXPECT_EQ(a.combined.overall, plain.combined.overall) << path;
  TimeNs total = 0;
  for (const Iteration& it : a.iterations.iterations) total += it.latency_ns();
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& f = a.findings[i];
    EXPECT_EQ(f.amdahl.share, plain.findings[i].amdahl.share) << path << " " << f.id;
    const bool idle = f.id == "idle_gaps" || f.id == "launch_bound" || f.id == "sync_in_loop" || f.id == "host_bound";
    for (size_t k = 0; k < f.claim.size(); ++k) {
      const ClaimPart& p = f.claim[k];
      if (!idle || p.space != ClaimSpace::kIdle) continue;
      EXPECT_TRUE(plain.findings[i].claim[k].intervals.empty()) << path << " " << f.id;
      ASSERT_FALSE(p.intervals.empty()) << path << " " << f.id;
      TimeNs len = 0;
      for (const auto& [x, y] : p.intervals) len += y - x;
      const double share = static_cast<double>(len) / static_cast<double>(total);
      if (f.id == "sync_in_loop") EXPECT_LE(p.share, share + 1e-9) << path << " " << f.id;
      else EXPECT_NEAR(p.share, share, 1e-9) << path << " " << f.id;
      ::testing::Test::RecordProperty(fs::path(path).filename().string() + ":" + f.id + ":located_share",
                                      std::to_string(share));
    }
  }
}

TEST(FindingReplay, IdleClaimsLocatedAreWhatTheirPMeasures) {
  for (const char* f : {"/real/kineto_alexnet_train_step.json.gz", "/real/kineto_sampled_rank0.json.gz"})
    CheckIdleClaims(std::string(TRACEGATE_FIXTURES_DIR) + f);
  const fs::path dir = TRACEGATE_SHARED_TRACES_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (../shared/traces is not beside this checkout)";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.ends_with(".json.gz") || p.ends_with(".sqlite")) CheckIdleClaims(p);
  }
}

TEST(FindingReplay, ReplayedGainWithinAmdahlOnTheShippedTraces) {
  for (const char* f : {"/real/kineto_alexnet_train_step.json.gz", "/real/kineto_sampled_rank0.json.gz"})
    CheckFile(std::string(TRACEGATE_FIXTURES_DIR) + f);
}

TEST(FindingReplay, ReplayedGainWithinAmdahlOnTheSharedTraces) {
  const fs::path dir = TRACEGATE_SHARED_TRACES_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (../shared/traces is not beside this checkout)";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.ends_with(".json.gz") || p.ends_with(".sqlite")) CheckFile(p);
  }
}

}  // namespace
}  // namespace tg
