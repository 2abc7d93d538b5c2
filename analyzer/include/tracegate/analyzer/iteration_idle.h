// What the GPU and the host did in every GPU-idle microsecond of every kept iteration
// (docs/RULES.md, "Idle causes"): the span's time without GPU work, from its start (the lead-in
// before the first GPU work) to its end (the tail after the last), split into pieces with one
// cause each (idle_cause.h). Per iteration the causes sum exactly to latency - gpu_busy_ns, which
// is its pre + post + idle phases. The iteration's named pre/post ranges are host_stage; the rest
// is read from the host model. Host compute before the first GPU work (or the first HtoD copy)
// becomes the pre phase when no range names a pre phase in that iteration, and host compute after
// the last DtoH copy (or the last GPU work) the post phase likewise.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tracegate/analyzer/idle_cause.h"
#include "tracegate/analyzer/summary.h"

namespace tg {

// An idle interval of an iteration with its causes and host frames (IdleGap's fields: previous /
// next are "" at the iteration's lead-in or tail without GPU work on that side).
struct IdleInterval {
  size_t iteration = 0;  // index into IterationAnalysis::iterations
  IdleGap gap;
};

// An idle piece of a kept iteration with one cause, as AttributeIterationIdle splits the idle
// time (kept only when asked: AnalysisConfig::locate_idle_claims): its span, and its part in the
// idle phase (host compute it moved to the pre / post phase is not; a named pre/post stage's
// piece has none: phase_start == phase_end).
struct IdlePiece {
  TimeNs start = 0, end = 0;
  TimeNs phase_start = 0, phase_end = 0;
  IdleCause cause = IdleCause::kUnknown;
};

struct IterationIdle {
  bool attributed = false;
  TimeNs total_ns = 0;                                  // sum of latency - gpu_busy_ns over kept iterations
  std::array<TimeNs, kIdleCauseCount> ns{};             // by cause; sums to total_ns
  std::array<TimeNs, kIdleCauseCount> idle_phase_ns{};  // the part in the idle phase; sums to its total
  TimeNs pre_from_host_ns = 0, post_from_host_ns = 0;
  std::vector<IdleInterval> largest;  // the longest intervals, longest first
  // GPU work that started at least the backlog threshold after its launch call returned while
  // the device had no recorded work (a data-quality warning: the trace misses what ran).
  uint64_t backlog_items = 0;
  TimeNs backlog_max_lag_ns = 0;
  // Graph capture: launches made while a stream captured (they run nothing) and whether the trace
  // is a capture trace (at least as many captured launches as GPU activities executed).
  uint64_t captured_launches = 0, capture_regions = 0;
  bool capture_trace = false;
  std::string capture_note;  // one line when capture_trace
};

}  // namespace tg
