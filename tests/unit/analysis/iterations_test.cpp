#include "tracegate/analyzer/iterations.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "trace_builder.h"
#include "tracegate/analyzer/model.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddCopy;
using testing::AddKernel;
using testing::AddMemset;
using testing::AddRange;
using testing::AddSync;

TimeNs PhaseOf(const Iteration& it, Phase p) { return it.phase_ns[static_cast<size_t>(p)]; }

// Every analysis must partition each span exactly, and GPU-busy time is the three GPU phases.
void ExpectPartitions(const IterationAnalysis& a) {
  for (const Iteration& it : a.iterations) {
    TimeNs sum = 0;
    for (TimeNs p : it.phase_ns) {
      EXPECT_GE(p, 0);
      sum += p;
    }
    EXPECT_EQ(sum, it.latency_ns()) << "iteration " << it.index;
    EXPECT_EQ(it.gpu_busy_ns, PhaseOf(it, Phase::kH2d) + PhaseOf(it, Phase::kD2h) + PhaseOf(it, Phase::kInfer));
  }
}

IterationAnalysis Analyze(const Trace& t, const IterationOptions& options = {}) {
  IterationAnalysis a;
  Status s = AnalyzeIterations(t, options, &a);
  EXPECT_TRUE(s.ok()) << s.message();
  ExpectPartitions(a);
  return a;
}

Status AnalyzeError(const Trace& t, const IterationOptions& options) {
  IterationAnalysis a;
  Status s = AnalyzeIterations(t, options, &a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  return s;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Iterations, PhasesOfOneIterationAreExact) {
  Trace t;
  AddRange(t, "iteration", 0, 1000);
  AddRange(t, "pre", 0, 200, 100, 100, 1);
  AddCopy(t, CopyKind::kHtoD, 4096, 200, 300);
  AddKernel(t, "conv", 300, 600);
  AddKernel(t, "relu", 650, 700);
  AddCopy(t, CopyKind::kDtoH, 4096, 700, 750, MemKind::kDevice, MemKind::kPinned);
  AddRange(t, "postprocess", 750, 950, 100, 100, 1);
  IterationAnalysis a = Analyze(t);
  ASSERT_TRUE(a.from_markers);
  EXPECT_EQ(a.pid, 100);
  EXPECT_EQ(a.found, 1u);
  ASSERT_EQ(a.iterations.size(), 1u);
  const Iteration& it = a.iterations[0];
  EXPECT_EQ(it.name, "iteration");
  EXPECT_EQ(it.start, 0);
  EXPECT_EQ(it.end, 1000);
  EXPECT_EQ(PhaseOf(it, Phase::kPre), 200);    // 0-200
  EXPECT_EQ(PhaseOf(it, Phase::kH2d), 100);    // 200-300
  EXPECT_EQ(PhaseOf(it, Phase::kInfer), 350);  // 300-600 + 650-700
  EXPECT_EQ(PhaseOf(it, Phase::kD2h), 50);     // 700-750
  EXPECT_EQ(PhaseOf(it, Phase::kPost), 200);   // 750-950
  EXPECT_EQ(PhaseOf(it, Phase::kIdle), 100);   // 600-650 and 950-1000
  EXPECT_EQ(it.gpu_busy_ns, 500);              // 100 + 350 + 50
  EXPECT_EQ(it.pre_range_ns, 200);
  EXPECT_EQ(it.post_range_ns, 200);
  EXPECT_EQ(it.infer_range_ns, 0);
  EXPECT_EQ(it.kernels, 2u);
  EXPECT_EQ(it.memcpys, 2u);
  // One iteration of 1 ms: every ratio is the phase / 1000.
  EXPECT_DOUBLE_EQ(a.phase_ratio[static_cast<size_t>(Phase::kInfer)], 0.35);
  EXPECT_DOUBLE_EQ(a.phase_ratio[static_cast<size_t>(Phase::kIdle)], 0.1);
  EXPECT_DOUBLE_EQ(a.phase_mean_ms[static_cast<size_t>(Phase::kPre)], 0.0002);
}

TEST(Iterations, OverlapsGoToTheFirstActivePhase) {
  Trace t;
  AddRange(t, "step 1", 0, 1000);
  AddRange(t, "preprocessing", 0, 500, 100, 100, 1);
  AddRange(t, "preprocessing", 50, 150, 100, 100, 2);  // nested: union still 0-500
  AddRange(t, "forward", 0, 1000, 100, 100, 1);        // infer range: takes no time from idle
  AddCopy(t, CopyKind::kHtoD, 64, 100, 200);
  AddKernel(t, "gemm", 150, 400);                                                 // under the copy 150-200: h2d wins
  AddCopy(t, CopyKind::kDtoD, 64, 380, 450);                                      // other copies are infer
  AddMemset(t, 64, 600, 620);                                                     // memsets are infer
  AddCopy(t, CopyKind::kDtoH, 64, 610, 700, MemKind::kDevice, MemKind::kPinned);  // d2h over infer
  AddRange(t, "post", 650, 900, 100, 100, 1);                                     // post under d2h until 700
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 1u);
  const Iteration& it = a.iterations[0];
  EXPECT_EQ(PhaseOf(it, Phase::kH2d), 100);    // 100-200
  EXPECT_EQ(PhaseOf(it, Phase::kD2h), 90);     // 610-700
  EXPECT_EQ(PhaseOf(it, Phase::kInfer), 260);  // 200-450 (250) + 600-610 (10)
  EXPECT_EQ(PhaseOf(it, Phase::kPre), 150);    // 0-100 + 450-500
  EXPECT_EQ(PhaseOf(it, Phase::kPost), 200);   // 700-900
  EXPECT_EQ(PhaseOf(it, Phase::kIdle), 200);   // 500-600 + 900-1000
  EXPECT_EQ(it.gpu_busy_ns, 450);              // 100-450 + 600-700
  EXPECT_EQ(it.pre_range_ns, 500);
  EXPECT_EQ(it.infer_range_ns, 1000);
  EXPECT_EQ(it.post_range_ns, 250);
  EXPECT_EQ(it.kernels, 1u);
  EXPECT_EQ(it.memcpys, 3u);
  EXPECT_EQ(it.memsets, 1u);
}

// Phases against a nanosecond-by-nanosecond count: random kernels on overlapping streams,
// copies each way and device to device, memsets, and pre / infer / post ranges, nested and
// overlapping, in 40 steps. Each instant goes to the first active phase in priority order (H2D,
// D2H, GPU work, pre, post; idle otherwise), and each range kind's own union is counted too.
TEST(Iterations, PhasesMatchAnInstantByInstantCount) {
  Trace t;
  std::mt19937 rng(7);
  constexpr TimeNs kStep = 2000;
  constexpr int kSteps = 40;
  auto span = [&](TimeNs base, TimeNs max_len) {
    const TimeNs a = base + static_cast<TimeNs>(rng() % kStep);
    const TimeNs b = std::min(base + kStep, a + static_cast<TimeNs>(rng() % max_len));
    return std::pair<TimeNs, TimeNs>{a, b};
  };
  for (int k = 0; k < kSteps; ++k) AddRange(t, "step " + std::to_string(k), k * kStep, (k + 1) * kStep);
  for (int k = 0; k < kSteps; ++k) {
    const TimeNs base = k * kStep;
    for (int j = 0; j < 12; ++j) {
      const auto [a, b] = span(base, 300);
      AddKernel(t, j % 2 ? "gemm" : "relu", a, b, 0, 7 + j % 3);
    }
    for (CopyKind kind : {CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kDtoD}) {
      const auto [a, b] = span(base, 200);
      AddCopy(t, kind, 64, a, b, MemKind::kPinned, MemKind::kDevice, 0, 9);
    }
    const auto [ma, mb] = span(base, 100);
    AddMemset(t, 64, ma, mb, 0, 8);
    for (const char* name : {"preprocessing", "forward", "postprocess", "preprocessing", "postprocess"}) {
      const auto [a, b] = span(base, 600);
      AddRange(t, name, a, b, 100, 100, 1);
    }
  }
  FinalizeTrace(t);
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), static_cast<size_t>(kSteps));
  std::map<std::string, int> range_kind{{"preprocessing", 0}, {"forward", 1}, {"postprocess", 2}};
  for (const Iteration& it : a.iterations) {
    const TimeNs n = it.end - it.start;
    std::vector<uint8_t> h2d(n), d2h(n), gpu(n);
    std::array<std::vector<uint8_t>, 3> ranges{std::vector<uint8_t>(n), std::vector<uint8_t>(n),
                                               std::vector<uint8_t>(n)};
    auto mark = [&](std::vector<uint8_t>& v, TimeNs s, TimeNs e) {
      for (TimeNs x = std::max(s, it.start); x < std::min(e, it.end); ++x) v[x - it.start] = 1;
    };
    for (size_t i = 0; i < t.kernels.size(); ++i) mark(gpu, t.kernels.start[i], t.kernels.end[i]);
    for (size_t i = 0; i < t.memsets.size(); ++i) mark(gpu, t.memsets.start[i], t.memsets.end[i]);
    for (size_t i = 0; i < t.memcpys.size(); ++i) {
      const CopyKind kind = t.memcpys.kind[i];
      mark(kind == CopyKind::kHtoD ? h2d : kind == CopyKind::kDtoH ? d2h : gpu, t.memcpys.start[i], t.memcpys.end[i]);
    }
    for (size_t i = 0; i < t.ranges.size(); ++i) {
      const auto found = range_kind.find(std::string(t.Name(t.ranges.name[i])));
      if (found != range_kind.end()) mark(ranges[found->second], t.ranges.start[i], t.ranges.end[i]);
    }
    std::array<TimeNs, kPhaseCount> want{};
    std::array<TimeNs, 3> range_ns{};
    TimeNs busy = 0;
    for (TimeNs x = 0; x < n; ++x) {
      const Phase p = h2d[x]         ? Phase::kH2d
                      : d2h[x]       ? Phase::kD2h
                      : gpu[x]       ? Phase::kInfer
                      : ranges[0][x] ? Phase::kPre
                      : ranges[2][x] ? Phase::kPost
                                     : Phase::kIdle;
      want[static_cast<size_t>(p)]++;
      busy += h2d[x] || d2h[x] || gpu[x];
      for (size_t r = 0; r < 3; ++r) range_ns[r] += ranges[r][x];
    }
    EXPECT_EQ(it.phase_ns, want) << it.name;
    EXPECT_EQ(it.gpu_busy_ns, busy) << it.name;
    EXPECT_EQ(it.pre_range_ns, range_ns[0]) << it.name;
    EXPECT_EQ(it.infer_range_ns, range_ns[1]) << it.name;
    EXPECT_EQ(it.post_range_ns, range_ns[2]) << it.name;
  }
}

TEST(Iterations, WorkFollowsItsLaunchAndLagExtendsTheSpan) {
  Trace t;
  AddRange(t, "iteration", 0, 1000);
  AddRange(t, "iteration", 1000, 2000);
  AddApi(t, "cudaLaunchKernel", 900, 950, 1);               // launched in iteration 0 ...
  size_t late = AddKernel(t, "gemm", 1100, 1300, 0, 7, 1);  // ... runs during iteration 1
  AddApi(t, "cudaLaunchKernel", 1050, 1060, 2);
  AddKernel(t, "relu", 1300, 1400, 0, 7, 2);
  AddApi(t, "cudaStreamSynchronize", 1900, 2200, 3);  // waits past the marker
  AddSync(t, SyncKind::kStreamSync, 1900, 2200, 3);
  AddApi(t, "cudaLaunchKernel", 1950, 1960, 4);
  AddKernel(t, "tail", 2000, 2500, 0, 7, 4);  // lags 500 past the marker
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.kernel_iteration[late], 0);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{0, 1, 1, 1}));
  EXPECT_EQ(a.sync_iteration, (std::vector<int32_t>{1}));
  const Iteration& first = a.iterations[0];
  EXPECT_EQ(first.start, 0);
  EXPECT_EQ(first.end, 1300);                     // its kernel ends at 1300
  EXPECT_EQ(PhaseOf(first, Phase::kInfer), 200);  // 1100-1300
  EXPECT_EQ(PhaseOf(first, Phase::kIdle), 1100);
  const Iteration& second = a.iterations[1];
  EXPECT_EQ(second.marker_end, 2000);
  EXPECT_EQ(second.host_ns(), 1000);               // the host step
  EXPECT_EQ(second.start, 1300);                   // the GPU step starts where the first one's work ends
  EXPECT_EQ(second.end, 2500);                     // max(2000, 2500); the sync does not extend it
  EXPECT_EQ(PhaseOf(second, Phase::kInfer), 600);  // 1300-1400 + 2000-2500
  EXPECT_EQ(PhaseOf(second, Phase::kIdle), 600);   // 1200 - 600
  EXPECT_EQ(second.syncs, 1u);
  EXPECT_EQ(second.sync_ns, 300);
  EXPECT_EQ(a.total_ns, 2500);  // 1300 + 1200: no instant counted twice
}

// The phases are streamed iteration by iteration while each GPU table's rows come in about their
// iterations' order (a row a couple of iterations early or late, work spanning iterations), and
// computed from every piece at once when a table's iterations decrease further: the phases (and
// the stages' pieces) must not depend on the rows' order.
TEST(Iterations, PhasesDoNotDependOnTheRowsOrder) {
  struct Work {
    int kind;  // 0 kernel, 1 h2d copy, 2 d2h copy, 3 memset, 4 another process's kernel
    TimeNs start, end;
  };
  constexpr int kIterations = 8;
  std::vector<Work> work;
  for (TimeNs i = 0; i < kIterations; ++i) {
    const TimeNs base = 1000 * i;
    work.push_back({1, base + 10, base + 60});
    work.push_back({0, base + 50, base + 300});
    work.push_back({0, base + 250, base + 400});  // overlaps the one before (another stream)
    work.push_back({3, base + 420, base + 440});
    work.push_back({0, base + 500, base + 700});
    work.push_back({2, base + 690, base + 760});
  }
  work.push_back({4, 2300, 6600});  // spans iterations 2-6 (another process's: it extends no span)
  work.push_back({0, 7950, 8100});  // ends past the last marker: lag extends the last span
  auto build = [&](const std::vector<size_t>& order) {
    Trace t;
    for (TimeNs i = 0; i < kIterations; ++i) {
      AddRange(t, "iteration", 1000 * i, 1000 * i + 1000);
      AddRange(t, "preprocess", 1000 * i + 800, 1000 * i + 900, 100, 100, 1);
      AddRange(t, "postprocess", 1000 * i + 850, 1000 * i + 950, 100, 100, 1);
    }
    AddApi(t, "cudaLaunchKernel", 2200, 2210, 99, 200);
    for (size_t w : order) {
      const Work& x = work[w];
      if (x.kind == 0) AddKernel(t, "k", x.start, x.end);
      if (x.kind == 1) AddCopy(t, CopyKind::kHtoD, 64, x.start, x.end);
      if (x.kind == 2) AddCopy(t, CopyKind::kDtoH, 64, x.start, x.end, MemKind::kDevice, MemKind::kPinned);
      if (x.kind == 3) AddMemset(t, 64, x.start, x.end);
      if (x.kind == 4) AddKernel(t, "theirs", x.start, x.end, 0, 8, 99);
    }
    return t;
  };
  std::vector<size_t> in_order(work.size());  // by start
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  auto by = [&](auto key) {
    std::vector<size_t> order = in_order;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(work[a]) < key(work[b]); });
    return order;
  };
  in_order = by([](const Work& w) { return w.start; });
  const IterationAnalysis expected = Analyze(build(in_order));
  ASSERT_EQ(expected.iterations.size(), static_cast<size_t>(kIterations));
  EXPECT_EQ(PhaseOf(expected.iterations[0], Phase::kH2d), 50);
  EXPECT_EQ(PhaseOf(expected.iterations[3], Phase::kInfer), 1000 - 50 - 70);  // the long kernel fills the rest
  EXPECT_EQ(expected.iterations[7].end, 8100);
  EXPECT_EQ(expected.stage_pieces.size(), 2u * kIterations);

  // Iterations decrease: every piece at once.
  const std::vector<size_t> reversed(in_order.rbegin(), in_order.rend());
  // Iteration 1's rows before iteration 0's, 3's before 2's, ...: streamed.
  const std::vector<size_t> late = by([](const Work& w) { return std::pair{(w.start / 1000) ^ 1, w.start}; });
  // The work that spans iterations first: its later pieces wait (read far ahead).
  const std::vector<size_t> early = by([](const Work& w) { return w.end - w.start < 1000; });
  for (const auto& order : {reversed, late, early}) {
    const IterationAnalysis a = Analyze(build(order));
    ASSERT_EQ(a.iterations.size(), expected.iterations.size());
    for (size_t i = 0; i < a.iterations.size(); ++i) {
      const Iteration& x = a.iterations[i];
      const Iteration& y = expected.iterations[i];
      EXPECT_EQ(x.start, y.start) << i;
      EXPECT_EQ(x.end, y.end) << i;
      EXPECT_EQ(x.phase_ns, y.phase_ns) << i;
      EXPECT_EQ(x.gpu_busy_ns, y.gpu_busy_ns) << i;
      EXPECT_EQ(x.pre_range_ns, y.pre_range_ns) << i;
      EXPECT_EQ(x.post_range_ns, y.post_range_ns) << i;
      EXPECT_EQ(x.infer_range_ns, y.infer_range_ns) << i;
    }
    ASSERT_EQ(a.stage_pieces.size(), expected.stage_pieces.size());
    for (size_t i = 0; i < a.stage_pieces.size(); ++i) {
      EXPECT_EQ(a.stage_pieces[i].iteration, expected.stage_pieces[i].iteration);
      EXPECT_EQ(a.stage_pieces[i].start, expected.stage_pieces[i].start);
      EXPECT_EQ(a.stage_pieces[i].end, expected.stage_pieces[i].end);
      EXPECT_EQ(a.stage_pieces[i].post, expected.stage_pieces[i].post);
    }
  }
}

TEST(Iterations, WorkWithoutLaunchUsesItsStartElseItsEnd) {
  Trace t;
  AddRange(t, "iteration", 0, 1000);
  AddRange(t, "iteration", 1000, 2000);
  AddKernel(t, "early", -100, 50);               // starts before every marker, ends in iteration 0
  AddKernel(t, "edge", 900, 1100);               // starts in iteration 0
  AddKernel(t, "touch", -50, 0);                 // ends exactly where iteration 0 starts: no overlap
  AddKernel(t, "after", 2500, 2600);             // in no marker
  AddKernel(t, "orphan", 1200, 1300, 0, 7, 99);  // correlation without an API call
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0, 0, -1, -1, 1}));
  const Iteration& first = a.iterations[0];
  EXPECT_EQ(first.start, 0);  // the span starts at the marker
  EXPECT_EQ(first.end, 1100);
  EXPECT_EQ(PhaseOf(first, Phase::kInfer), 250);  // 0-50 (clipped) + 900-1100
  EXPECT_EQ(first.kernels, 2u);
}

TEST(Iterations, WorkOfAnotherProcessIsLeftOut) {
  Trace t;
  AddRange(t, "iteration", 0, 1000, 100);
  AddApi(t, "cudaLaunchKernel", 100, 110, 1, 100);
  AddKernel(t, "mine", 200, 300, 0, 7, 1);
  AddApi(t, "cudaLaunchKernel", 120, 130, 2, 200);  // another process
  AddKernel(t, "theirs", 300, 400, 0, 7, 2);
  AddRange(t, "pre", 400, 500, 200);  // another process's stage: not ours
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0, -1}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{0, -1}));
  EXPECT_EQ(a.iterations[0].kernels, 1u);
  // Its kernel is not ours, but the device is busy with it: that time is not idle.
  EXPECT_EQ(PhaseOf(a.iterations[0], Phase::kInfer), 200);
  EXPECT_EQ(PhaseOf(a.iterations[0], Phase::kPre), 0);
  EXPECT_EQ(PhaseOf(a.iterations[0], Phase::kIdle), 800);
}

TEST(Iterations, DefaultRegexNamesIterations) {
  auto is_marker = [](const std::string& name) {
    Trace t;
    AddRange(t, name, 0, 100);
    return Analyze(t).from_markers;
  };
  for (const char* yes : {"ProfilerStep#3", "iteration", "Iteration 7", "iter_2", "step 12", "ITER", "step#4"}) {
    EXPECT_TRUE(is_marker(yes)) << yes;
  }
  for (const char* no : {"stepper", "forward", "step", "iterations", "my iteration", "ProfilerStep#"}) {
    EXPECT_FALSE(is_marker(no)) << no;
  }
}

TEST(Iterations, OnlyOutermostMatchesAndNoMarks) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 1000);
  AddRange(t, "iteration", 100, 200, 100, 100, 1);  // inside step 1: not an iteration
  AddRange(t, "ProfilerStep#2", 1000, 2000);
  AddRange(t, "ProfilerStep#2", 1000, 2000, 100, 101);  // the same range on another thread
  AddRange(t, "iteration", 1500, 1500);                 // an NVTX mark: not an iteration
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.found, 2u);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.iterations[0].name, "ProfilerStep#1");
  EXPECT_EQ(a.iterations[1].name, "ProfilerStep#2");
  EXPECT_EQ(a.iterations[1].index, 1u);
  EXPECT_TRUE(StartsWith(a.source, "2 ranges matching '")) << a.source;
}

TEST(Iterations, SkipDropsWarmUp) {
  Trace t;
  for (int i = 0; i < 3; ++i) {
    AddRange(t, "iteration", i * 1000, i * 1000 + 1000);
    AddApi(t, "cudaLaunchKernel", i * 1000 + 10, i * 1000 + 20, i + 1);
    AddKernel(t, "k", i * 1000 + 100, i * 1000 + 200, 0, 7, i + 1);
  }
  IterationOptions options;
  options.skip = 1;
  IterationAnalysis a = Analyze(t, options);
  EXPECT_EQ(a.found, 3u);
  EXPECT_EQ(a.skipped, 1u);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.iterations[0].index, 1u);
  EXPECT_EQ(a.iterations[0].start, 1000);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{-1, 0, 1}));

  options.skip = 3;
  EXPECT_EQ(AnalyzeError(t, options).message(), "--skip 3 drops all 3 iterations found; lower it");
  options.skip = 5;
  EXPECT_EQ(AnalyzeError(t, options).message(), "--skip 5 drops all 3 iterations found; lower it");
}

// --skip auto (the default): the warm-up rule on the latencies with nothing dropped, then exactly
// what --skip N gives.
void ExpectSameAnalysis(const IterationAnalysis& a, const IterationAnalysis& b) {
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    EXPECT_EQ(a.iterations[i].index, b.iterations[i].index);
    EXPECT_EQ(a.iterations[i].start, b.iterations[i].start);
    EXPECT_EQ(a.iterations[i].end, b.iterations[i].end);
    EXPECT_EQ(a.iterations[i].phase_ns, b.iterations[i].phase_ns);
    EXPECT_EQ(a.iterations[i].kernels, b.iterations[i].kernels);
  }
  EXPECT_EQ(a.kernel_iteration, b.kernel_iteration);
  EXPECT_EQ(a.api_iteration, b.api_iteration);
  EXPECT_EQ(a.sync_iteration, b.sync_iteration);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.latency_ms.mean, b.latency_ms.mean);
}

// Iteration 0 runs 10 us (a warm-up), the five after it 1 us each.
Trace WarmupTrace() {
  Trace t;
  TimeNs start = 0;
  for (int i = 0; i < 6; ++i) {
    const TimeNs len = i == 0 ? 10'000 : 1'000;
    AddRange(t, "iteration", start, start + len);
    AddApi(t, "cudaLaunchKernel", start + 10, start + 20, i + 1);
    AddKernel(t, "k", start + 100, start + len - 100, 0, 7, i + 1);
    start += len;
  }
  return t;
}

TEST(Iterations, AutoSkipDropsTheWarmUp) {
  const Trace t = WarmupTrace();
  IterationAnalysis a = Analyze(t);  // default: --skip auto
  EXPECT_TRUE(a.skip_auto);
  EXPECT_EQ(a.found, 6u);
  EXPECT_EQ(a.skipped, 1u);
  EXPECT_TRUE(a.warmup.eligible);
  EXPECT_EQ(a.warmup.dropped, 1u);
  EXPECT_EQ(a.warmup.median, 1000);
  ASSERT_EQ(a.dropped.size(), 1u);
  EXPECT_EQ(a.dropped[0].index, 0u);
  EXPECT_EQ(a.dropped[0].name, "iteration");
  EXPECT_EQ(a.dropped[0].latency_ns(), 10'000);
  ASSERT_EQ(a.iterations.size(), 5u);
  EXPECT_EQ(a.iterations[0].index, 1u);
  EXPECT_EQ(a.latency_ms.mean, 0.001);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{-1, 0, 1, 2, 3, 4}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{-1, 0, 1, 2, 3, 4}));
  IterationOptions one;
  one.skip = 1;
  IterationAnalysis b = Analyze(t, one);
  EXPECT_FALSE(b.skip_auto);
  ExpectSameAnalysis(a, b);
  // --skip 0 keeps it.
  IterationOptions none;
  none.skip = 0;
  IterationAnalysis c = Analyze(t, none);
  EXPECT_EQ(c.skipped, 0u);
  EXPECT_TRUE(c.dropped.empty());
  EXPECT_EQ(c.iterations.size(), 6u);
  EXPECT_EQ(c.iterations[0].latency_ns(), 10'000);
}

TEST(Iterations, AutoSkipKeepsASteadyRunAndTooShortOnes) {
  Trace t;
  for (int i = 0; i < 5; ++i) {
    AddRange(t, "iteration", i * 1000, i * 1000 + 1000);
    AddKernel(t, "k", i * 1000 + 100, i * 1000 + 900);
  }
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.skipped, 0u);
  EXPECT_TRUE(a.warmup.eligible);
  EXPECT_EQ(a.warmup.first_ratio, 1);
  EXPECT_EQ(a.iterations.size(), 5u);
  // Three iterations, the first 100x the others: too few to tell warm-up from the steady state.
  Trace three;
  AddRange(three, "iteration", 0, 100'000);
  AddRange(three, "iteration", 100'000, 101'000);
  AddRange(three, "iteration", 101'000, 102'000);
  IterationAnalysis b = Analyze(three);
  EXPECT_FALSE(b.warmup.eligible);
  EXPECT_EQ(b.skipped, 0u);
  EXPECT_EQ(b.iterations.size(), 3u);
}

// The rule reads the latencies --skip 0 reports: a span starts where the one before it ends. Here
// the host runs ahead and iteration 0's kernel ends inside iteration 1's marker, so with nothing
// dropped iteration 0 spans [0, 2500) and iteration 1 starts at 2500; once iteration 0 is
// dropped, iteration 1 starts at its marker (2000), as with --skip 1.
TEST(Iterations, AutoSkipDecidesOnSeparatedSpansAndKeepsSkipNsSpans) {
  Trace t;
  for (int i = 0; i < 6; ++i) {
    const TimeNs s = i == 0 ? 0 : 1'000 + i * 1'000;  // markers [0, 2000), [2000, 3000), ...
    AddRange(t, "step " + std::to_string(i), s, i == 0 ? 2'000 : s + 1'000);
    AddApi(t, "cudaLaunchKernel", s + 10, s + 20, i + 1);
    if (i == 0) AddKernel(t, "warm", 100, 2'500, 0, 7, 1);
    else if (i == 1) AddKernel(t, "k", 2'600, 2'900, 0, 7, 2);
    else AddKernel(t, "k", s + 100, s + 900, 0, 7, i + 1);
  }
  IterationOptions none;
  none.skip = 0;
  IterationAnalysis all = Analyze(t, none);
  ASSERT_EQ(all.iterations.size(), 6u);
  EXPECT_EQ(all.iterations[0].latency_ns(), 2'500);  // more than 2x the median 1000 of the rest
  EXPECT_EQ(all.iterations[1].start, 2'500);
  EXPECT_EQ(all.iterations[1].latency_ns(), 500);  // [2500, 3000): its marker ends at 3000
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.skipped, 1u);
  EXPECT_EQ(a.dropped[0].latency_ns(), 2'500);
  EXPECT_EQ(a.dropped[0].name, "step 0");
  EXPECT_EQ(a.iterations[0].start, 2'000);
  EXPECT_EQ(a.iterations[0].latency_ns(), 1'000);
  IterationOptions one;
  one.skip = 1;
  ExpectSameAnalysis(a, Analyze(t, one));
}

TEST(Iterations, FixedSkipKeepsTheDroppedLatencies) {
  IterationOptions two;
  two.skip = 2;
  IterationAnalysis a = Analyze(WarmupTrace(), two);
  EXPECT_FALSE(a.skip_auto);
  ASSERT_EQ(a.dropped.size(), 2u);
  EXPECT_EQ(a.dropped[0].latency_ns(), 10'000);
  EXPECT_EQ(a.dropped[1].latency_ns(), 1'000);
  EXPECT_EQ(a.dropped[1].index, 1u);
  EXPECT_EQ(a.iterations.size(), 4u);
}

TEST(Iterations, InvalidOptions) {
  Trace t;
  AddRange(t, "iteration", 0, 100);
  IterationOptions bad_iteration;
  bad_iteration.iteration_regex = "(";
  EXPECT_TRUE(StartsWith(AnalyzeError(t, bad_iteration).message(), "--iteration: invalid regular expression '(': "));
  IterationOptions bad_pre;
  bad_pre.pre_regex = "[a-";
  EXPECT_TRUE(StartsWith(AnalyzeError(t, bad_pre).message(), "--phase pre=: invalid regular expression '[a-': "));
  IterationOptions bad_post;
  bad_post.post_regex = "*x";
  EXPECT_TRUE(StartsWith(AnalyzeError(t, bad_post).message(), "--phase post=: invalid regular expression"));
  IterationOptions bad_batch;
  bad_batch.batch = 0;
  EXPECT_TRUE(StartsWith(AnalyzeError(t, bad_batch).message(), "--batch 0"));
}

TEST(Iterations, NoMarkersMakeTheWholeTraceOneIteration) {
  Trace t;
  AddRange(t, "forward", 40, 300);
  AddApi(t, "cudaLaunchKernel", 50, 60, 1, 100);
  AddApi(t, "cudaLaunchKernel", 60, 70, 2, 200);  // any process counts here
  AddKernel(t, "gemm", 100, 200, 0, 7, 1);
  AddKernel(t, "gemm", 200, 250, 0, 7, 2);
  AddSync(t, SyncKind::kContextSync, 250, 260);
  IterationAnalysis a = Analyze(t);
  EXPECT_FALSE(a.from_markers);
  EXPECT_EQ(a.pid, kUnknownId);
  EXPECT_TRUE(StartsWith(a.source, "no ranges match '")) << a.source;
  ASSERT_EQ(a.iterations.size(), 1u);
  const Iteration& it = a.iterations[0];
  EXPECT_EQ(it.name, "");
  EXPECT_EQ(it.start, 40);  // Trace::Window()
  EXPECT_EQ(it.end, 300);
  EXPECT_EQ(PhaseOf(it, Phase::kInfer), 150);  // 100-250
  EXPECT_EQ(PhaseOf(it, Phase::kIdle), 110);   // 260 - 150
  EXPECT_EQ(it.infer_range_ns, 260);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(a.sync_iteration, (std::vector<int32_t>{0}));

  IterationOptions options;
  options.skip = 1;
  EXPECT_EQ(AnalyzeError(t, options).message(), "--skip 1 drops all 1 iteration found; lower it");
}

// Without markers the iteration is the span of the GPU work and phase ranges: 30 ms of start-up
// (an API call at 0) before 1 ms of GPU work is not the iteration's idle time; the launch of
// the first kernel is.
TEST(Iterations, NoMarkersSpanTheGpuWorkAndPhaseRangesNotTheStartUp) {
  constexpr TimeNs kMs = 1'000'000;
  Trace t;
  AddApi(t, "cudaMalloc", 0, 1 * kMs, kUnknownId);
  AddApi(t, "cudaLaunchKernel", 30 * kMs, 30 * kMs + 10, 1);
  AddKernel(t, "gemm", 30 * kMs + 100, 30 * kMs + 600'100, 0, 7, 1);
  AddKernel(t, "gemm", 30 * kMs + 700'100, 31 * kMs + 100, 0, 7, 2);
  AddApi(t, "cudaFree", 40 * kMs, 41 * kMs, kUnknownId);
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 1u);
  const Iteration& it = a.iterations[0];
  EXPECT_EQ(it.start, 30 * kMs);  // the launch of the first kernel
  EXPECT_EQ(it.end, 31 * kMs + 100);
  EXPECT_EQ(PhaseOf(it, Phase::kInfer), 900'000);
  EXPECT_EQ(PhaseOf(it, Phase::kIdle), 100'100);
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{-1, 0, -1}));  // start-up and tear-down calls are outside
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0, 0}));
  EXPECT_NE(
      a.source.find(
          "one iteration, the span of the GPU work, its launches and phase ranges (1.000 ms of the 41.000 ms trace"),
      std::string::npos)
      << a.source;
  // A post-processing range after the GPU work stays inside the iteration.
  AddRange(t, "postprocess", 31 * kMs, 33 * kMs);
  a = Analyze(t);
  EXPECT_EQ(a.iterations[0].end, 33 * kMs);
  EXPECT_EQ(PhaseOf(a.iterations[0], Phase::kPost), 2 * kMs - 100);
}

// Times reach INT64_MAX: the narrowed span's marker must not overflow (found by fuzz_trace).
TEST(Iterations, NoMarkersSpanEndingAtTheLargestTime) {
  constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
  Trace t;
  AddApi(t, "cudaMalloc", 0, 10, kUnknownId);
  AddKernel(t, "k", kMax - 100, kMax, 0, 7, kUnknownId);
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 1u);
  EXPECT_EQ(a.iterations[0].start, kMax - 100);
  EXPECT_EQ(a.iterations[0].end, kMax);
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0}));
}

TEST(Iterations, EmptyTraceIsOneEmptyIteration) {
  Trace t;
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 1u);
  EXPECT_EQ(a.iterations[0].latency_ns(), 0);
  EXPECT_EQ(a.total_ns, 0);
  EXPECT_FALSE(a.has_throughput);
  EXPECT_EQ(a.phase_ratio[static_cast<size_t>(Phase::kIdle)], 0);
}

TEST(Iterations, ProcessWithMostMarkersWins) {
  Trace t;
  AddRange(t, "iteration", 0, 1000, 100);
  AddRange(t, "iteration", 0, 500, 200);
  AddRange(t, "iteration", 500, 1000, 200);
  AddApi(t, "cudaLaunchKernel", 10, 20, 1, 100);
  AddKernel(t, "k", 100, 200, 0, 7, 1);
  IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.pid, 200);
  EXPECT_EQ(a.found, 2u);
  EXPECT_EQ(a.source, std::string("2 ranges matching '") + kDefaultIterationRegex +
                          "' in pid 200 (1 other process with markers ignored)");
  EXPECT_EQ(a.kernel_iteration[0], -1);  // launched by pid 100
  EXPECT_EQ(a.iterations[0].kernels, 0u);

  AddRange(t, "iteration", 2000, 3000, 100);  // now 2 each: the lower pid wins
  AddRange(t, "iteration", 0, 100, 300);
  IterationAnalysis tie = Analyze(t);
  EXPECT_EQ(tie.pid, 100);
  EXPECT_EQ(tie.kernel_iteration[0], 0);
  EXPECT_EQ(tie.source, std::string("2 ranges matching '") + kDefaultIterationRegex +
                            "' in pid 100 (2 other processes with markers ignored)");
}

TEST(Iterations, GpuAnnotationsWhenNoHostRangeMatches) {
  Trace t;
  size_t r = AddRange(t, "ProfilerStep#1", 1000, 2000, 0);
  t.ranges.on_gpu[r] = 1;
  AddRange(t, "ProfilerStep#1", 3000, 3000, 100);  // a host mark does not count
  AddApi(t, "cudaLaunchKernel", 900, 910, 1, 4242);
  AddKernel(t, "k", 1100, 1200, 0, 7, 1);
  IterationAnalysis a = Analyze(t);
  ASSERT_TRUE(a.from_markers);
  EXPECT_TRUE(StartsWith(a.source, "1 GPU range matching")) << a.source;
  // GPU markers are GPU time: the kernel's own time decides, and its launch follows it.
  EXPECT_EQ(a.kernel_iteration, (std::vector<int32_t>{0}));
  EXPECT_EQ(a.api_iteration, (std::vector<int32_t>{0}));
  EXPECT_EQ(PhaseOf(a.iterations[0], Phase::kInfer), 100);
}

TEST(Iterations, StatsOverIterations) {
  // Latencies 1, 2, 3, 4, 10 ms back to back from t = 0 (no GPU work: all idle).
  Trace t;
  TimeNs at = 0;
  for (TimeNs ms : {1, 2, 3, 4, 10}) {
    AddRange(t, "iteration", at, at + ms * 1000000);
    at += ms * 1000000;
  }
  IterationOptions options;
  options.batch = 8;
  IterationAnalysis a = Analyze(t, options);
  ASSERT_EQ(a.iterations.size(), 5u);
  EXPECT_EQ(a.batch, 8);
  EXPECT_EQ(a.total_ns, 20000000);
  // Mean 20/5 = 4; squared deviations 9+4+1+0+36 = 50, /5 = 10: std sqrt(10), CV sqrt(10)/4.
  EXPECT_EQ(a.latency_ms.n, 5u);
  EXPECT_DOUBLE_EQ(a.latency_ms.mean, 4);
  EXPECT_DOUBLE_EQ(a.latency_ms.std, std::sqrt(10.0));
  ASSERT_TRUE(a.latency_ms.has_cv);
  EXPECT_DOUBLE_EQ(a.latency_ms.cv, std::sqrt(10.0) / 4);
  EXPECT_EQ(a.latency_ms.p50, 3);   // ceil(2.5) = 3rd
  EXPECT_EQ(a.latency_ms.p95, 10);  // ceil(4.75) = 5th
  EXPECT_EQ(a.latency_ms.p99, 10);
  // 5 iterations * 8 items / 0.020 s = 2000 items/s.
  ASSERT_TRUE(a.has_throughput);
  EXPECT_DOUBLE_EQ(a.throughput_fps, 2000);
  EXPECT_EQ(a.phase_ratio[static_cast<size_t>(Phase::kIdle)], 1);
  EXPECT_DOUBLE_EQ(a.phase_mean_ms[static_cast<size_t>(Phase::kIdle)], 4);
  EXPECT_EQ(a.phase_mean_ms[static_cast<size_t>(Phase::kInfer)], 0);
}

// Patterns anchored with '^' are searched at the start of a name only (a shortcut that must
// not change any answer): a top-level '|', a group or a class must keep the usual search.
TEST(Iterations, AnchoredPatternsMatchAsTheyAreWritten) {
  struct Case {
    const char* pattern;
    const char* name;
    bool matches;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"^step", "step 1", true},
           {"^step", "my step", false},
           {"^a|step", "my step", true},  // the '^' binds to "a" only
           {"^(a|step)", "my step", false},
           {"^(a|step)|x", "my step x", true},
           {"^[|]|step", "my step", true},
           {"^[a|]step", "|step", true},
           {"^[a|]step", "x |step", false},
           {"^\\|step", "my step", false},  // an escaped '|' is a literal
           {"^\\|step", "|step", true},
           {"^(?:a)|step", "my step", true},
           {"^[]|step", "my step", true},
           {"^STEP", "Step 2", true},  // still case-insensitive
       }) {
    Trace t;
    AddRange(t, c.name, 0, 100);
    IterationOptions o;
    o.iteration_regex = c.pattern;
    IterationAnalysis a = Analyze(t, o);
    EXPECT_EQ(a.from_markers, c.matches) << c.pattern << " on " << c.name;
  }
}

}  // namespace
}  // namespace tg
