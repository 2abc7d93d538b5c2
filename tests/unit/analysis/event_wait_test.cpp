// Cross-stream event waits in the replay and the critical path (replay_engine.h), on runs with
// known truth: a small causal model like causal_model.h's (a host thread launching kernels with a
// 4 us launch call and a 10 us launch delay, streams running them in order with 1 us between
// back-to-back kernels) where one stream's work waits for an event recorded on another, either
// on the GPU (cudaStreamWaitEvent: the waiting stream's next kernel starts 2 us after the event's
// kernel ends) or on the host (cudaEventSynchronize: the call returns 5 us after it). Each run is
// generated twice, as recorded and with the event's kernel made faster; the replay of the first
// must give the second's step time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/causal_model.h"
#include "analyzer/analysis/replay_engine.h"
#include "trace_builder.h"
#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/replay.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;
using testing::Iterations;
using testing::kUs;
using testing::MeanMs;

constexpr TimeNs kLaunchUs = 4, kDelayUs = 10, kGapUs = 1, kWakeUs = 5, kEventGapUs = 2;
constexpr int64_t kStreamA = 9, kStreamB = 7, kStreamC = 11;

enum class Wait { kStream, kHost };

struct Options {
  Wait wait = Wait::kStream;
  bool name_record = true;  // the sync rows name the event's record (as Kineto's do)
  double long_speedup = 1;  // the "long" kernel on stream A runs this many times faster
};

// Per step: a "prep" kernel on B, (for kHost) a 300 us "side" kernel on C, a 500 us "long"
// kernel on A, cudaEventRecord (on A), then the wait: cudaStreamWaitEvent (B waits) or
// cudaEventSynchronize (the host waits), then four 40 us "tail" kernels on B, and a
// cudaDeviceSynchronize; ProfilerStep markers.
Trace Generate(const Options& o, int steps) {
  Trace t;
  TimeNs h = 0;
  int64_t corr = 1;
  std::map<int64_t, TimeNs> stream_free;
  TimeNs last_end = 0;
  // Launches a kernel; `after`: an event's end it must wait for (plus kEventGapUs), 0 for none.
  auto launch = [&](const std::string& name, TimeNs us, int64_t stream, TimeNs after = 0) {
    AddApi(t, "cudaLaunchKernel", h, h + kLaunchUs * kUs, corr);
    TimeNs& f = stream_free[stream];
    TimeNs start = std::max(h + kDelayUs * kUs, f > h ? f + kGapUs * kUs : 0);
    if (after > 0) start = std::max(start, after + kEventGapUs * kUs);
    AddKernel(t, name, start, start + us, 0, stream, corr++);
    f = start + us;
    last_end = std::max(last_end, f);
    h += (kLaunchUs + 1) * kUs;
    return f;
  };
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = h;
    h += 2 * kUs;
    launch("prep", 20 * kUs, kStreamB);
    if (o.wait == Wait::kHost) launch("side", 300 * kUs, kStreamC);
    const TimeNs long_us = static_cast<TimeNs>(std::llround(500.0 * kUs / o.long_speedup));
    const TimeNs long_end = launch("long", long_us, kStreamA);
    const int64_t record = corr++;
    AddApi(t, "cudaEventRecord", h, h + 2 * kUs, record);
    h += 3 * kUs;
    const int64_t wait = corr++;
    Sync y;
    y.device = 0;
    y.correlation = wait;
    y.event_id = 1;
    y.pid = 0;
    if (o.name_record) {
      y.wait_stream = kStreamA;
      y.record_correlation = record;
    }
    TimeNs after = 0;
    if (o.wait == Wait::kStream) {
      AddApi(t, "cudaStreamWaitEvent", h, h + 2 * kUs, wait);
      y.kind = SyncKind::kStreamWaitEvent;
      y.stream = kStreamB;
      y.start = h;
      y.end = h + 2 * kUs;
      h += 3 * kUs;
      after = long_end;
    } else {
      const TimeNs until = std::max(h, long_end) + kWakeUs * kUs;
      AddApi(t, "cudaEventSynchronize", h, until, wait);
      y.kind = SyncKind::kEventSync;
      y.start = h;
      y.end = until;
      h = until + 1 * kUs;
    }
    t.syncs.Add(y);
    for (int i = 0; i < 4; ++i) launch("tail", 40 * kUs, kStreamB, i == 0 ? after : 0);
    testing::EndStep(t, &h, last_end, kWakeUs, s, step_start);
  }
  FinalizeTrace(t);
  return t;
}

struct Outcome {
  double base_ms, predicted_ms, truth_ms;
};

Outcome FasterLong(Options o, double speedup) {
  const Trace before = Generate(o, 6);
  o.long_speedup = speedup;
  const Trace after = Generate(o, 6);
  const IterationAnalysis its = Iterations(before);
  ReplayChange change;
  change.kernels_regex = "^long$";
  change.kernel_speedup = speedup;
  ReplayResult r;
  const Status s = Replay(before, its, change, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  const double n = static_cast<double>(r.iterations.size());
  return {static_cast<double>(r.base_total_ns) / n / 1e6, static_cast<double>(r.predicted_total_ns) / n / 1e6,
          MeanMs(Iterations(after))};
}

// No change: every step comes back exactly, and the edges are there (one per step).
TEST(EventWait, NoChangeGivesTheRecordedTimes) {
  for (Wait w : {Wait::kStream, Wait::kHost}) {
    Options o;
    o.wait = w;
    const Trace t = Generate(o, 5);
    const IterationAnalysis its = Iterations(t);
    ReplayResult r;
    internal::ReplayRecord rec;
    ASSERT_TRUE(internal::ReplayEngine(t, its, ReplayChange{}, nullptr, &r, &rec).ok());
    ASSERT_EQ(r.iterations.size(), 5u);
    for (const IterationReplay& it : r.iterations) EXPECT_EQ(it.predicted_ns, it.base_ns) << it.index;
    for (size_t i = 0; i < rec.acts.size(); ++i) {
      EXPECT_EQ(rec.act_start[i], rec.acts[i].start) << i;
      EXPECT_EQ(rec.act_end[i], rec.acts[i].end) << i;
    }
    for (size_t c = 0; c < t.api_calls.size(); ++c) {
      EXPECT_EQ(rec.call_start[c], t.api_calls.start[c]) << c;
      EXPECT_EQ(rec.call_end[c], t.api_calls.end[c]) << c;
    }
    EXPECT_EQ(rec.wait_edges.size(), w == Wait::kStream ? 5u : 0u);
    EXPECT_EQ(rec.sync_edges.size(), w == Wait::kHost ? 5u : 0u);
    if (w == Wait::kStream) {
      // The first tail kernel of each step is bound by the event: the long kernel's end.
      size_t bound = 0;
      for (size_t i = 0; i < rec.acts.size(); ++i)
        if (rec.act_bound[i] == internal::ActBound::kEvent) {
          ++bound;
          const auto& src = rec.acts[static_cast<size_t>(rec.act_waited[i])];
          EXPECT_EQ(t.Name(t.kernels.name[src.row]), "long");
          EXPECT_EQ(rec.acts[i].start - src.end, kEventGapUs * kUs);
        }
      EXPECT_EQ(bound, 5u);
    }
  }
}

// Stream B waits for the long kernel on stream A: 2x faster, the step is 250 us shorter, as the
// replay says. Without the event's record the replay sees no edge and predicts no gain.
TEST(EventWait, StreamWaitEventCarriesAFasterKernelToTheWaitingStream) {
  const Outcome o = FasterLong(Options{}, 2.0);
  std::printf("stream wait, long 2x: base %.4f ms, truth %.4f ms, replay %.4f ms\n", o.base_ms, o.truth_ms,
              o.predicted_ms);
  EXPECT_NEAR(o.base_ms - o.truth_ms, 0.250, 0.001);  // the generated gain: 250 us a step
  EXPECT_NEAR(o.predicted_ms, o.truth_ms, 0.02 * o.truth_ms) << o.base_ms;
  Options blind;
  blind.name_record = false;
  const Outcome b = FasterLong(blind, 2.0);
  std::printf("  without the record: replay %.4f ms\n", b.predicted_ms);
  EXPECT_DOUBLE_EQ(b.predicted_ms, b.base_ms);  // the old model: B's launches decide
  EXPECT_GT(b.predicted_ms - b.truth_ms, 0.2);
}

// The host waits for the long kernel (cudaEventSynchronize) while a 300 us kernel on stream C
// ends during the wait: 2x faster, the host returns when the long kernel ends, not when C's
// does (as the wait for any work that ended while it waited would have it).
TEST(EventWait, EventSynchronizeWaitsForTheEventsWorkOnly) {
  Options o;
  o.wait = Wait::kHost;
  const Outcome r = FasterLong(o, 2.0);
  std::printf("event sync, long 2x: base %.4f ms, truth %.4f ms, replay %.4f ms\n", r.base_ms, r.truth_ms,
              r.predicted_ms);
  EXPECT_GT(r.base_ms - r.truth_ms, 0.15);
  EXPECT_NEAR(r.predicted_ms, r.truth_ms, 0.02 * r.truth_ms) << r.base_ms;
  o.name_record = false;
  const Outcome b = FasterLong(o, 2.0);
  std::printf("  without the record: replay %.4f ms\n", b.predicted_ms);
  EXPECT_GT(b.predicted_ms - b.truth_ms, 0.02 * b.truth_ms);  // waits for C's kernel: too slow
}

// The critical path follows the event edge: it goes through the long kernel on stream A, and its
// kinds still sum exactly to the steps' time.
TEST(EventWait, CriticalPathGoesThroughTheEventsKernel) {
  for (Wait w : {Wait::kStream, Wait::kHost}) {
    Options o;
    o.wait = w;
    const Trace t = Generate(o, 4);
    const IterationAnalysis its = Iterations(t);
    KernelClassifier classifier;
    ASSERT_TRUE(KernelClassifier::Create({}, &classifier).ok());
    std::set<std::string> on_path;
    TimeNs event_gaps = 0;
    CriticalPathOptions options;
    std::vector<TimeNs> sums;
    options.on_iteration = [&](size_t, const std::array<TimeNs, kPathKindCount>& k) {
      TimeNs sum = 0;
      for (TimeNs ns : k) sum += ns;
      sums.push_back(sum);
    };
    options.on_segment = [&](const PathSegment& s) {
      if (s.table != PathSegment::Table::kKernel || s.duration <= 0) return;
      const std::string name(t.Name(t.kernels.name[static_cast<size_t>(s.row)]));
      if (s.kind == PathKind::kGpuGap && name == "tail") event_gaps += s.duration;
      if (s.kind != PathKind::kGpuGap && s.kind != PathKind::kLaunchDelay) on_path.insert(name);
    };
    CriticalPathResult r;
    ASSERT_TRUE(AnalyzeCriticalPath(t, its, ClassifyKernels(t, classifier), nullptr, nullptr, options, &r).ok());
    ASSERT_EQ(sums.size(), its.iterations.size());
    for (size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sums[i], its.iterations[i].latency_ns()) << i;
    EXPECT_TRUE(on_path.count("long")) << (w == Wait::kStream ? "stream" : "host");
    EXPECT_TRUE(on_path.count("tail"));
    EXPECT_FALSE(on_path.count("prep"));
    EXPECT_FALSE(on_path.count("side"));
    if (w == Wait::kStream) {
      // The 2 us between the long kernel's end and the first tail kernel (the event's gap), and
      // 1 us between back-to-back tail kernels, three a step.
      EXPECT_EQ(event_gaps, 4 * (kEventGapUs + 3 * kGapUs) * kUs);
    } else {
      EXPECT_GT(r.kind_ns[static_cast<size_t>(PathKind::kSyncWait)], 0);
    }
    bool listed = false;
    for (const std::string& e : r.edges) listed = listed || e.rfind("event wait:", 0) == 0;
    EXPECT_TRUE(listed);
  }
}

}  // namespace
}  // namespace tg
