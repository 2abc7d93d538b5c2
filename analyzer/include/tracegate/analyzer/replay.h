// What-if replay (issue 31, first part): the trace re-timed under a change, the new latency of
// every kept iteration. Amdahl's law assumes the sped-up part lies on the critical path and that
// nothing else moves; the replay instead keeps the dependencies the trace shows:
//   - each host thread runs its runtime/driver calls in order, with the host time between two
//     calls (its own work: Python, the framework) kept as recorded;
//   - each GPU activity starts when both its launch call has been made (plus the launch delay)
//     and the previous activity of its stream has ended (plus the gap recorded between them);
//   - a cross-stream event wait the trace names (a sync row with the event's record: Kineto's
//     wait_on_stream and wait_on_cuda_event_record_corr_id): after a cudaStreamWaitEvent, the next
//     GPU activity its thread launches onto the waiting stream starts once the event's work (the
//     last activity launched onto the recording stream before the cudaEventRecord call) has ended;
//   - a synchronising call (any *Synchronize, a synchronous copy) returns once the GPU work that
//     ended while it waited has ended, plus the wake-up delay recorded; a cudaEventSynchronize
//     whose event's record the trace names, once the event's work has ended;
//   - a change re-times what it names: matching kernels run S times faster, the host time between
//     calls that lies inside matching host ranges runs S times faster, launch calls take N us,
//     matching synchronising calls no longer wait.
// Left fixed (stated with every prediction): host think time, launch delays, the gaps between
// back-to-back activities of a stream, and activities' durations other than the sped-up ones.
// Not modelled yet: event waits whose record the trace does not name (the CUPTI collector does
// not carry it yet, nor do older Kineto files: there a stream waits only for itself and its
// launches), cudaEventQuery polling, and collectives across ranks.
//
// With no change the replay gives back every recorded time exactly. Launch delay of an activity:
// its start minus its launch call's start when its stream was idle at the launch; when the stream
// was still busy, the process's smallest launch delay (so an earlier launch cannot start it
// before it could have started).
#pragma once

#include <string>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct ReplayChange {
  std::string kernels_regex;       // kernels whose demangled name matches (searched, case-insensitive)
  double kernel_speedup = 1;       // ... run this many times faster (> 0)
  std::string host_regex;          // host ranges (Python frames, ops, NVTX) whose name matches ...
  double host_speedup = 1;         // ... run this many times faster: the host time between calls inside them
  double launch_us = -1;           // >= 0: every launch call (cu*Launch*, cuda*Launch*, hip*Launch*) takes this long
  std::string remove_syncs_regex;  // synchronising calls whose name matches no longer wait
};

struct IterationReplay {
  size_t index = 0;  // Iteration::index
  TimeNs base_ns = 0, predicted_ns = 0;
};

struct ReplayResult {
  std::vector<IterationReplay> iterations;  // the kept iterations, in order
  TimeNs base_total_ns = 0, predicted_total_ns = 0;
  uint64_t kernels_changed = 0;  // kernels of the kept iterations the change sped up
  TimeNs kernel_part_ns = 0;     // their summed recorded duration (Amdahl's P times the total)
  TimeNs host_part_ns = 0;       // host time of the kept iterations inside the matching host ranges
  uint64_t syncs_removed = 0;
  uint64_t launches_changed = 0;
  std::vector<std::string> assumptions;  // what was held fixed, one line each
  double speedup() const {
    return predicted_total_ns > 0 ? static_cast<double>(base_total_ns) / static_cast<double>(predicted_total_ns) : 0;
  }
};

// InvalidInput for an invalid regex, a speedup <= 0, no kept iterations, or a change that names
// nothing in them (the message says which).
Status Replay(const Trace& trace, const IterationAnalysis& iterations, const ReplayChange& change, ReplayResult* out);

}  // namespace tg
