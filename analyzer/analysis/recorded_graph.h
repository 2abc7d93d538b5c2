// The critical path's graph (critical_path.h) with nothing changed: the replay's nodes and edges
// (replay_engine.h), where every node keeps its recorded time, so only which edge bound a node is
// left to find. RecordedGraph finds it when the walk back from an iteration's end reaches the
// node, from orders built once: each activity's end and predecessor on its stream, each stream's
// activities by end and each thread's calls by end (16 bytes an activity, 8 a call). Nothing
// is worked out for the nodes no path reaches, and nothing is kept per path.
//
// Its answers equal what ReplayEngine writes to a ReplayRecord under ReplayChange{} (the same
// tie-breaks; recorded_graph_test compares them node by node on real and generated traces).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/analysis/replay_engine.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

class ApiIndex;

class RecordedGraph {
 public:
  // `kernels_by_start`: the kernel rows in (start, row) order (Summary::kernels_by_start), or null
  // to sort them here.
  RecordedGraph(const Trace& t, const IterationAnalysis& its, const ApiIndex& index,
                const std::vector<uint32_t>* kernels_by_start);

  // Activities are numbered as ReplayRecord::acts: kernels, then memcpys, then memsets, by row.
  size_t activities() const { return kernels_ + memcpys_ + memsets_; }
  ReplayActivity Act(uint32_t i) const;

  // What bound activity i's start (x: Act(i)); `from`: for kStream the previous activity of its
  // stream, for kEvent the event's activity it waited for (else -1).
  ActBound BindAct(uint32_t i, const ReplayActivity& x, int32_t* from) const;
  // The thread's previous call that bound call c's start, or -1 (ReplayRecord::call_prev).
  int32_t CallPrev(uint32_t c) const;
  // A synchronising call's end: the activity it waited for, or -1 (ReplayRecord::call_waited).
  int32_t CallWaited(uint32_t c) const;
  // 1 for a synchronising call, 2 for a launch call (ReplayRecord::call_sync).
  uint8_t CallSync(uint32_t c) const;
  // Kept iteration k's span and what ends it (ReplayRecord::iterations).
  const ReplayRecord::IterationEnd& End(size_t k) const { return ends_[k]; }

 private:
  TimeNs Start(uint32_t i) const;
  TimeNs EndOf(uint32_t i) const { return end_[i]; }  // max(start, end)
  int64_t Pid(uint32_t i) const;
  int64_t LaunchCall(uint32_t i) const;
  int64_t LoggedPid(uint32_t i) const;  // its launch call's pid, else its own

  const Trace& t_;
  const ApiIndex& index_;
  size_t kernels_, memcpys_, memsets_;
  std::vector<TimeNs> end_;    // per activity: max(start, end)
  std::vector<int32_t> prev_;  // per activity: the previous activity of its stream, -1 for none
  // Each stream's activities in (end, start order), one span of by_end_ per stream.
  std::vector<uint32_t> by_end_;
  std::vector<std::pair<uint32_t, uint32_t>> stream_span_;  // [begin, end) in by_end_
  // Per host thread, its calls in (end, row) order; per call, its place there.
  std::vector<uint32_t> calls_by_end_;
  std::vector<uint32_t> thread_begin_;  // thread th: [thread_begin_[th], thread_begin_[th + 1])
  std::vector<uint32_t> call_pos_;      // per call: its place in calls_by_end_
  EventEdges events_;
  std::vector<ReplayRecord::IterationEnd> ends_;
};

}  // namespace tg::internal
