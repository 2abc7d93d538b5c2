// The critical path (tracegate/analyzer/critical_path.h): the replay's graph with nothing changed
// (recorded_graph.h), its bindings walked back from each kept iteration's end.
#include "tracegate/analyzer/critical_path.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/path_walk.h"
#include "analyzer/analysis/recorded_graph.h"
#include "analyzer/analysis/summary_internal.h"
#include "analyzer/host/host_model.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/keep_largest.h"

namespace tg {

using internal::ApiIndex;
using internal::HostModel;
using internal::KeepLargest;
using internal::RecordedGraph;
using internal::ReplayRecord;

namespace {

using Table = PathSegment::Table;

// A kept segment: the segment and the thread it ran on (host segments).
struct Kept {
  PathSegment seg;
  int64_t pid, tid;
};
// Longer first; at equal length the earlier.
bool Longer(const Kept& x, const Kept& y) {
  return x.seg.duration != y.seg.duration ? x.seg.duration > y.seg.duration : x.seg.start < y.seg.start;
}

}  // namespace

Status AnalyzeCriticalPath(const Trace& t, const IterationAnalysis& its, const std::vector<KernelClass>& classes,
                           const ApiIndex* index, const HostModel* host, const CriticalPathOptions& options,
                           CriticalPathResult* out) {
  *out = CriticalPathResult{};
  if (its.iterations.empty()) return InvalidInput("no kept iterations");
  std::optional<ApiIndex> own_index;
  if (!index) index = &own_index.emplace(t.api_calls);
  std::optional<HostModel> own_host;
  if (!host) {
    uint64_t before_launch = 0;
    host = &own_host.emplace(t, internal::LaunchedCalls(t, *index, &before_launch), internal::HostModelOptions{});
  }
  const RecordedGraph g(t, its, *index, options.kernels_by_start);
  const ApiTable& a = t.api_calls;
  const std::vector<int32_t> last_call_of = internal::LastCallOf(g, a, its);

  std::vector<Kept> top;     // a heap: the shortest kept on top
  std::vector<Kept> detail;  // the same, for detail_iteration's whole path
  auto keep = [&](const PathSegment& s, int64_t pid, int64_t tid) {
    KeepLargest(top, options.top_segments, Kept{s, pid, tid}, Longer);
    if (s.iteration == options.detail_iteration) {
      out->detail_total++;
      KeepLargest(detail, options.detail_cap, Kept{s, pid, tid}, Longer);
    }
  };
  // host_compute by frame name (a string id; the last slot: time in no frame, or in a frame with
  // no name), with the last event of that name it met (its ShortName).
  struct FrameSum {
    TimeNs ns = 0;
    uint32_t event = HostModel::kNoEvent;
    bool seen = false;
  };
  std::vector<FrameSum> frames(t.strings.size() + 1);
  const size_t no_frame = t.strings.size();
  HostModel::Hint hint;
  auto split_frames = [&](int64_t pid, int64_t tid, TimeNs from, TimeNs to) {
    const int32_t th = host->empty() ? HostModel::kNoThread : host->ThreadOf(pid, tid);
    if (th == HostModel::kNoThread) {
      frames[no_frame].ns += to - from;
      frames[no_frame].seen = true;
      return;
    }
    host->Split(
        th, from, to,
        [&](const internal::HostPiece& p) {
          size_t slot = no_frame;
          if (p.frame != HostModel::kNoEvent) {
            const StringId name = host->NameId(p.frame);
            if (!t.Name(name).empty()) slot = name;
          }
          FrameSum& f = frames[slot];
          f.ns += p.end - p.start;
          f.seen = true;
          if (p.frame != HostModel::kNoEvent) {
            f.event = p.frame;
            out->has_frames = true;
          }
        },
        &hint);
  };

  // An iteration's host_compute segments, as the walk meets them (latest first).
  struct HostSegment {
    int64_t pid, tid;
    TimeNs from, to;
  };
  std::vector<HostSegment> host_pieces;
  for (size_t k = 0; k < its.iterations.size(); ++k) {
    const ReplayRecord::IterationEnd& span = g.End(k);
    const TimeNs lo = span.start;
    TimeNs cursor = std::max(span.end, lo);
    std::array<TimeNs, kPathKindCount> sums{};
    // The segment from `from` to the cursor, cut at the iteration's start; true once it is reached.
    auto emit = [&](PathKind kind, Table table, int64_t row, int64_t call, TimeNs from, int64_t pid = kUnknownId,
                    int64_t tid = kUnknownId) {
      const TimeNs next = std::min(cursor, std::max(from, lo));
      PathSegment s{kind, table, row, call, k, next, cursor - next};
      if (options.on_segment) options.on_segment(s);
      if (s.duration > 0) {
        sums[static_cast<size_t>(kind)] += s.duration;
        out->segments++;
        if (kind == PathKind::kHostCompute) host_pieces.push_back({pid, tid, next, cursor});
        keep(s, pid, tid);
      }
      cursor = next;
      return cursor <= lo;
    };
    size_t id = 0;
    const internal::PathNode node = internal::WalkStart(g, a, its, k, last_call_of[k], emit, &id);
    internal::WalkBack(g, a, classes, node, &id, lo, emit, [](size_t) { return false; });
    if (cursor > lo) emit(PathKind::kUnattributed, Table::kNone, -1, -1, lo);
    // The host pieces by frame, in time order (the host model's hint reads forward).
    for (auto p = host_pieces.rbegin(); p != host_pieces.rend(); ++p) split_frames(p->pid, p->tid, p->from, p->to);
    host_pieces.clear();
    for (size_t i = 0; i < kPathKindCount; ++i) out->kind_ns[i] += sums[i];
    out->step_total_ns += span.end > lo ? span.end - lo : 0;
    if (options.on_iteration) options.on_iteration(k, sums);
  }
  out->iterations = its.iterations.size();

  // A kept segment, named.
  auto named = [&](const Kept& k) {
    PathTopSegment s;
    s.kind = k.seg.kind;
    s.iteration = its.iterations[k.seg.iteration].index;
    s.start = k.seg.start;
    s.duration = k.seg.duration;
    const size_t row = static_cast<size_t>(std::max<int64_t>(0, k.seg.row));
    switch (k.seg.table) {
      case Table::kKernel:
        s.name = internal::Demangle(t.Name(t.kernels.name[row]));
        std::tie(s.gpu, s.device, s.stream) = std::tuple{true, t.kernels.device[row], t.kernels.stream[row]};
        break;
      case Table::kMemcpy:
        s.name = "Memcpy " + std::string(CopyKindName(t.memcpys.kind[row]));
        std::tie(s.gpu, s.device, s.stream) = std::tuple{true, t.memcpys.device[row], t.memcpys.stream[row]};
        break;
      case Table::kMemset:
        s.name = "Memset";
        std::tie(s.gpu, s.device, s.stream) = std::tuple{true, t.memsets.device[row], t.memsets.stream[row]};
        break;
      case Table::kApi:
        if (k.seg.kind != PathKind::kHostCompute) s.name = std::string(t.Name(a.name[row]));
        s.pid = k.pid;
        s.tid = k.tid;
        break;
      case Table::kNone:
        s.pid = k.pid;
        s.tid = k.tid;
        break;
    }
    if (k.seg.kind == PathKind::kHostCompute) {
      s.pid = k.pid;
      s.tid = k.tid;
      // Its largest frame.
      const int32_t th = host->empty() ? HostModel::kNoThread : host->ThreadOf(k.pid, k.tid);
      if (th != HostModel::kNoThread) {
        std::unordered_map<uint32_t, TimeNs> by_frame;
        host->Split(th, k.seg.start, k.seg.start + k.seg.duration, [&](const internal::HostPiece& p) {
          if (p.frame != HostModel::kNoEvent) by_frame[p.frame] += p.end - p.start;
        });
        uint32_t best = HostModel::kNoEvent;
        TimeNs best_ns = 0;
        for (const auto& [ev, ns] : by_frame)
          if (ns > best_ns || (ns == best_ns && ev < best)) std::tie(best, best_ns) = std::tuple{ev, ns};
        if (best != HostModel::kNoEvent) s.name = host->ShortName(best);
      }
    }
    return s;
  };
  // The longest segments, named.
  std::sort(top.begin(), top.end(), Longer);
  for (const Kept& k : top) out->top.push_back(named(k));
  // The drawn iteration's path, in time order.
  if (options.detail_iteration < its.iterations.size()) {
    out->has_detail = true;
    out->detail_index = its.iterations[options.detail_iteration].index;
    std::sort(detail.begin(), detail.end(), [](const Kept& x, const Kept& y) {
      return x.seg.start != y.seg.start ? x.seg.start < y.seg.start : x.seg.duration < y.seg.duration;
    });
    for (const Kept& k : detail) out->detail.push_back(named(k));
  }
  // host_compute by frame, the largest first (ties: by name).
  std::vector<PathFrame> all;
  for (const FrameSum& f : frames)
    if (f.seen) all.push_back({f.event == HostModel::kNoEvent ? std::string() : host->ShortName(f.event), f.ns});
  std::sort(all.begin(), all.end(),
            [](const PathFrame& x, const PathFrame& y) { return x.ns != y.ns ? x.ns > y.ns : x.name < y.name; });
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < options.top_frames) out->frames.push_back(all[i]);
    else out->frames_other_ns += all[i].ns;
  }
  out->edges = {
      "host thread: each runtime/driver call starts after the thread's previous call ended, plus the host time between",
      "launch: GPU work starts after its launch call started, plus the launch delay",
      "stream: GPU work starts after the previous work of its stream ended (plus the recorded gap when the stream was "
      "busy)",
      "event wait: after a cudaStreamWaitEvent, the next GPU work its thread launches onto the waiting stream starts "
      "after the event's work (the last work launched onto the recording stream before the cudaEventRecord) ended, "
      "plus the recorded gap when that work held it back",
      "sync: a synchronising call returns after the GPU work of its process that ended last while it waited, plus its "
      "wake-up delay; a cudaEventSynchronize whose event's record the trace names, after the event's work",
      "iteration end: the later of its GPU work's end and its host thread's marker end",
  };
  out->assumptions = {
      "cross-stream event waits are edges only where the trace names the event's record (Kineto's wait_on_stream and "
      "wait_on_cuda_event_record_corr_id, nsys' and tracegate record's CUDA event records); without it a stream waits "
      "only for itself and "
      "its launches",
      "collectives are not matched across ranks: a collective kernel's time counts as communication on this rank",
      "at a tie the stream edge binds work queued on a busy stream, the launch edge work on an idle one",
      "host threads are independent: time a thread spends blocked on another thread (an autograd backward thread, a "
      "data loader) counts as its own host_compute",
      "a segment the walk reaches before the iteration's start is cut there",
  };
  return Status::Ok();
}

}  // namespace tg
