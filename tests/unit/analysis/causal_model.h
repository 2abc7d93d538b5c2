// The small causal model the replay and critical-path tests generate runs with (a host thread
// launching kernels, streams running them in order, a sync at each step's end): every number of a
// run is known from how it was made, so the tests check the analysis against the model.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace_builder.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"

namespace tg::testing {

constexpr TimeNs kUs = 1'000;

struct Op {
  std::string kernel;
  TimeNs kernel_us;
  int64_t stream = 7;
  TimeNs think_us = 1;     // host time after the launch call, before the next one
  std::string frame = "";  // the host range that think time runs in (none when empty)
  std::string launch_range = "";  // a host range around the launch call (a stage's NVTX range)
};

struct Model {
  TimeNs launch_us = 4;   // the launch call's duration
  TimeNs delay_us = 10;   // launch call start -> kernel start on an idle stream
  TimeNs gap_us = 1;      // back-to-back kernels on a busy stream
  TimeNs wake_us = 5;     // sync return after the last kernel ends
  bool mid_sync = false;  // a cudaStreamSynchronize after the first half of the ops
};

// Ends step `s`, begun at step_start: a cudaDeviceSynchronize at *h that returns wake_us after the
// last GPU work ends (at once when it has), 2 us of host time, the ProfilerStep marker, then 3 us
// before the next step.
inline void EndStep(Trace& t, TimeNs* h, TimeNs last_end, TimeNs wake_us, int s, TimeNs step_start) {
  const TimeNs until = std::max(*h, last_end) + wake_us * kUs;
  AddApi(t, "cudaDeviceSynchronize", *h, until, kUnknownId);
  *h = until + 2 * kUs;
  AddRange(t, "ProfilerStep#" + std::to_string(s), step_start, *h);
  *h += 3 * kUs;
}

// The generated run's iterations (ProfilerStep markers), none skipped as warm-up.
inline IterationAnalysis Iterations(const Trace& t) {
  IterationOptions o;
  o.skip = 0;
  IterationAnalysis its;
  EXPECT_TRUE(AnalyzeIterations(t, o, &its).ok());
  return its;
}

inline double MeanMs(const IterationAnalysis& its) {
  TimeNs total = 0;
  for (const Iteration& it : its.iterations) total += it.latency_ns();
  return static_cast<double>(total) / static_cast<double>(its.iterations.size()) / 1e6;
}

// Steps of `ops`, each ended by a cudaDeviceSynchronize, under ProfilerStep markers; a kernel
// whose name is `faster` runs `speedup` times faster than recorded.
inline Trace Generate(const std::vector<Op>& ops, const Model& m, int steps, const std::string& faster = "",
                      double speedup = 1, double host_speedup = 1) {
  Trace t;
  TimeNs h = 0;
  int64_t corr = 1;
  std::map<int64_t, TimeNs> stream_free;
  TimeNs last_end = 0;
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = h;
    h += 2 * kUs;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      AddApi(t, "cudaLaunchKernel", h, h + m.launch_us * kUs, corr);
      if (!op.launch_range.empty()) AddRange(t, op.launch_range, h, h + m.launch_us * kUs);
      TimeNs dur = op.kernel_us * kUs;
      if (op.kernel == faster) dur = static_cast<TimeNs>(std::llround(static_cast<double>(dur) / speedup));
      TimeNs& free = stream_free[op.stream];
      const TimeNs start = std::max(h + m.delay_us * kUs, free > h ? free + m.gap_us * kUs : 0);
      AddKernel(t, op.kernel, start, start + dur, 0, op.stream, corr++);
      free = start + dur;
      last_end = std::max(last_end, free);
      const TimeNs think = static_cast<TimeNs>(std::llround(static_cast<double>(op.think_us * kUs) / host_speedup));
      if (!op.frame.empty()) AddRange(t, op.frame, h + m.launch_us * kUs, h + m.launch_us * kUs + think);
      h += m.launch_us * kUs + think;
      if (m.mid_sync && i + 1 == ops.size() / 2) {
        const TimeNs until = std::max(h, last_end) + m.wake_us * kUs;
        AddApi(t, "cudaStreamSynchronize", h, until, kUnknownId);
        h = until + 1 * kUs;
      }
    }
    EndStep(t, &h, last_end, m.wake_us, s, step_start);
  }
  FinalizeTrace(t);
  return t;
}

}  // namespace tg::testing
