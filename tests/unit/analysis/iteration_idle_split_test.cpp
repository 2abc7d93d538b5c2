// AttributeIterationIdle walks the later half of many kept iterations on a second thread: every
// figure it gives (each iteration's causes and phases, the totals, the longest intervals, the
// backlog, every piece in order) is the same as one walk over all of them gives. Likewise the
// summary's devices' gaps attributed in chunks that two threads share (a HelpBoard).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/iteration_idle_internal.h"
#include "analyzer/host/host_model.h"
#include "analyzer/util/help_board.h"
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

// `steps` steps of 1 ms on two streams: launches early or late (host_launch), a preprocess range
// in some steps (host_stage), a stream sync in others, copies in and out, and the gaps between.
// With `overlap`, every fifth kernel also runs on a third stream over the next kernels' time, and
// some kernels take no time (busy pieces that overlap, touch or are empty).
Trace ManySteps(int steps = 300, bool overlap = false) {
  Trace t;
  std::mt19937 rng(21);
  int64_t corr = 1;
  for (int step = 0; step < steps; ++step) {
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
      const TimeNs kernel_len = overlap && k % 7 == 3 ? 0 : len;
      AddKernel(t, k % 2 ? "gemm" : "relu", at + gap, at + gap + kernel_len, 0, 7 + k % 2, corr++);
      if (overlap && k % 5 == 0) {
        const TimeNs side = at + gap + static_cast<TimeNs>(rng() % 10) * kUs;
        AddApi(t, "cudaLaunchKernel", side - 6 * kUs, side - 2 * kUs, corr);
        AddKernel(t, "elementwise", side, side + static_cast<TimeNs>(rng() % 80) * kUs, 0, 9, corr++);
      }
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

// What both attributions read, found as RunAnalysis finds it: the correlation index, the stages,
// the kernels' classes, the host model, the iterations and their spans.
std::vector<KernelClass> Classes(const Trace& t, const OpLinks& ops) {
  KernelClassifier classifier;
  EXPECT_TRUE(KernelClassifier::Create(AnalysisConfig{}.rules.kernel_class_patterns, &classifier).ok());
  return ClassifyKernels(t, classifier, &ops.kernels);
}

struct Inputs {
  explicit Inputs(const Trace& trace)
      : t(trace),
        api(t.api_calls),
        stages(t, config.iterations),
        ops(LinkOps(t, api)),
        classes(Classes(t, ops)),
        host(t, internal::LaunchedCalls(t, api, nullptr), internal::HostModelOptions{}) {
    stages.Collect();
    EXPECT_TRUE(AnalyzeIterations(
                    t, config.iterations, [&]() -> const internal::ApiIndex& { return api; }, &found)
                    .ok());
    for (const Iteration& it : found.iterations) spans.emplace_back(it.start, it.end);
  }
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;

  const Trace& t;
  AnalysisConfig config;
  const internal::ApiIndex api;
  internal::HostStages stages;
  const OpLinks ops;
  const std::vector<KernelClass> classes;
  const internal::HostModel host;
  IterationAnalysis found;
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  const SpanSource span_source = [this]() { return &spans; };
  const HostSource host_source = [this]() -> const internal::HostModel* { return &host; };
};

TEST(IterationIdleSplit, TwoWalksGiveWhatOneGives) {
  const Trace t = ManySteps();
  const Inputs in(t);
  const AnalysisConfig& config = in.config;
  const internal::ApiIndex& api = in.api;
  const std::vector<KernelClass>& classes = in.classes;
  const internal::HostModel& host = in.host;
  const IterationAnalysis& found = in.found;
  ASSERT_GE(found.iterations.size(), 256u);
  const Summary summary = Summarize(t, config.summary, &api, &in.stages, &classes, &in.span_source, &in.host_source);
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

// The summary's devices' gaps in chunks (RunAnalysis posts them on a HelpBoard for the other
// thread to share): every figure is the one a single run over all the gaps gives, with a
// helper taking chunks and without one.
TEST(IterationIdleSplit, DeviceGapsInChunksGiveWhatOneRunGives) {
  const Trace t = ManySteps(3000, true);
  const Inputs in(t);
  const AnalysisConfig& config = in.config;
  const internal::ApiIndex& api = in.api;
  const std::vector<KernelClass>& classes = in.classes;
  const Summary one = Summarize(t, config.summary, &api, &in.stages, &classes, &in.span_source, &in.host_source);
  ASSERT_EQ(one.devices.size(), 1u);
  ASSERT_GE(one.devices[0].gap_count, 4u * 8192);  // several chunks
  auto same_gaps = [](const std::vector<IdleGap>& a, const std::vector<IdleGap>& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].start_ns, b[i].start_ns) << what << " " << i;
      EXPECT_EQ(a[i].duration_ns, b[i].duration_ns) << what << " " << i;
      EXPECT_EQ(a[i].cause, b[i].cause) << what << " " << i;
      EXPECT_EQ(a[i].cause_ns, b[i].cause_ns) << what << " " << i;
      EXPECT_EQ(a[i].previous, b[i].previous) << what << " " << i;
      EXPECT_EQ(a[i].next, b[i].next) << what << " " << i;
    }
  };
  for (bool with_helper : {false, true}) {
    internal::HelpBoard board;
    std::thread helper;
    if (with_helper) helper = std::thread([&] { board.HelpUntilClosed(); });
    Summary two;
    SummarizeInto(t, config.summary, &api, &in.stages, &classes, &in.span_source, &in.host_source, nullptr, &two,
                  &board);
    board.Close();
    if (helper.joinable()) helper.join();
    ASSERT_EQ(two.devices.size(), 1u);
    const DeviceSummary& a = one.devices[0];
    const DeviceSummary& b = two.devices[0];
    EXPECT_EQ(a.idle_causes.gaps, b.idle_causes.gaps);
    EXPECT_EQ(a.idle_causes.ns, b.idle_causes.ns);
    EXPECT_EQ(a.in_iterations.gaps, b.in_iterations.gaps);
    EXPECT_EQ(a.in_iterations.ns, b.in_iterations.ns);
    EXPECT_EQ(a.in_iterations_ns, b.in_iterations_ns);
    for (size_t c = 0; c < kIdleCauseCount; ++c) {
      same_gaps(a.idle_causes.largest[c], b.idle_causes.largest[c], "largest");
      same_gaps(a.in_iterations.largest[c], b.in_iterations.largest[c], "in_iterations largest");
    }
    same_gaps(a.in_iterations_largest, b.in_iterations_largest, "in_iterations_largest");
    same_gaps(a.largest_gaps, b.largest_gaps, "largest_gaps");
    ASSERT_EQ(one.streams.size(), two.streams.size());
    for (size_t k = 0; k < one.streams.size(); ++k)
      EXPECT_EQ(one.streams[k].idle_before_ns, two.streams[k].idle_before_ns) << k;
    // Every gap got a cause, of more than one kind.
    uint64_t gaps = 0;
    int causes = 0;
    for (size_t c = 0; c < kIdleCauseCount; ++c) {
      gaps += b.idle_causes.gaps[c];
      causes += b.idle_causes.ns[c] > 0;
    }
    EXPECT_EQ(gaps, b.gap_count);
    EXPECT_GE(causes, 2);
  }
}

}  // namespace
}  // namespace tg
