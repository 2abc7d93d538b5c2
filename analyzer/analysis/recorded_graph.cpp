// The critical path's graph with nothing changed (recorded_graph.h): the replay's edges
// (replay_engine.h) read from the recorded times, node by node.
//
// The replay visits its points in (time, type, id) order, types at equal times: an activity's
// end, a call's end, a call's start, an activity's start. Every rule below reads that order:
//   - an activity's stream predecessor: the activity of its stream before it in (start, id);
//   - a call's thread predecessor: the thread's call with the largest (end, row) among those whose
//     end the pass had met when the call started: end < start, or end == start (and, for a call
//     with no duration, whose start the pass meets at its end point, row < its own);
//   - a synchronising call waited for the activities of its process that ended in (start, end]:
//     the one that ended last, the lowest id among those ending together.
#include "analyzer/analysis/recorded_graph.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/dense_ids.h"

namespace tg::internal {

namespace {

// A table's rows in (start, row) order, from its start column.
std::vector<uint32_t> ByStart(const std::vector<TimeNs>& start) {
  std::vector<uint32_t> order(start.size());
  std::iota(order.begin(), order.end(), 0u);
  if (!std::is_sorted(start.begin(), start.end()))
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return start[x] < start[y]; });
  return order;
}

}  // namespace

TimeNs RecordedGraph::Start(uint32_t i) const {
  if (i < kernels_) return t_.kernels.start[i];
  if (i < kernels_ + memcpys_) return t_.memcpys.start[i - kernels_];
  return t_.memsets.start[i - kernels_ - memcpys_];
}

int64_t RecordedGraph::Pid(uint32_t i) const {
  if (i < kernels_) return t_.kernels.pid[i];
  if (i < kernels_ + memcpys_) return t_.memcpys.pid[i - kernels_];
  return t_.memsets.pid[i - kernels_ - memcpys_];
}

int64_t RecordedGraph::LaunchCall(uint32_t i) const {
  if (i < kernels_) return index_.Find(t_.kernels.correlation[i], t_.kernels.pid[i]);
  if (i < kernels_ + memcpys_) {
    const size_t r = i - kernels_;
    return index_.Find(t_.memcpys.correlation[r], t_.memcpys.pid[r]);
  }
  const size_t r = i - kernels_ - memcpys_;
  return index_.Find(t_.memsets.correlation[r], t_.memsets.pid[r]);
}

ReplayActivity RecordedGraph::Act(uint32_t i) const {
  const uint8_t kind = i < kernels_ ? 0 : i < kernels_ + memcpys_ ? 1 : 2;
  const uint32_t row = static_cast<uint32_t>(kind == 0 ? i : kind == 1 ? i - kernels_ : i - kernels_ - memcpys_);
  return {Start(i), EndOf(i), Pid(i), LaunchCall(i), kind, row};
}

int64_t RecordedGraph::LoggedPid(uint32_t i) const {
  const int64_t call = LaunchCall(i);
  return call >= 0 ? t_.api_calls.pid[static_cast<size_t>(call)] : Pid(i);
}

RecordedGraph::RecordedGraph(const Trace& t, const IterationAnalysis& its, const ApiIndex& index,
                             const std::vector<uint32_t>* kernels_by_start)
    : t_(t), index_(index), kernels_(t.kernels.size()), memcpys_(t.memcpys.size()), memsets_(t.memsets.size()) {
  const ApiTable& a = t.api_calls;
  const size_t n = activities();
  end_.reserve(n);
  for (size_t r = 0; r < kernels_; ++r) end_.push_back(std::max(t.kernels.start[r], t.kernels.end[r]));
  for (size_t r = 0; r < memcpys_; ++r) end_.push_back(std::max(t.memcpys.start[r], t.memcpys.end[r]));
  for (size_t r = 0; r < memsets_; ++r) end_.push_back(std::max(t.memsets.start[r], t.memsets.end[r]));
  // Every activity in (start, id) order: the three tables' orders merged (ids: kernels first).
  std::vector<uint32_t> own_kernels;
  if (!kernels_by_start || kernels_by_start->size() != kernels_)
    kernels_by_start = &(own_kernels = ByStart(t.kernels.start));
  const std::vector<uint32_t> copies = ByStart(t.memcpys.start), sets = ByStart(t.memsets.start);
  // Each activity's predecessor on its stream, and the streams' activities in start order.
  prev_.assign(n, -1);
  DenseIds<std::pair<int64_t, int64_t>> streams;
  std::vector<int32_t> last;
  std::vector<std::vector<uint32_t>> of_stream;
  auto visit = [&](uint32_t i, int64_t device, int64_t stream) {
    const uint32_t st = streams.Of({device, stream});
    if (st >= last.size()) last.resize(st + 1, -1), of_stream.resize(st + 1);
    prev_[i] = last[st];
    last[st] = static_cast<int32_t>(i);
    of_stream[st].push_back(i);
  };
  {
    size_t k = 0, m = 0, s = 0;
    const std::vector<uint32_t>& kb = *kernels_by_start;
    const KernelTable& kt = t.kernels;
    const MemcpyTable& ct = t.memcpys;
    const MemsetTable& mt = t.memsets;
    while (k < kb.size() || m < copies.size() || s < sets.size()) {
      // The least (start, id) of the three heads; at equal starts the kernel, then the copy.
      int which = -1;
      TimeNs best = std::numeric_limits<TimeNs>::max();
      if (k < kb.size()) which = 0, best = kt.start[kb[k]];
      if (m < copies.size() && (which < 0 || ct.start[copies[m]] < best)) which = 1, best = ct.start[copies[m]];
      if (s < sets.size() && (which < 0 || mt.start[sets[s]] < best)) which = 2;
      if (which == 0) {
        const uint32_t r = kb[k++];
        visit(r, kt.device[r], kt.stream[r]);
      } else if (which == 1) {
        const uint32_t r = copies[m++];
        visit(static_cast<uint32_t>(kernels_ + r), ct.device[r], ct.stream[r]);
      } else {
        const uint32_t r = sets[s++];
        visit(static_cast<uint32_t>(kernels_ + memcpys_ + r), mt.device[r], mt.stream[r]);
      }
    }
  }
  // The streams' activities by end: in start order they usually end in that order too.
  by_end_.reserve(n);
  std::vector<std::pair<TimeNs, uint32_t>> sorting;
  for (std::vector<uint32_t>& ids : of_stream) {
    bool monotone = true;
    TimeNs before = std::numeric_limits<TimeNs>::min();
    for (uint32_t i : ids) {
      const TimeNs e = EndOf(i);
      if (e < before) {
        monotone = false;
        break;
      }
      before = e;
    }
    if (!monotone) {
      sorting.clear();
      for (uint32_t i : ids) sorting.emplace_back(EndOf(i), i);
      std::sort(sorting.begin(), sorting.end());
      for (size_t j = 0; j < ids.size(); ++j) ids[j] = sorting[j].second;
    }
    stream_span_.emplace_back(static_cast<uint32_t>(by_end_.size()),
                              static_cast<uint32_t>(by_end_.size() + ids.size()));
    by_end_.insert(by_end_.end(), ids.begin(), ids.end());
    std::vector<uint32_t>().swap(ids);
  }

  // The calls of each thread by (end, row).
  std::map<std::pair<int64_t, int64_t>, uint32_t> thread_of;
  {
    DenseIds<std::pair<int64_t, int64_t>> threads;
    std::vector<uint32_t> call_thread(a.size());
    for (size_t c = 0; c < a.size(); ++c) call_thread[c] = threads.Of({a.pid[c], a.tid[c]});
    thread_of = threads.Map();
    thread_begin_.assign(threads.size() + 1, 0);
    for (uint32_t th : call_thread) ++thread_begin_[th + 1];
    std::partial_sum(thread_begin_.begin(), thread_begin_.end(), thread_begin_.begin());
    calls_by_end_.resize(a.size());
    std::vector<uint32_t> fill(thread_begin_.begin(), thread_begin_.end() - 1);
    for (uint32_t c = 0; c < a.size(); ++c) calls_by_end_[fill[call_thread[c]]++] = c;
    auto end_of = [&](uint32_t c) { return std::max(a.start[c], a.end[c]); };
    for (size_t th = 0; th + 1 < thread_begin_.size(); ++th) {
      const auto b = calls_by_end_.begin() + thread_begin_[th], e = calls_by_end_.begin() + thread_begin_[th + 1];
      if (!std::is_sorted(b, e, [&](uint32_t x, uint32_t y) { return end_of(x) < end_of(y); }))
        std::sort(b, e, [&](uint32_t x, uint32_t y) { return end_of(x) != end_of(y) ? end_of(x) < end_of(y) : x < y; });
    }
    call_pos_.resize(a.size());
    for (uint32_t j = 0; j < calls_by_end_.size(); ++j) call_pos_[calls_by_end_[j]] = j;
  }

  // Cross-stream event edges (rare: only traces that name the events' records).
  if (HasEventRecords(t)) {
    std::vector<ReplayActivity> acts(n);
    for (uint32_t i = 0; i < n; ++i) acts[i] = Act(i);
    events_ = FindEventEdges(t, index, acts);
  }

  // Each kept iteration's end (ReplayEngine's with no change: every shift is 0): the activity of
  // the iteration that ended last (the first by id at a tie) when it ends as late as the host,
  // else the host thread's last call by the marker's end.
  const size_t iters = its.iterations.size();
  std::vector<TimeNs> last_end(iters, kReplayNever);
  std::vector<int32_t> last_act(iters, -1);
  auto gpu_ends = [&](const std::vector<int32_t>& owner, size_t rows, size_t first) {
    for (size_t r = 0; r < rows && r < owner.size(); ++r) {
      if (owner[r] < 0) continue;
      const size_t k = static_cast<size_t>(owner[r]);
      const uint32_t i = static_cast<uint32_t>(first + r);
      if (EndOf(i) > last_end[k]) last_end[k] = EndOf(i), last_act[k] = static_cast<int32_t>(i);
    }
  };
  gpu_ends(its.kernel_iteration, kernels_, 0);
  gpu_ends(its.memcpy_iteration, memcpys_, kernels_);
  gpu_ends(its.memset_iteration, memsets_, kernels_ + memcpys_);
  ends_.resize(iters);
  for (size_t k = 0; k < iters; ++k) {
    const Iteration& it = its.iterations[k];
    ReplayRecord::IterationEnd& end = ends_[k];
    const bool thread = it.tid != kUnknownId;
    const TimeNs host_end = thread && its.from_markers ? it.marker_end : it.end;
    end.start = it.start;
    end.end = it.end;
    if (const auto th = thread ? thread_of.find({its.pid, it.tid}) : thread_of.end(); th != thread_of.end()) {
      // The thread's last call that ended by host_end.
      const auto b = calls_by_end_.begin() + thread_begin_[th->second];
      const auto e = calls_by_end_.begin() + thread_begin_[th->second + 1];
      auto after =
          std::upper_bound(b, e, host_end, [&](TimeNs x, uint32_t c) { return x < std::max(a.start[c], a.end[c]); });
      if (after != b) end.end_call = static_cast<int32_t>(*std::prev(after));
    }
    if (last_end[k] != kReplayNever) {
      const bool gpu_last = !thread || last_end[k] >= host_end;
      const TimeNs tail = gpu_last ? it.end - last_end[k] : 0;
      if (!thread || last_end[k] + tail >= end.end) {
        end.end_act = last_act[k];
        end.tail = tail;
      }
    }
  }
}

ActBound RecordedGraph::BindAct(uint32_t i, const ReplayActivity& x, int32_t* from) const {
  *from = -1;
  const TimeNs start = x.start;
  const int64_t call = x.call;
  const int32_t p = prev_[i];
  const ApiTable& a = t_.api_calls;
  // The event work its stream waited for: the one that ended last holds it back when it ended
  // after its launch and after its stream's previous work.
  const auto& waits = events_.waits;
  auto wait_begin = std::lower_bound(waits.begin(), waits.end(), std::pair<uint32_t, uint32_t>{i, 0});
  auto wait_end = wait_begin;
  int64_t held_by = -1;
  for (; wait_end != waits.end() && wait_end->first == i; ++wait_end)
    if (held_by < 0 || EndOf(wait_end->second) > EndOf(static_cast<uint32_t>(held_by))) held_by = wait_end->second;
  if (held_by >= 0) {
    const TimeNs e = EndOf(static_cast<uint32_t>(held_by));
    if ((call >= 0 && e <= a.start[static_cast<size_t>(call)]) || (p >= 0 && e <= EndOf(static_cast<uint32_t>(p))))
      held_by = -1;
  }
  const bool held = held_by >= 0;
  TimeNs s = start;
  ActBound bound = ActBound::kNone;
  if (call >= 0) {
    // The replay starts work queued on a busy stream, or held by an event, the process's smallest
    // launch delay after its launch: never later than recorded. Which edge binds does not depend
    // on how much earlier: the stream's edge (busy, not held) or the event's (held) reaches the
    // recorded start, and a held activity's stream edge binds only past it. So the recorded
    // start stands for the launch edge's time here.
    s = start;
    bound = ActBound::kLaunch;
  }
  if (p >= 0) {
    const TimeNs prev_end = EndOf(static_cast<uint32_t>(p));
    const bool busy = call >= 0 && prev_end > a.start[static_cast<size_t>(call)];
    const TimeNs after = prev_end + ((call < 0 || busy) && !held ? start - prev_end : 0);
    if (bound == ActBound::kNone || after > s || (after == s && (busy || call < 0) && !held)) {
      bound = ActBound::kStream;
      *from = p;
      s = std::max(s, after);
    }
  }
  for (auto w = wait_begin; w != wait_end; ++w) {
    const uint32_t q = w->second;
    const bool holder = static_cast<int64_t>(q) == held_by;
    const TimeNs after = EndOf(q) + (holder ? start - EndOf(q) : 0);
    if (after > s || (after == s && holder)) {
      bound = ActBound::kEvent;
      *from = static_cast<int32_t>(q);
      s = after;
    }
  }
  if (bound == ActBound::kLaunch || bound == ActBound::kNone) *from = -1;
  return bound;
}

int32_t RecordedGraph::CallPrev(uint32_t c) const {
  const ApiTable& a = t_.api_calls;
  const TimeNs start = a.start[c];
  const bool instant = std::max(a.start[c], a.end[c]) == start;
  // Met before the call's start: ends before it, or at it (and, for an instant call, below its row).
  auto before = [&](uint32_t x) {
    const TimeNs end = std::max(a.start[x], a.end[x]);
    return end < start || (end == start && (!instant || x < c));
  };
  // The last such call in the thread's (end, row) order lies before the call's own place (which
  // the call itself is not); usually just before it, else a binary search finds it.
  uint32_t j = call_pos_[c];
  const uint32_t begin = *std::prev(std::upper_bound(thread_begin_.begin(), thread_begin_.end(), j));
  for (int steps = 0; j > begin && steps < 8; ++steps, --j)
    if (before(calls_by_end_[j - 1])) return static_cast<int32_t>(calls_by_end_[j - 1]);
  if (j == begin) return -1;
  const auto b = calls_by_end_.begin() + begin;
  auto past = std::partition_point(b, calls_by_end_.begin() + j, before);
  return past == b ? -1 : static_cast<int32_t>(*std::prev(past));
}

uint8_t RecordedGraph::CallSync(uint32_t c) const {
  const std::string_view name = t_.Name(t_.api_calls.name[c]);
  return static_cast<uint8_t>((IsSyncCall(name) ? 1 : 0) | (IsLaunchCall(name) ? 2 : 0));
}

int32_t RecordedGraph::CallWaited(uint32_t c) const {
  const ApiTable& a = t_.api_calls;
  const TimeNs start = a.start[c], end = std::max(a.start[c], a.end[c]);
  // A cudaEventSynchronize whose event's record the trace names: the event's work.
  auto ev = std::lower_bound(events_.syncs.begin(), events_.syncs.end(), std::pair<uint32_t, uint32_t>{c, 0});
  if (ev != events_.syncs.end() && ev->first == c) {
    const uint32_t q = ev->second;
    const TimeNs work_end = EndOf(q);
    const TimeNs dur = std::max<TimeNs>(0, a.end[c] - a.start[c]);
    const bool waited = work_end > start;
    const TimeNs wake = waited ? std::max<TimeNs>(0, a.end[c] - work_end) : 0;
    const TimeNs own = waited ? wake : dur;
    if (work_end + wake >= start + own && (waited || work_end > start + own)) return static_cast<int32_t>(q);
    return -1;
  }
  if (!(CallSync(c) & 1)) return -1;
  // The activities of its process (by their launch calls' pid) that ended while it waited: the
  // last to end, the lowest id at a tie.
  const int64_t pid = a.pid[c];
  int32_t best = -1;
  TimeNs best_end = start;
  for (const auto& [begin, stop] : stream_span_) {
    const auto b = by_end_.begin() + begin, e = by_end_.begin() + stop;
    auto it = std::partition_point(b, e, [&](uint32_t x) { return EndOf(x) <= end; });
    // Back from the last that ended by the call's end: the first of the process is the last to end.
    TimeNs found = kReplayNever;
    uint32_t low = 0;
    while (it != b) {
      const uint32_t x = *--it;
      const TimeNs x_end = EndOf(x);
      if (x_end <= start || x_end < best_end || (found != kReplayNever && x_end < found)) break;
      if (LoggedPid(x) != pid) continue;
      if (found == kReplayNever || x < low) low = x;
      found = x_end;
    }
    if (found == kReplayNever) continue;
    if (found > best_end || best < 0 || low < static_cast<uint32_t>(best)) {
      best = static_cast<int32_t>(low);
      best_end = found;
    }
  }
  return best;
}

}  // namespace tg::internal
