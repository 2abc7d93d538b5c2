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
//     matching synchronising calls no longer wait; located speedups (a finding's claim:
//     LocatedSpeedup below) scale the GPU time or the host time between calls inside their instants;
//   - --graph: the launches of each kept iteration (per host thread; with a regex, of each
//     matching host range inside one) become one graph launch, made at the first of them: every
//     other kernel of it is launched at that call's start (plus the process's smallest launch
//     delay), so a stream no longer waits for the host to launch it, only for its previous
//     activity: after the gap recorded when the stream held it back to back (its launch came at
//     least that smallest delay before the previous activity ended), else after the process's
//     median such gap (what a stream shows between back-to-back work; 0 when there is none).
//     The folded launch calls take no time; the host's own time between calls stays as recorded.
// Left fixed (stated with every prediction): host think time, launch delays, the gaps between
// back-to-back activities of a stream, and activities' durations other than the sped-up ones.
// Not modelled yet: event waits whose record the trace does not name (older Kineto files, nsys
// exports without CUDA event records, recordings whose CUPTI refused them: there a stream waits
// only for itself and its launches), cudaEventQuery polling, and collectives across ranks (one
// rank's trace keeps its collectives as recorded, waits included; job_replay.h couples a job's).
//
// With no change the replay gives back every recorded time exactly. Launch delay of an activity:
// its start minus its launch call's start when its stream was idle at the launch; when the stream
// was still busy, the process's smallest launch delay (so an earlier launch cannot start it
// before it could have started).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

// A further set of kernels sped up by its own factor (--kernels R --speedup S given again).
struct KernelSelection {
  std::string regex;         // demangled name searched, case-insensitive ("" : any)
  std::string kernel_class;  // a kKernelClassNames name ("" : any); with regex: both
  double speedup = 1;
  std::string
      launched_in;  // host ranges (NVTX, ops, frames) the kernel's launch call lies in ("" : any); with the others: all
};

// A speedup of located work (a finding's claim, tracegate/analyzer/findings.h): the time inside
// `intervals` (sorted or not, [start, end) on the trace clock) runs `speedup` times faster
// (+infinity: it takes no time). GPU (host = false): the part of every GPU activity's duration
// (kernels, copies, memsets: a gpu claim covers whatever GPU work ran in its instants) inside
// them; host (host = true): the host time between calls inside them on the kept iterations'
// marker thread (IterationAnalysis::pid, each Iteration's tid), as --host scales matching ranges.
// Where several of one kind overlap, an instant takes the largest speedup (as the combined
// estimate gives each instant to the finding with the largest S).
struct LocatedSpeedup {
  bool host = false;
  std::vector<std::pair<TimeNs, TimeNs>> intervals;
  double speedup = 1;
};

struct ReplayChange {
  std::string kernels_regex;       // kernels whose demangled name matches (searched, case-insensitive)
  double kernel_speedup = 1;       // ... run this many times faster (> 0)
  std::string host_regex;          // host ranges (Python frames, ops, NVTX) whose name matches ...
  double host_speedup = 1;         // ... run this many times faster: the host time between calls inside them
  double launch_us = -1;           // >= 0: every launch call (cu*Launch*, cuda*Launch*, hip*Launch*) takes this long
  std::string remove_syncs_regex;  // synchronising calls whose name matches no longer wait
  // Kernels of this class (a kKernelClassNames name: by launching op, then by name, as
  // ClassifyKernels) run kernel_speedup times faster; with kernels_regex, those that match both.
  std::string kernel_class;
  // Kernels launched inside host ranges whose name matches this (--launched-in: a stage's NVTX
  // range); with kernels_regex / kernel_class, those that satisfy all.
  std::string kernels_launched_in;
  bool graph = false;       // each kept iteration's launches as one graph launch (see above)
  std::string graph_regex;  // with graph: only the launches inside host ranges matching this
  // Further kernel selections, each with its own speedup; no kernel may be in two selections
  // (kernels_regex / kernel_class being the first).
  std::vector<KernelSelection> more_kernels;
  // Located speedups (LocatedSpeedup above); not with kernel selections (a kernel would have two
  // speedups) nor, for a host one, with --host.
  std::vector<LocatedSpeedup> located;
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
  // Per kernel selection (the first, then more_kernels): its kernels and their recorded time.
  struct Selected {
    uint64_t kernels = 0;
    TimeNs part_ns = 0;
  };
  std::vector<Selected> selections;
  TimeNs host_part_ns = 0;       // host time of the kept iterations inside the matching host ranges
  // What the located speedups covered inside the kept iterations: the GPU activities' recorded
  // time inside the GPU intervals (summed over activities, so two streams at once count twice),
  // the activities that had some, and the marker thread's host time between calls inside the host
  // intervals (what they sped up).
  TimeNs located_gpu_ns = 0;
  uint64_t located_gpu_activities = 0;
  TimeNs located_host_ns = 0;
  uint64_t syncs_removed = 0;
  uint64_t launches_changed = 0;
  TimeNs launch_part_ns = 0;             // recorded duration of the kept iterations' launch calls the change re-timed
  uint64_t graph_launches = 0;           // graph launches made (--graph): one per kept iteration and thread, or range
  uint64_t graph_folded = 0;             // further launch calls folded into them (they take no time)
  std::vector<std::string> assumptions;  // what was held fixed, one line each
  // Replay's error said the change names nothing in the kept iterations (its selections match no
  // kernel, host range, launch call or waiting sync there), as against an invalid change (a bad
  // regex or speedup, overlapping selections).
  bool names_nothing = false;
  double speedup() const {
    return predicted_total_ns > 0 ? static_cast<double>(base_total_ns) / static_cast<double>(predicted_total_ns) : 0;
  }
  // Iterations predicted longer than recorded. Under a change that only removes time, none can
  // be in a run the replay models whole: one that is means the marker thread moved earlier while
  // work it does not link to that thread (another thread's calls, GPU work without a launch call)
  // stayed where it was recorded, and the iterations' spans are not predicted.
  size_t longer() const {
    size_t n = 0;
    for (const IterationReplay& it : iterations) n += it.predicted_ns > it.base_ns ? 1 : 0;
    return n;
  }
};

// The line that says so (ReplayResult::longer), for a change that only removes time; "" when no
// iteration came out longer.
std::string LongerIterationsCaution(const ReplayResult& r);

// InvalidInput for an invalid regex, a speedup <= 0, no kept iterations, or a change that names
// nothing in them (the message says which).
Status Replay(const Trace& trace, const IterationAnalysis& iterations, const ReplayChange& change, ReplayResult* out);

}  // namespace tg
