// The walk back along the bindings of the recorded graph (recorded_graph.h) that gives a critical
// path (critical_path.h): from a node, each node's binding edge to its predecessor, every
// nanosecond between them emitted as a segment of one kind. AnalyzeCriticalPath walks one trace
// from each kept iteration's end; a job's path (tracegate/analyzer/job_replay.h) walks its ranks,
// stopping at the collectives where the walk goes on on another rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/analysis/recorded_graph.h"
#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

enum class PathNode : uint8_t { kActEnd, kActStart, kCallEnd, kCallStart, kDone };

inline PathSegment::Table PathActTable(uint8_t kind) {
  using Table = PathSegment::Table;
  return kind == 0 ? Table::kKernel : kind == 1 ? Table::kMemcpy : Table::kMemset;
}

// The kind of an activity's own duration.
inline PathKind PathActKind(const ReplayActivity& x, const std::vector<KernelClass>& classes) {
  if (x.kind == 1) return PathKind::kCopy;
  if (x.kind == 2) return PathKind::kMemset;
  return x.row < classes.size() ? PathKindOf(classes[x.row]) : PathKind::kKernelOther;
}

// Walks back from `node` (`id`: the activity or call) until the walk is done (a node without a
// predecessor, or `emit` saying its lower bound is reached) or, at an activity's end, `stop(id)`
// holds: then it returns PathNode::kActEnd with *id that activity, its duration not emitted.
// emit(kind, table, row, call, from, pid, tid): the segment from `from` to the walk's cursor (the
// caller keeps the cursor); returns true once the lower bound is reached.
template <typename Emit, typename Stop>
PathNode WalkBack(const RecordedGraph& g, const ApiTable& a, const std::vector<KernelClass>& classes, PathNode node,
                  size_t* id_inout, TimeNs lo, Emit&& emit, Stop&& stop) {
  using Table = PathSegment::Table;
  size_t id = *id_inout;
  auto call_end = [&](size_t c) { return std::max(a.start[c], a.end[c]); };
  // The activity of the node (kActEnd, then its kActStart).
  ReplayActivity x = node == PathNode::kActStart ? g.Act(static_cast<uint32_t>(id)) : ReplayActivity{};
  while (node != PathNode::kDone) {
    bool reached = false;
    switch (node) {
      case PathNode::kActEnd: {
        if (stop(id)) {
          *id_inout = id;
          return PathNode::kActEnd;
        }
        x = g.Act(static_cast<uint32_t>(id));
        reached = emit(PathActKind(x, classes), PathActTable(x.kind), x.row, x.call, x.start, kUnknownId, kUnknownId);
        node = PathNode::kActStart;
        break;
      }
      case PathNode::kActStart: {
        int32_t from = -1;
        switch (g.BindAct(static_cast<uint32_t>(id), x, &from)) {
          case ActBound::kLaunch:
            reached = emit(PathKind::kLaunchDelay, PathActTable(x.kind), x.row, x.call,
                           a.start[static_cast<size_t>(x.call)], kUnknownId, kUnknownId);
            node = PathNode::kCallStart;
            id = static_cast<size_t>(x.call);
            break;
          case ActBound::kStream:
          case ActBound::kEvent: {
            // The recorded gap after the previous work of its stream, or (a stream wait event)
            // after the event's work on the other stream.
            const size_t p = static_cast<size_t>(from);
            reached = emit(PathKind::kGpuGap, PathActTable(x.kind), x.row, x.call, g.Act(static_cast<uint32_t>(p)).end,
                           kUnknownId, kUnknownId);
            node = PathNode::kActEnd;
            id = p;
            break;
          }
          case ActBound::kNone:
            reached = emit(PathKind::kUnattributed, Table::kNone, -1, -1, lo, kUnknownId, kUnknownId);
            node = PathNode::kDone;
            break;
        }
        break;
      }
      case PathNode::kCallEnd: {
        const int32_t w = g.CallWaited(static_cast<uint32_t>(id));
        const int64_t c = static_cast<int64_t>(id);
        if (w >= 0) {
          reached =
              emit(PathKind::kSyncWait, Table::kApi, c, c, g.Act(static_cast<uint32_t>(w)).end, a.pid[id], a.tid[id]);
          node = PathNode::kActEnd;
          id = static_cast<size_t>(w);
        } else {
          const uint8_t sync = g.CallSync(static_cast<uint32_t>(id));
          const PathKind kind = (sync & 1)   ? PathKind::kSyncWait
                                : (sync & 2) ? PathKind::kLaunchCall
                                             : PathKind::kRuntimeCall;
          reached = emit(kind, Table::kApi, c, c, a.start[id], a.pid[id], a.tid[id]);
          node = PathNode::kCallStart;
        }
        break;
      }
      case PathNode::kCallStart: {
        const int32_t p = g.CallPrev(static_cast<uint32_t>(id));
        const int64_t c = static_cast<int64_t>(id);
        if (p >= 0) {
          reached =
              emit(PathKind::kHostCompute, Table::kApi, c, c, call_end(static_cast<size_t>(p)), a.pid[id], a.tid[id]);
          node = PathNode::kCallEnd;
          id = static_cast<size_t>(p);
        } else {
          reached = emit(PathKind::kHostCompute, Table::kApi, c, c, lo, a.pid[id], a.tid[id]);
          node = PathNode::kDone;
        }
        break;
      }
      case PathNode::kDone: break;
    }
    if (reached) node = PathNode::kDone;
  }
  *id_inout = id;
  return PathNode::kDone;
}

// Without a marker's thread: per kept iteration, its call that ended last by the iteration's end
// (the first by row at a tie), -1 for none or with a marker's thread.
inline std::vector<int32_t> LastCallOf(const RecordedGraph& g, const ApiTable& a, const IterationAnalysis& its) {
  auto call_end = [&](size_t c) { return std::max(a.start[c], a.end[c]); };
  std::vector<int32_t> last_call_of(its.iterations.size(), -1);
  for (size_t c = 0; c < its.api_iteration.size() && c < a.size(); ++c) {
    const int32_t k = its.api_iteration[c];
    if (k < 0 || static_cast<size_t>(k) >= its.iterations.size()) continue;
    if (its.iterations[static_cast<size_t>(k)].tid != kUnknownId) continue;
    int32_t& best = last_call_of[static_cast<size_t>(k)];
    if (call_end(c) <= g.End(static_cast<size_t>(k)).end &&
        (best < 0 || call_end(c) > call_end(static_cast<size_t>(best))))
      best = static_cast<int32_t>(c);
  }
  return last_call_of;
}

// Where the walk of kept iteration k starts, from what ends its span (RecordedGraph::End): emits
// the segment after that node (emit as WalkBack's, the cursor at the span's end) and returns the
// node (*id: the activity or call), kDone when nothing precedes it. `last_call`: LastCallOf's.
template <typename Emit>
PathNode WalkStart(const RecordedGraph& g, const ApiTable& a, const IterationAnalysis& its, size_t k, int32_t last_call,
                   Emit&& emit, size_t* id) {
  using Table = PathSegment::Table;
  auto call_end = [&](size_t c) { return std::max(a.start[c], a.end[c]); };
  const Iteration& it = its.iterations[k];
  const ReplayRecord::IterationEnd& span = g.End(k);
  const bool thread = it.tid != kUnknownId;
  // Without a marker's thread (a trace without step markers) the replay ends the span with its
  // GPU work; the path ends with whatever ended last: a call that ended after that work starts
  // the walk there instead (the host's own work after the last GPU work is on the path).
  if (!thread && span.end_act >= 0 && last_call >= 0 &&
      call_end(static_cast<size_t>(last_call)) > g.Act(static_cast<uint32_t>(span.end_act)).end) {
    *id = static_cast<size_t>(last_call);
    return emit(PathKind::kUnattributed, Table::kNone, -1, -1, call_end(*id), kUnknownId, kUnknownId)
               ? PathNode::kDone
               : PathNode::kCallEnd;
  }
  if (span.end_act >= 0) {
    *id = static_cast<size_t>(span.end_act);
    return emit(PathKind::kUnattributed, Table::kNone, -1, -1, g.Act(static_cast<uint32_t>(*id)).end, kUnknownId,
                kUnknownId)
               ? PathNode::kDone
               : PathNode::kActEnd;
  }
  if (span.end_call >= 0) {
    *id = static_cast<size_t>(span.end_call);
    return emit(PathKind::kHostCompute, Table::kApi, -1, -1, call_end(*id), its.pid, it.tid) ? PathNode::kDone
                                                                                             : PathNode::kCallEnd;
  }
  emit(thread ? PathKind::kHostCompute : PathKind::kUnattributed, Table::kNone, -1, -1, span.start, its.pid, it.tid);
  return PathNode::kDone;
}

}  // namespace tg::internal
