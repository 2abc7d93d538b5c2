// AttributeIterationIdle walks the later half of many kept iterations on a second thread: every
// figure it gives (each iteration's causes and phases, the totals, the longest intervals, the
// backlog, every piece in order) is the same as one walk over all of them gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/iteration_idle_internal.h"
#include "analyzer/host/host_model.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddCopy;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kUs = 1'000;

// 300 steps of 1 ms on two streams: launches early or late (host_launch), a preprocess range in
// some steps (host_stage), a stream sync in others, copies in and out, and the gaps between.
Trace ManySteps() {
  Trace t;
  std::mt19937 rng(21);
  int64_t corr = 1;
  for (int step = 0; step < 300; ++step) {
    const TimeNs base = step * 1000 * kUs;
    AddRange(t, "ProfilerStep#" + std::to_string(step), base, base + 1000 * kUs);
    if (step % 3 == 0) AddRange(t, "preprocess", base + 10 * kUs, base + 60 * kUs);
    TimeNs at = base + 80 * kUs;
    AddApi(t, "cudaMemcpyAsync", at - 20 * kUs, at - 15 * kUs, corr);
    AddCopy(t, CopyKind::kHtoD, 1 << 20, at, at + 20 * kUs, MemKind::kPinned, MemKind::kDevice, 0, 7, corr++);
    at += 20 * kUs;
    for (int k = 0; k < 12; ++k) {
      const TimeNs gap = static_cast<TimeNs>(rng() % 40) * kUs;
      const TimeNs len = (5 + static_cast<TimeNs>(rng() % 30)) * kUs;
      const TimeNs launch = at + gap - static_cast<TimeNs>(rng() % 60) * kUs;
      AddApi(t, "cudaLaunchKernel", launch, launch + 4 * kUs, corr);
      AddKernel(t, k % 2 ? "gemm" : "relu", at + gap, at + gap + len, 0, 7 + k % 2, corr++);
      at += gap + len;
    }
    if (step % 4 == 1) AddApi(t, "cudaStreamSynchronize", at, at + 30 * kUs, corr++);
    AddApi(t, "cudaMemcpyAsync", at + 30 * kUs, at + 35 * kUs, corr);
    AddCopy(t, CopyKind::kDtoH, 1 << 16, at + 40 * kUs, at + 50 * kUs, MemKind::kDevice, MemKind::kPinned, 0, 7,
            corr++);
  }
  FinalizeTrace(t);
  return t;
}

TEST(IterationIdleSplit, TwoWalksGiveWhatOneGives) {
  const Trace t = ManySteps();
  AnalysisConfig config;
  KernelClassifier classifier;
  ASSERT_TRUE(KernelClassifier::Create(config.rules.kernel_class_patterns, &classifier).ok());
  const internal::ApiIndex api(t.api_calls);
  internal::HostStages stages(t, config.iterations);
  stages.Collect();
  const OpLinks ops = LinkOps(t, api);
  const std::vector<KernelClass> classes = ClassifyKernels(t, classifier, &ops.kernels);
  const internal::HostModel host(t, internal::LaunchedCalls(t, api, nullptr), internal::HostModelOptions{});
  IterationAnalysis found;
  ASSERT_TRUE(AnalyzeIterations(
                  t, config.iterations, [&]() -> const internal::ApiIndex& { return api; }, &found)
                  .ok());
  ASSERT_GE(found.iterations.size(), 256u);
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const Iteration& it : found.iterations) spans.emplace_back(it.start, it.end);
  const SpanSource span_source = [&]() { return &spans; };
  const HostSource host_source = [&]() -> const internal::HostModel* { return &host; };
  const Summary summary = Summarize(t, config.summary, &api, &stages, &classes, &span_source, &host_source);
  const internal::IdleCauseFinder finder(t, api, nullptr, classes, &host, config.summary);

  IterationAnalysis one = found, two = found;
  std::vector<IdlePiece> one_pieces, two_pieces;
  const IterationIdle a = internal::AttributeIterationIdle(t, summary, finder, &one, &one_pieces, SIZE_MAX);
  const IterationIdle b = internal::AttributeIterationIdle(t, summary, finder, &two, &two_pieces, 2);

  EXPECT_GT(a.total_ns, 0);
  EXPECT_EQ(a.ns, b.ns);
  EXPECT_EQ(a.idle_phase_ns, b.idle_phase_ns);
  EXPECT_EQ(a.total_ns, b.total_ns);
  EXPECT_EQ(a.pre_from_host_ns, b.pre_from_host_ns);
  EXPECT_EQ(a.post_from_host_ns, b.post_from_host_ns);
  EXPECT_EQ(a.backlog_items, b.backlog_items);
  EXPECT_EQ(a.backlog_max_lag_ns, b.backlog_max_lag_ns);
  ASSERT_EQ(a.largest.size(), b.largest.size());
  for (size_t i = 0; i < a.largest.size(); ++i) {
    EXPECT_EQ(a.largest[i].iteration, b.largest[i].iteration) << i;
    EXPECT_EQ(a.largest[i].gap.start_ns, b.largest[i].gap.start_ns) << i;
    EXPECT_EQ(a.largest[i].gap.duration_ns, b.largest[i].gap.duration_ns) << i;
    EXPECT_EQ(a.largest[i].gap.cause, b.largest[i].gap.cause) << i;
    EXPECT_EQ(a.largest[i].gap.cause_ns, b.largest[i].gap.cause_ns) << i;
  }
  ASSERT_EQ(one_pieces.size(), two_pieces.size());
  for (size_t i = 0; i < one_pieces.size(); ++i) {
    EXPECT_EQ(one_pieces[i].start, two_pieces[i].start) << i;
    EXPECT_EQ(one_pieces[i].end, two_pieces[i].end) << i;
    EXPECT_EQ(one_pieces[i].cause, two_pieces[i].cause) << i;
  }
  ASSERT_EQ(one.iterations.size(), two.iterations.size());
  for (size_t k = 0; k < one.iterations.size(); ++k) {
    EXPECT_EQ(one.iterations[k].idle_cause_ns, two.iterations[k].idle_cause_ns) << k;
    EXPECT_EQ(one.iterations[k].phase_ns, two.iterations[k].phase_ns) << k;
    EXPECT_EQ(one.iterations[k].pre_from_host_ns, two.iterations[k].pre_from_host_ns) << k;
    EXPECT_EQ(one.iterations[k].post_from_host_ns, two.iterations[k].post_from_host_ns) << k;
  }
  // The causes are not all one: the walks attributed host_stage, host_launch and more.
  int causes = 0;
  for (TimeNs ns : a.ns) causes += ns > 0;
  EXPECT_GE(causes, 2);
}

}  // namespace
}  // namespace tg
