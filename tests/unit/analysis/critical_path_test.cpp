// The critical path (tracegate/analyzer/critical_path.h) on runs with known truth: a small causal
// model (a host thread launching kernels, streams running them in order, a sync at the step's
// end) whose every step's path is known from how it was generated; the test works it out from
// the model's numbers, not from the analysis.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/causal_model.h"
#include "trace_builder.h"
#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {
namespace {

using testing::kUs;
using testing::Model;
using testing::Op;

// The model of causal_model.h with its defaults: each step is 2 us of host time, then per op a 4 us
// launch call (its kernel starts 10 us after the call on an idle stream, 1 us after the previous
// kernel on a busy one) and its think time, then a cudaDeviceSynchronize that returns 5 us after
// the last kernel, then 2 us of host time; ProfilerStep markers.
constexpr TimeNs kLaunchUs = Model{}.launch_us, kDelayUs = Model{}.delay_us, kGapUs = Model{}.gap_us,
                 kWakeUs = Model{}.wake_us;

Trace Generate(const std::vector<Op>& ops, int steps) { return testing::Generate(ops, Model{}, steps); }

struct PathRun {
  IterationAnalysis its;
  std::vector<KernelClass> classes;
  CriticalPathResult result;
  std::vector<std::array<TimeNs, kPathKindCount>> per_iteration;
  std::set<size_t> kernels_on_path;  // kernel rows whose duration is on a path
};

// The trace's iterations (none skipped as warm-up) and its kernels' classes.
void Prepare(const Trace& t, IterationAnalysis* its, std::vector<KernelClass>* classes) {
  IterationOptions o;
  o.skip = 0;
  EXPECT_TRUE(AnalyzeIterations(t, o, its).ok());
  KernelClassifier classifier;
  EXPECT_TRUE(KernelClassifier::Create({}, &classifier).ok());
  *classes = ClassifyKernels(t, classifier);
}

PathRun Analyze(const Trace& t) {
  PathRun r;
  Prepare(t, &r.its, &r.classes);
  CriticalPathOptions options;
  options.on_iteration = [&](size_t, const std::array<TimeNs, kPathKindCount>& k) { r.per_iteration.push_back(k); };
  options.on_segment = [&](const PathSegment& s) {
    const bool gpu_duration = s.kind != PathKind::kLaunchDelay && s.kind != PathKind::kGpuGap;
    if (s.table == PathSegment::Table::kKernel && gpu_duration && s.duration > 0)
      r.kernels_on_path.insert(static_cast<size_t>(s.row));
  };
  const Status st = AnalyzeCriticalPath(t, r.its, r.classes, nullptr, nullptr, options, &r.result);
  EXPECT_TRUE(st.ok()) << st.message();
  return r;
}

TimeNs Ns(const std::array<TimeNs, kPathKindCount>& k, PathKind kind) { return k[static_cast<size_t>(kind)]; }

// Every iteration's kinds sum exactly to its latency, and the totals to the kept steps' sum.
void ExpectExactSums(const PathRun& r) {
  ASSERT_EQ(r.per_iteration.size(), r.its.iterations.size());
  TimeNs total = 0;
  for (size_t i = 0; i < r.per_iteration.size(); ++i) {
    TimeNs sum = 0;
    for (TimeNs ns : r.per_iteration[i]) sum += ns;
    EXPECT_EQ(sum, r.its.iterations[i].latency_ns()) << "iteration " << i;
    total += r.its.iterations[i].latency_ns();
  }
  TimeNs sum = 0;
  for (TimeNs ns : r.result.kind_ns) sum += ns;
  EXPECT_EQ(sum, total);
  EXPECT_EQ(r.result.step_total_ns, total);
}

// The kernels' time by path kind, from the classes the kernels have.
std::array<TimeNs, kPathKindCount> KernelTruth(const Trace& t, const std::vector<KernelClass>& classes, size_t steps,
                                               const std::set<std::string>& names) {
  std::array<TimeNs, kPathKindCount> k{};
  for (size_t i = 0; i < t.kernels.size(); ++i)
    if (names.count(std::string(t.Name(t.kernels.name[i]))))
      k[static_cast<size_t>(PathKindOf(classes[i]))] += (t.kernels.end[i] - t.kernels.start[i]);
  for (TimeNs& ns : k) ns /= static_cast<TimeNs>(steps);
  return k;
}

// GPU-bound: the host launches far ahead; the path is the first launch, then every kernel back
// to back on the stream, the sync's wake-up and the host's 2 us at each end.
TEST(CriticalPath, GpuBoundLoopIsTheKernels) {
  const std::vector<Op> ops = {
      {"ampere_sgemm_128x64_nn", 300}, {"relu_kernel", 200}, {"ampere_sgemm_128x64_nn", 300}, {"softmax_kernel", 200}};
  const Trace t = Generate(ops, 5);
  const PathRun r = Analyze(t);
  ExpectExactSums(r);
  const auto kernels = KernelTruth(t, r.classes, 1, {"ampere_sgemm_128x64_nn", "relu_kernel", "softmax_kernel"});
  ASSERT_EQ(r.per_iteration.size(), 5u);
  for (const auto& k : r.per_iteration) {
    EXPECT_EQ(Ns(k, PathKind::kHostCompute), 4 * kUs);
    EXPECT_EQ(Ns(k, PathKind::kLaunchDelay), kDelayUs * kUs);
    EXPECT_EQ(Ns(k, PathKind::kGpuGap), 3 * kGapUs * kUs);
    EXPECT_EQ(Ns(k, PathKind::kSyncWait), kWakeUs * kUs);
    EXPECT_EQ(Ns(k, PathKind::kLaunchCall), 0);
    for (size_t c = 0; c < kKernelClassCount; ++c) EXPECT_EQ(k[c], kernels[c] / 5) << kPathKindNames[c];
  }
  EXPECT_EQ(Ns(r.result.kind_ns, PathKind::kKernelGemm), 5 * 600 * kUs);
  TimeNs gpu = 0;
  for (size_t c = 0; c < kKernelClassCount; ++c) gpu += r.result.kind_ns[c];
  EXPECT_GT(static_cast<double>(gpu) / static_cast<double>(r.result.step_total_ns), 0.97);  // 1,000 of 1,022 us
  ASSERT_FALSE(r.result.top.empty());
  EXPECT_EQ(r.result.top[0].kind, PathKind::kKernelGemm);
  EXPECT_EQ(r.result.top[0].duration, 300 * kUs);
  EXPECT_TRUE(r.result.top[0].gpu);
  EXPECT_EQ(r.result.top[0].stream, 7);
  EXPECT_EQ(r.result.top.size(), 10u);
}

// Host-bound: every kernel is done long before the host launches the next; the path is the
// host's: its think time, its launch calls, the sync (which waits for nothing) and 2 + 2 us.
TEST(CriticalPath, HostBoundLoopIsTheHost) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({i % 2 ? "ampere_sgemm_128x64_nn" : "relu_kernel", 40, 7, 150});
  const Trace t = Generate(ops, 6);
  const PathRun r = Analyze(t);
  ExpectExactSums(r);
  for (const auto& k : r.per_iteration) {
    EXPECT_EQ(Ns(k, PathKind::kHostCompute), (2 + 8 * 150 + 2) * kUs);
    EXPECT_EQ(Ns(k, PathKind::kLaunchCall), 8 * kLaunchUs * kUs);
    EXPECT_EQ(Ns(k, PathKind::kSyncWait), kWakeUs * kUs);
    for (size_t c = 0; c < kKernelClassCount; ++c) EXPECT_EQ(k[c], 0) << kPathKindNames[c];
  }
  EXPECT_TRUE(r.kernels_on_path.empty());
  const double host =
      static_cast<double>(Ns(r.result.kind_ns, PathKind::kHostCompute) + Ns(r.result.kind_ns, PathKind::kLaunchCall));
  EXPECT_GT(host / static_cast<double>(r.result.step_total_ns), 0.99);
}

// Host-bound with the think time in a named Python frame: host_compute by frame names it.
TEST(CriticalPath, HostComputeBySplitFrames) {
  std::vector<Op> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({"relu_kernel", 40, 7, 150, "resize.py(12): resize"});
  const Trace t = Generate(ops, 6);
  const PathRun r = Analyze(t);
  ExpectExactSums(r);
  ASSERT_FALSE(r.result.frames.empty());
  EXPECT_TRUE(r.result.has_frames);
  EXPECT_NE(r.result.frames[0].name.find("resize"), std::string::npos) << r.result.frames[0].name;
  EXPECT_EQ(r.result.frames[0].ns, 6 * 8 * 150 * kUs);
  TimeNs frames = r.result.frames_other_ns;
  for (const PathFrame& f : r.result.frames) frames += f.ns;
  EXPECT_EQ(frames, Ns(r.result.kind_ns, PathKind::kHostCompute));
  ASSERT_FALSE(r.result.top.empty());
  EXPECT_EQ(r.result.top[0].kind, PathKind::kHostCompute);
  EXPECT_NE(r.result.top[0].name.find("resize"), std::string::npos) << r.result.top[0].name;
  EXPECT_EQ(r.result.top[0].tid, 100);
}

// Two streams: a 2 ms kernel on stream 9 decides the step; the kernels of stream 7 run beside
// it and are off the path.
TEST(CriticalPath, TheLongKernelOnAnotherStreamDecides) {
  const std::vector<Op> ops = {{"long_kernel", 2000, 9},
                               {"ampere_sgemm_128x64_nn", 200, 7},
                               {"ampere_sgemm_128x64_nn", 200, 7},
                               {"relu_kernel", 100, 7}};
  const Trace t = Generate(ops, 4);
  const PathRun r = Analyze(t);
  ExpectExactSums(r);
  std::set<std::string> on_path;
  for (size_t row : r.kernels_on_path) on_path.insert(std::string(t.Name(t.kernels.name[row])));
  EXPECT_EQ(on_path, std::set<std::string>{"long_kernel"});
  EXPECT_EQ(r.kernels_on_path.size(), 4u);  // once per step
  for (const auto& k : r.per_iteration) {
    EXPECT_EQ(Ns(k, PathKind::kKernelOther), 2000 * kUs);
    EXPECT_EQ(Ns(k, PathKind::kKernelGemm), 0);
    EXPECT_EQ(Ns(k, PathKind::kLaunchDelay), kDelayUs * kUs);
    EXPECT_EQ(Ns(k, PathKind::kHostCompute), 4 * kUs);
    EXPECT_EQ(Ns(k, PathKind::kSyncWait), kWakeUs * kUs);
  }
  ASSERT_EQ(r.result.top.size(), 10u);
  EXPECT_EQ(r.result.top[0].name, "long_kernel");
  EXPECT_EQ(r.result.top[0].stream, 9);
  EXPECT_EQ(r.result.top[0].iteration, 0u);  // the four tie: the earliest first
  EXPECT_EQ(r.result.top[3].iteration, 3u);
  EXPECT_EQ(r.result.top[4].kind, PathKind::kLaunchDelay);  // 10 us, the next longest
}

// At most the asked number of segments is kept, however many iterations there are.
TEST(CriticalPath, KeepsAFixedNumberOfSegments) {
  const Trace t = Generate({{"ampere_sgemm_128x64_nn", 30}, {"relu_kernel", 20}}, 200);
  IterationAnalysis its;
  std::vector<KernelClass> classes;
  Prepare(t, &its, &classes);
  CriticalPathOptions options;
  options.top_segments = 3;
  CriticalPathResult r;
  ASSERT_TRUE(AnalyzeCriticalPath(t, its, classes, nullptr, nullptr, options, &r).ok());
  EXPECT_EQ(r.iterations, 200u);
  EXPECT_EQ(r.top.size(), 3u);
  EXPECT_GT(r.segments, 200u * 6);
}

// One iteration's whole path is kept for the timeline's drawing: its segments in time order,
// without overlap, summing to the iteration's latency; the same segments on_segment sees for it;
// with a cap, the longest of them.
TEST(CriticalPath, KeepsTheDrawnIterationsWholePath) {
  const Trace t = Generate({{"ampere_sgemm_128x64_nn", 300}, {"relu_kernel", 200}, {"softmax_kernel", 100}}, 5);
  IterationAnalysis its;
  std::vector<KernelClass> classes;
  Prepare(t, &its, &classes);
  CriticalPathOptions options;
  options.detail_iteration = 2;
  std::vector<PathSegment> seen;
  options.on_segment = [&](const PathSegment& s) {
    if (s.iteration == 2 && s.duration > 0) seen.push_back(s);
  };
  CriticalPathResult r;
  ASSERT_TRUE(AnalyzeCriticalPath(t, its, classes, nullptr, nullptr, options, &r).ok());
  ASSERT_TRUE(r.has_detail);
  EXPECT_EQ(r.detail_index, its.iterations[2].index);
  EXPECT_EQ(r.detail_total, seen.size());
  ASSERT_EQ(r.detail.size(), seen.size());
  TimeNs sum = 0;
  for (size_t i = 0; i < r.detail.size(); ++i) {
    sum += r.detail[i].duration;
    if (i > 0) {
      EXPECT_GE(r.detail[i].start, r.detail[i - 1].start + r.detail[i - 1].duration) << i;
    }
    // on_segment sees the path from the end backwards.
    const PathSegment& s = seen[seen.size() - 1 - i];
    EXPECT_EQ(r.detail[i].start, s.start) << i;
    EXPECT_EQ(r.detail[i].kind, s.kind) << i;
  }
  EXPECT_EQ(sum, its.iterations[2].latency_ns());
  EXPECT_EQ(r.detail.front().start, its.iterations[2].start);
  // The kernels on it are named and placed on their stream.
  size_t kernels = 0;
  for (const PathTopSegment& s : r.detail)
    if (s.kind == PathKind::kKernelGemm) {
      ++kernels;
      EXPECT_EQ(s.name, "ampere_sgemm_128x64_nn");
      EXPECT_TRUE(s.gpu);
      EXPECT_EQ(s.stream, 7);
    }
  EXPECT_EQ(kernels, 1u);

  options.detail_cap = 3;
  CriticalPathResult capped;
  ASSERT_TRUE(AnalyzeCriticalPath(t, its, classes, nullptr, nullptr, options, &capped).ok());
  ASSERT_EQ(capped.detail.size(), 3u);
  EXPECT_EQ(capped.detail_total, r.detail_total);
  std::vector<TimeNs> longest;
  for (const PathTopSegment& s : r.detail) longest.push_back(s.duration);
  std::sort(longest.rbegin(), longest.rend());
  std::vector<TimeNs> kept;
  for (const PathTopSegment& s : capped.detail) kept.push_back(s.duration);
  std::sort(kept.rbegin(), kept.rend());
  EXPECT_EQ(kept, std::vector<TimeNs>(longest.begin(), longest.begin() + 3));

  // Without one, none.
  options.detail_iteration = SIZE_MAX;
  CriticalPathResult none;
  ASSERT_TRUE(AnalyzeCriticalPath(t, its, classes, nullptr, nullptr, options, &none).ok());
  EXPECT_FALSE(none.has_detail);
  EXPECT_TRUE(none.detail.empty());
}

TEST(CriticalPath, NoIterationsIsAnError) {
  Trace t;
  FinalizeTrace(t);
  IterationAnalysis its;
  CriticalPathResult r;
  EXPECT_FALSE(AnalyzeCriticalPath(t, its, {}, nullptr, nullptr, {}, &r).ok());
}

}  // namespace
}  // namespace tg
