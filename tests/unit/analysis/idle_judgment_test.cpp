// The idle judgments on synthetic traces of each failure class users met on real ones, with exact
// expected results: a host far ahead of the GPU, graph launches held by a dependency, collectives,
// a CPU-only trace and launches whose kernels were not recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

Analysis Analyze(const Trace& t) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, AnalysisConfig{}, &a).ok());
  return a;
}

const Finding* FindingOf(const Analysis& a, const std::string& id) {
  auto it = std::find_if(a.findings.begin(), a.findings.end(), [&](const Finding& f) { return f.id == id; });
  return it == a.findings.end() ? nullptr : &*it;
}

TimeNs Cause(const Analysis& a, IdleCause c) { return a.summary.devices.at(0).idle_causes.ns[static_cast<size_t>(c)]; }

// 10 host steps of 1 ms each launch 50 kernels of 100 us: the host ends its last step at 10 ms,
// 500 launches ahead of a GPU that runs without a gap from 0.5 ms to 50.5 ms.
TEST(IdleJudgment, HostFarAheadIterationsDoNotOverlapAndIdleIsTheDevicesOwn) {
  Trace t;
  int64_t corr = 1;
  for (int s = 0; s < 10; ++s) {
    AddRange(t, "ProfilerStep#" + std::to_string(s), s * kMs, (s + 1) * kMs);
    for (int k = 0; k < 50; ++k, ++corr) {
      const TimeNs launch = s * kMs + k * 10 * kUs;
      AddApi(t, "cudaLaunchKernel", launch, launch + 5 * kUs, corr);
      const TimeNs start = kMs / 2 + (corr - 1) * 100 * kUs;
      AddKernel(t, "gemm", start, start + 100 * kUs, 0, 7, corr);
    }
  }
  const Analysis a = Analyze(t);
  const IterationAnalysis& it = a.iterations;
  ASSERT_EQ(it.iterations.size(), 10u);
  TimeNs idle = 0;
  for (size_t i = 0; i < it.iterations.size(); ++i) {
    const Iteration& x = it.iterations[i];
    EXPECT_EQ(x.host_ns(), kMs);
    EXPECT_EQ(x.end, kMs / 2 + static_cast<TimeNs>(i + 1) * 5 * kMs);
    if (i > 0) {
      EXPECT_EQ(x.start, it.iterations[i - 1].end);  // the GPU step starts where the last one ended
    }
    TimeNs sum = 0;
    for (TimeNs p : x.phase_ns) sum += p;
    EXPECT_EQ(sum, x.latency_ns());  // phases still partition the span
    idle += x.phase_ns[static_cast<size_t>(Phase::kIdle)];
  }
  EXPECT_EQ(it.iterations[0].start, 0);
  EXPECT_EQ(idle, kMs / 2);  // only the half millisecond before the GPU's first kernel
  EXPECT_EQ(it.total_ns, 50 * kMs + kMs / 2);
  EXPECT_EQ(FindingOf(a, "idle_gaps"), nullptr);
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
}

// Two CUDA graphs launched at once; the second one's 30 short kernels wait 64 ms after the first
// one's while the host is blocked in a stream sync: a dependency, not the host's launch rate.
Trace GraphsHeldByDependency(bool with_wait) {
  Trace t;
  AddApi(t, "cudaGraphLaunch", 0, 10 * kUs, 1);
  AddApi(t, "cudaGraphLaunch", 20 * kUs, 30 * kUs, 2);
  for (int k = 0; k < 30; ++k) AddKernel(t, "elementwise", kMs + k * 5 * kUs, kMs + (k + 1) * 5 * kUs, 0, 7, 1);
  const TimeNs after = kMs + 150 * kUs + 64 * kMs;
  for (int k = 0; k < 30; ++k) AddKernel(t, "elementwise", after + k * 5 * kUs, after + (k + 1) * 5 * kUs, 0, 7, 2);
  if (with_wait) AddApi(t, "cudaStreamSynchronize", 2 * kMs, after, 3);
  return t;
}

TEST(IdleJudgment, GraphLaunchesWaitingOnADependencyAreNotLaunchBound) {
  const Analysis a = Analyze(GraphsHeldByDependency(true));
  EXPECT_EQ(Cause(a, IdleCause::kDependencySync), 64 * kMs);
  EXPECT_EQ(Cause(a, IdleCause::kHostLaunch), 0);
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
  const Finding* idle = FindingOf(a, "idle_gaps");
  ASSERT_NE(idle, nullptr);
  // The iterations' idle phase also holds the lead-in: 990 us queued before the first graph ran,
  // longer than a launch's latency with nothing recorded to explain it.
  EXPECT_NE(idle->summary.find("dependency_sync 98%"), std::string::npos) << idle->summary;
  EXPECT_NE(idle->strategies.at(0).find("dependency"), std::string::npos);

  const Analysis unknown = Analyze(GraphsHeldByDependency(false));
  // Without the wait, the second graph starting 64 ms after its launch returned, on an idle device,
  // shows work the trace does not hold.
  EXPECT_EQ(Cause(unknown, IdleCause::kDeviceBacklog), 64 * kMs);
  EXPECT_EQ(FindingOf(unknown, "launch_bound"), nullptr);
}

// One graph launch whose nodes stop for 3 ms in the middle (an event node waiting on another
// stream or process): both sides of the gap carry the launch's correlation id, the launch
// returned long before, no wait call is recorded. The GPU waited inside the graph.
TEST(IdleJudgment, AGapInsideOneGraphLaunchIsADependency) {
  Trace t;
  AddApi(t, "cudaGraphLaunch", 0, 10 * kUs, 1);
  AddKernel(t, "elementwise", kMs, kMs + 100 * kUs, 0, 7, 1);
  AddKernel(t, "gemm", 4 * kMs + 100 * kUs, 5 * kMs, 0, 7, 1);
  const Analysis a = Analyze(t);
  EXPECT_EQ(Cause(a, IdleCause::kDependencySync), 3 * kMs);
  EXPECT_EQ(Cause(a, IdleCause::kUnknown), 0);
  const IdleGap& gap =
      a.summary.devices.at(0).idle_causes.largest[static_cast<size_t>(IdleCause::kDependencySync)].at(0);
  EXPECT_EQ(gap.same_launch, "cudaGraphLaunch");
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
  const nlohmann::json doc = AnalysisToJson(t, a, AnalysisConfig{});
  EXPECT_EQ(doc["devices"][0]["gaps"]["largest"][0]["evidence"]["same_launch_call"], "cudaGraphLaunch");
}

// 40 short kernels, each launched 20 us after the last one ended: every gap is the host's.
TEST(IdleJudgment, LateLaunchesAreHostLaunchAndLaunchBoundClaimsOnlyThem) {
  Trace t;
  for (int k = 0; k < 40; ++k) {
    const TimeNs s = k * 30 * kUs;
    AddApi(t, "cudaLaunchKernel", s, s + 8 * kUs, k + 1);
    AddKernel(t, "tiny", s + 10 * kUs, s + 12 * kUs, 0, 7, k + 1);
  }
  const Analysis a = Analyze(t);
  EXPECT_EQ(Cause(a, IdleCause::kHostLaunch), 39 * 28 * kUs);
  const Finding* f = FindingOf(a, "launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->amdahl.share, a.iterations.phase_ratio[static_cast<size_t>(Phase::kIdle)], 1e-12);
}

// The next op of every gap is an all-reduce queued long before: communication.
TEST(IdleJudgment, GapsBeforeQueuedCollectivesAreCommunication) {
  Trace t;
  AddApi(t, "cudaLaunchKernel", 0, 5 * kUs, 1);
  AddApi(t, "ncclAllReduce", 10 * kUs, 20 * kUs, 2);
  AddKernel(t, "gemm", 100 * kUs, 200 * kUs, 0, 7, 1);
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 900 * kUs, 1000 * kUs, 0, 8, 2);
  const Analysis a = Analyze(t);
  EXPECT_EQ(Cause(a, IdleCause::kCommunication), 700 * kUs);
  EXPECT_EQ(a.summary.devices.at(0).idle_causes.gaps[static_cast<size_t>(IdleCause::kCommunication)], 1u);
}

TEST(IdleJudgment, CpuOnlyTraceIsAStateNotAFinding) {
  Trace t;
  AddRange(t, "ProfilerStep#0", 0, 10 * kMs);
  AddRange(t, "ProfilerStep#1", 10 * kMs, 20 * kMs);
  const Analysis a = Analyze(t);
  EXPECT_NE(a.summary.no_device_activity.find("no CUDA API calls"), std::string::npos) << a.summary.no_device_activity;
  EXPECT_TRUE(a.findings.empty());
  const nlohmann::json doc = AnalysisToJson(t, a, AnalysisConfig{});
  EXPECT_TRUE(doc["idle_ratio"].is_null());
  EXPECT_EQ(doc["idle_ratio_reason"], a.summary.no_device_activity);
}

TEST(IdleJudgment, LaunchesWithoutKernelRecordsNameWhatIsMissing) {
  Trace t;
  AddRange(t, "ProfilerStep#0", 0, 10 * kMs);
  for (int k = 0; k < 77; ++k) AddApi(t, "cudaLaunchKernel", k * 100 * kUs, k * 100 * kUs + 5 * kUs, k + 1);
  t.quality.Add(Quality::kUnknownCategorySkipped, 3);
  const Analysis a = Analyze(t);
  const std::string& why = a.summary.no_device_activity;
  EXPECT_NE(why.find("77 CUDA API calls (77 kernel launches)"), std::string::npos) << why;
  EXPECT_NE(why.find("3 events of categories tracegate does not model"), std::string::npos) << why;
  EXPECT_EQ(FindingOf(a, "idle_gaps"), nullptr);
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
  std::ostringstream text;
  PrintAnalysis(text, AnalysisToJson(t, a, AnalysisConfig{}));
  EXPECT_NE(text.str().find("idle n/a"), std::string::npos);
  EXPECT_NE(text.str().find("  " + why + "\n"), std::string::npos);
}

}  // namespace
}  // namespace tg
