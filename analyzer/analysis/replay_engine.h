// The replay's engine (tracegate/analyzer/replay.h): one pass over the trace's calls and GPU
// activities in recorded time order, each re-timed from what it depends on. Replay reads the
// kept iterations' new spans from it; the critical path (critical_path.h) also reads, per node,
// which of its predecessors bound its time, and walks those back from an iteration's end.
//
// Nodes and their edges (a node's time is the latest of its edges'):
//   call start     <- the end of the thread's previous call, plus the host time between them
//                     (less what a --host change saves); none for a thread's first call;
//   call end       <- its own start, plus its duration (a launch call under --launch-us: N us);
//                  <- for a synchronising call, the end of the GPU work of its process that
//                     ended last while it waited, plus its wake-up delay; for a
//                     cudaEventSynchronize whose event's record the trace names, the end of the
//                     event's work instead (plus the wake-up delay when it ended while it waited);
//   activity start <- its launch call's start, plus the launch delay;
//                  <- the end of the previous activity of its stream, plus the recorded gap when
//                     the stream was busy at the launch (or when it has no launch call);
//                  <- for the first activity a thread launched onto a stream after a
//                     cudaStreamWaitEvent on it: the end of the event's work (the last activity
//                     launched onto the recording stream before the cudaEventRecord call), plus
//                     the recorded gap when that work ended after the launch and after the
//                     stream's previous activity (it held the activity back);
//                     none when it has none of these (it starts as recorded);
//   activity end   <- its start, plus its duration (divided by the speedup when the change names it;
//                     under located GPU speedups, its part inside their instants divided by theirs).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/analysis/dense_ids.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/replay.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

class ApiIndex;

inline constexpr TimeNs kReplayNever = std::numeric_limits<TimeNs>::min();

// What bound a node, written when ReplayEngine is given a record.
enum class ActBound : uint8_t { kNone, kLaunch, kStream, kEvent };

struct ReplayActivity {
  TimeNs start, end;  // recorded (end >= start)
  int64_t pid;
  int64_t call;  // launch call row, or -1
  uint8_t kind;  // 0 kernel, 1 memcpy, 2 memset
  uint32_t row;
};

struct ReplayRecord {
  std::vector<ReplayActivity> acts;          // kernels, then memcpys, then memsets
  std::vector<TimeNs> act_start, act_end;    // new times
  std::vector<int32_t> act_prev;             // the previous activity of its stream, -1 for none
  std::vector<ActBound> act_bound;           // which edge bound its start
  std::vector<int32_t> act_waited;           // kEvent: the event's activity that bound it, else -1
  std::vector<TimeNs> call_start, call_end;  // new times of the API calls (by row)
  std::vector<int32_t> call_prev;            // the thread's previous call that bound its start, -1 for none
  std::vector<int32_t> call_waited;          // a sync's end: the activity it waited for, -1 when its own start bound it
  // Cross-stream event edges the trace's syncs give (Sync::wait_stream, record_correlation):
  std::vector<std::pair<uint32_t, uint32_t>> wait_edges;  // (waiting activity, event's activity), sorted
  std::vector<std::pair<uint32_t, uint32_t>> sync_edges;  // (cudaEventSynchronize call row, event's activity)
  std::vector<uint8_t> call_sync;            // 1 for a synchronising call (IsSyncCall), 2 for a launch call
  // Per kept iteration: its new span, and what its end is: the activity that ended last
  // (end_act >= 0, then `tail` after it) or its host thread at host_end (end_call: the thread's
  // last call that ended by then, -1 for none, then the host time up to the end).
  struct IterationEnd {
    TimeNs start = 0, end = 0;
    int32_t end_act = -1;
    int32_t end_call = -1;
    TimeNs tail = 0;
  };
  std::vector<IterationEnd> iterations;
};

// The (device, stream) an activity ran on.
std::pair<int64_t, int64_t> StreamOf(const Trace& t, const ReplayActivity& x);

// Cross-stream event edges, from the syncs that name their event's record (Sync::wait_stream,
// record_correlation). The event's work: the last activity launched (by launch call start) onto
// the recording stream before the cudaEventRecord call, by the waiting call's process. A stream
// wait event: the first activity the waiting call's thread launches onto the waiting stream after
// it waits for that work; a (synchronising) cudaEventSynchronize returns after it. An edge the
// recorded times contradict (the waiting side began before the work ended) is left out.
struct EventEdges {
  std::vector<std::pair<uint32_t, uint32_t>> waits;  // (waiting activity, event's activity), sorted, unique
  std::vector<std::pair<uint32_t, uint32_t>> syncs;  // (cudaEventSynchronize call row, event's activity), by call
};
// Whether the trace's syncs name any event record (else FindEventEdges finds none).
bool HasEventRecords(const Trace& t);
// `acts`: the activities as ReplayRecord::acts.
EventEdges FindEventEdges(const Trace& t, const ApiIndex& index, const std::vector<ReplayActivity>& acts);

// A call that waits for the device: any *Synchronize, or a copy without Async (the synchronous
// cudaMemcpy / hipMemcpy / cuMemcpyDtoH ...; not the peer copies, which only order).
bool IsSyncCall(std::string_view name);
// A kernel launch call (cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ...).
bool IsLaunchCall(std::string_view name);

// Located speedups (LocatedSpeedup) of one kind as one piecewise function: sorted, disjoint
// pieces, each with the largest speedup of those covering it (adjacent pieces of equal speedup
// merged; instants no interval covers have no piece).
struct SpeedupPiece {
  TimeNs start, end;
  double speedup;
};
std::vector<SpeedupPiece> MaxSpeedupPieces(const std::vector<LocatedSpeedup>& located, bool host);
// A duration [start, end) under them: the time outside the pieces as it was, the time inside each
// piece divided by its speedup (rounded once, to the nearest ns); `inside`: the time inside.
TimeNs ScaledDuration(const std::vector<SpeedupPiece>& pieces, TimeNs start, TimeNs end, TimeNs* inside);

// What the pass reads that no change alters, built once for several replays of one trace (the
// findings' gains, ReplayFindingGains): the activities and their processes, the host threads,
// each process's smallest launch delay, the pass's points in recorded time order, each
// activity's stream predecessor and the cross-stream event edges.
struct ReplayPlan {
  // The points of the pass, in recorded time order: at equal times an activity's end, then a
  // call's end, then a call's start, then an activity's start. Each is (id << 2) | type, 4 bytes
  // (ids below 2^30: BuildReplayPlan refuses more rows).
  enum PointType : uint8_t { kActEnd = 0, kCallEnd = 1, kCallStart = 2, kActStart = 3 };
  static uint32_t IdOf(uint32_t point) { return point >> 2; }
  static PointType TypeOf(uint32_t point) { return static_cast<PointType>(point & 3); }
  std::vector<ReplayActivity> acts;  // kernels, then memcpys, then memsets
  // Processes: of an activity's own pid (its launch delays), and of the pid it is logged under
  // when it ends (its launch call's, else its own); per process the smallest launch delay.
  DenseIds<int64_t> procs;
  std::vector<uint32_t> act_proc, act_log_proc;
  std::vector<TimeNs> min_delay;
  DenseIds<std::pair<int64_t, int64_t>> threads;  // host threads (pid, tid)
  std::vector<uint32_t> call_thread, call_proc;   // by API call row
  std::vector<uint32_t> points;
  std::vector<int32_t> prev;                              // the previous activity of its stream, -1 for none
  std::vector<std::pair<uint32_t, uint32_t>> waits;       // as ReplayRecord::wait_edges
  std::vector<std::pair<uint32_t, uint32_t>> sync_edges;  // as ReplayRecord::sync_edges
  std::vector<int32_t> call_event;                        // by call row: a blocking event sync's activity, else -1
};
// InvalidInput when the trace has 2^30 API calls or GPU activities or more.
Status BuildReplayPlan(const Trace& trace, const ApiIndex& index, ReplayPlan* plan);

// Collectives coupled across the ranks of a job (the job's replay, tracegate/analyzer/job_replay.h):
// a coupled activity does not end at its new start plus its duration but when the job's other
// ranks say. The pass tells the coupling each coupled activity's new start (its arrival) at its
// start point and asks for its new end at its end point, which may wait for other ranks' passes.
class CollectiveCoupling {
 public:
  virtual ~CollectiveCoupling() = default;
  // Whether activity `act` (an index into ReplayPlan::acts) is coupled.
  virtual bool Coupled(uint32_t act) const = 0;
  virtual void Arrive(uint32_t act, TimeNs start) = 0;
  // Its new end; `scale`: its new duration over its recorded one (what the change makes of it).
  // kReplayNever when the job's replay was given up (the pass then stops with an error).
  virtual TimeNs End(uint32_t act, TimeNs start, double scale) = 0;
};

// Runs the pass over the whole trace under `change` and fills `out` (Replay's result); with
// `record`, also every node's new time and binding edge. `index`: the trace's API correlation
// index, or null to build one; `plan`: BuildReplayPlan's for the trace (and `index`), or null to
// build one; `coupling`: the job's collectives, or null for none. Errors as Replay's; Unsupported
// when the coupling gave up.
Status ReplayEngine(const Trace& trace, const IterationAnalysis& iterations, const ReplayChange& change,
                    const ApiIndex* index, ReplayResult* out, ReplayRecord* record, const ReplayPlan* plan = nullptr,
                    CollectiveCoupling* coupling = nullptr);

}  // namespace tg::internal
