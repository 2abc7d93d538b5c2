// AttributeIterationIdle: every GPU-idle instant of every kept iteration to a cause
// (tracegate/analyzer/iteration_idle.h). One walk over the iterations' spans and the devices'
// busy union (Summary::GpuBusy); the GPU work on either side of an idle interval is found in
// the kernels by start (Summary::kernels_by_start) and the copies and memsets sorted here.
// Extra memory: the sorted copy and memset rows, and the pieces of one interval at a time.
#include "analyzer/analysis/iteration_idle_internal.h"

#include <algorithm>
#include <limits>

#include "analyzer/host/host_model.h"
#include "analyzer/util/keep_largest.h"
#include "analyzer/util/side_task.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

namespace {

constexpr size_t kLargestIntervals = 10;

std::vector<uint32_t> RowsByStart(const std::vector<TimeNs>& start) {
  std::vector<uint32_t> rows(start.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  if (!std::is_sorted(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return start[a] < start[b]; }))
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return start[a] < start[b]; });
  return rows;
}

// The position of the first of `rows` (ordered by `start`) that starts at or after x. `hint` is
// the previous answer: the walk's searches move forward in time, so a search from there (steps
// doubling, then a binary search) reads a few rows near it, not log2(n) rows all over the table.
size_t FirstAtOrAfter(const std::vector<uint32_t>& rows, const std::vector<TimeNs>& start, TimeNs x, size_t& hint) {
  const size_t n = rows.size();
  size_t lo = 0, hi = n;
  if (hint > 0 && hint <= n && start[rows[hint - 1]] < x) {  // the answer is at hint or after
    lo = hi = hint;
    for (size_t step = 1; hi < n && start[rows[hi]] < x; step *= 2) {
      lo = hi + 1;
      hi = std::min(n, lo + step);
    }
  }
  const auto it =
      std::lower_bound(rows.begin() + static_cast<std::ptrdiff_t>(lo), rows.begin() + static_cast<std::ptrdiff_t>(hi),
                       x, [&](uint32_t r, TimeNs v) { return start[r] < v; });
  hint = static_cast<size_t>(it - rows.begin());
  return hint;
}

// The copy and memset rows in start order (the kernels' are the summary's), shared by the walks.
struct RowsInOrder {
  explicit RowsInOrder(const Trace& t) : copies(RowsByStart(t.memcpys.start)), memsets(RowsByStart(t.memsets.start)) {}
  std::vector<uint32_t> copies, memsets;
};

// The GPU work in start order, per table, to find the items on either side of an idle interval
// (one per walk: it keeps where its last searches ended).
class GpuItems {
 public:
  GpuItems(const Trace& t, const std::vector<uint32_t>& kernels_by_start, const RowsInOrder& rows)
      : t_(t), kernels_(kernels_by_start), copies_(rows.copies), memsets_(rows.memsets) {}

  // The first item that starts at or after `b` (kNoItem when none): the work that ends the interval.
  uint32_t FirstFrom(TimeNs b) {
    uint32_t best = kNoItem;
    TimeNs best_start = std::numeric_limits<TimeNs>::max();
    auto look = [&](const std::vector<uint32_t>& rows, const std::vector<TimeNs>& start, ItemKind kind, size_t& hint) {
      const size_t i = FirstAtOrAfter(rows, start, b, hint);
      if (i < rows.size() && start[rows[i]] < best_start) best_start = start[rows[i]], best = MakeRef(kind, rows[i]);
    };
    look(kernels_, t_.kernels.start, ItemKind::kKernel, hint_[0]);
    look(copies_, t_.memcpys.start, ItemKind::kMemcpy, hint_[1]);
    look(memsets_, t_.memsets.start, ItemKind::kMemset, hint_[2]);
    return best;
  }
  // The item that ends the busy piece [s, e) (the latest end among the items starting inside it).
  uint32_t LastOf(TimeNs s, TimeNs e) {
    uint32_t best = kNoItem;
    TimeNs best_end = std::numeric_limits<TimeNs>::min();
    auto look = [&](const std::vector<uint32_t>& rows, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                    ItemKind kind, size_t& hint) {
      for (size_t i = FirstAtOrAfter(rows, start, s, hint); i < rows.size() && start[rows[i]] <= e; ++i)
        if (end[rows[i]] > best_end && end[rows[i]] <= e) best_end = end[rows[i]], best = MakeRef(kind, rows[i]);
    };
    look(kernels_, t_.kernels.start, t_.kernels.end, ItemKind::kKernel, hint_[3]);
    look(copies_, t_.memcpys.start, t_.memcpys.end, ItemKind::kMemcpy, hint_[4]);
    look(memsets_, t_.memsets.start, t_.memsets.end, ItemKind::kMemset, hint_[5]);
    return best;
  }
  // The first HtoD copy start in [s, e) and the last DtoH copy end in (s, e], if any.
  std::pair<TimeNs, TimeNs> CopyBounds(TimeNs s, TimeNs e) {
    TimeNs first_h2d = std::numeric_limits<TimeNs>::max(), last_d2h = std::numeric_limits<TimeNs>::min();
    const MemcpyTable& m = t_.memcpys;
    for (size_t i = FirstAtOrAfter(copies_, m.start, s, hint_[6]); i < copies_.size() && m.start[copies_[i]] < e; ++i) {
      const uint32_t r = copies_[i];
      if (m.kind[r] == CopyKind::kHtoD) first_h2d = std::min(first_h2d, m.start[r]);
      if (m.kind[r] == CopyKind::kDtoH && m.end[r] <= e) last_d2h = std::max(last_d2h, m.end[r]);
    }
    return {first_h2d, last_d2h};
  }

 private:
  const Trace& t_;
  const std::vector<uint32_t>& kernels_;
  const std::vector<uint32_t>& copies_;
  const std::vector<uint32_t>& memsets_;
  std::array<size_t, 7> hint_{};  // FirstAtOrAfter's, one per kind of search and table
};

struct Kept {
  TimeNs start, end;
  uint32_t previous, next;
  int32_t thread;
  size_t iteration;
  std::array<TimeNs, kIdleCauseCount> cause_ns;  // as attributed (named stages included)
};

// A total order (the iteration tells apart the same gap kept by two overlapping iterations), so
// the longest of two walks' longest are the longest of one walk over all.
bool Longer(const Kept& a, const Kept& b) {
  if (a.end - a.start != b.end - b.start) return a.end - a.start > b.end - b.start;
  return a.start != b.start ? a.start < b.start : a.iteration < b.iteration;
}

// What a walk over a run of iterations adds up; the two walks' are joined in iteration order.
struct Walk {
  std::array<TimeNs, kIdleCauseCount> ns{}, idle_phase_ns{};
  TimeNs total_ns = 0, pre_from_host_ns = 0, post_from_host_ns = 0;
  std::vector<Kept> largest;  // heap, its front the shortest kept
  std::vector<uint32_t> backlog_next;
  std::vector<IdlePiece> pieces;
};

// Iterations [k0, k1) of `its`: each one's idle causes and host pre/post (written to the
// iteration), the totals and the longest intervals to `w`. Reads the trace, the summary's busy
// union and kernels by start; `finder` and `items` are this walk's own (they keep search hints).
void WalkIterations(const Summary& s, const IdleCauseFinder& finder, GpuItems& items, IterationAnalysis* its, size_t k0,
                    size_t k1, bool want_pieces, Walk& w) {
  const HostModel* host = finder.host();
  const std::vector<std::pair<TimeNs, TimeNs>>& busy = s.GpuBusy();
  std::vector<CausePiece> pieces;
  auto keep = [&](const Kept& k) { KeepLargest(w.largest, kLargestIntervals, k, Longer); };
  // Where a walk from iteration 0 would be at k0: the busy pieces that end by the latest start so
  // far are behind it, and the stage pieces of earlier iterations.
  TimeNs latest = std::numeric_limits<TimeNs>::min();
  for (size_t k = 0; k < k0; ++k) latest = std::max(latest, its->iterations[k].start);
  size_t b =
      static_cast<size_t>(std::partition_point(busy.begin(), busy.end(),
                                               [&](const std::pair<TimeNs, TimeNs>& p) { return p.second <= latest; }) -
                          busy.begin());
  size_t stage =
      static_cast<size_t>(std::partition_point(its->stage_pieces.begin(), its->stage_pieces.end(),
                                               [&](const auto& p) { return p.iteration < static_cast<int32_t>(k0); }) -
                          its->stage_pieces.begin());
  std::vector<std::pair<TimeNs, TimeNs>> pre, post;
  for (size_t k = k0; k < k1; ++k) {
    Iteration& it = its->iterations[k];
    // The iteration's named pre and post ranges, each a union; pre wins where both are.
    pre.clear();
    post.clear();
    while (stage < its->stage_pieces.size() && its->stage_pieces[stage].iteration < static_cast<int32_t>(k)) ++stage;
    for (; stage < its->stage_pieces.size() && its->stage_pieces[stage].iteration == static_cast<int32_t>(k); ++stage) {
      const auto& p = its->stage_pieces[stage];
      (p.post ? post : pre).emplace_back(p.start, p.end);
    }
    for (auto* v : {&pre, &post}) {
      std::sort(v->begin(), v->end());
      std::vector<std::pair<TimeNs, TimeNs>> joined;
      for (const auto& [x, y] : *v) {
        if (!joined.empty() && x <= joined.back().second) joined.back().second = std::max(joined.back().second, y);
        else joined.emplace_back(x, y);
      }
      *v = std::move(joined);
    }
    const bool named_pre = !pre.empty(), named_post = !post.empty();
    int32_t thread = HostModel::kNoThread;
    if (host && it.tid != kUnknownId) thread = host->ThreadOf(its->pid, it.tid);
    // Where pre ends and post begins for host compute without named ranges.
    TimeNs first_gpu = std::numeric_limits<TimeNs>::max(), last_gpu = std::numeric_limits<TimeNs>::min();
    while (b < busy.size() && busy[b].second <= it.start) ++b;
    for (size_t j = b; j < busy.size() && busy[j].first < it.end; ++j) {
      first_gpu = std::min(first_gpu, std::max(busy[j].first, it.start));
      last_gpu = std::max(last_gpu, std::min(busy[j].second, it.end));
    }
    const auto [first_h2d, last_d2h] = items.CopyBounds(it.start, it.end);
    const TimeNs pre_until = std::min(first_gpu, first_h2d);
    const TimeNs post_from = last_d2h != std::numeric_limits<TimeNs>::min() ? last_d2h : last_gpu;
    // The idle intervals: the span minus the busy union.
    TimeNs cur = it.start;
    size_t j = b;
    auto attribute = [&](TimeNs a, TimeNs e) {
      if (e <= a) return;
      const uint32_t previous = j > 0 ? items.LastOf(busy[j - 1].first, busy[j - 1].second) : kNoItem;
      const uint32_t next = items.FirstFrom(e);
      pieces.clear();
      // Split by the named stages first: host_stage inside them, the finder's causes outside.
      TimeNs x = a;
      size_t pi = 0, qi = 0;
      while (x < e) {
        while (pi < pre.size() && pre[pi].second <= x) ++pi;
        while (qi < post.size() && post[qi].second <= x) ++qi;
        const bool in_pre = pi < pre.size() && pre[pi].first <= x;
        const bool in_post = !in_pre && qi < post.size() && post[qi].first <= x;
        TimeNs y = e;
        if (in_pre) y = std::min(y, pre[pi].second);
        else if (pi < pre.size()) y = std::min(y, pre[pi].first);
        if (in_post) y = std::min(y, post[qi].second);
        else if (qi < post.size()) y = std::min(y, post[qi].first);
        if (in_pre || in_post) pieces.push_back({x, y, IdleCause::kHostStage, HostModel::kNoEvent});
        else finder.Split(x, y, previous, next, thread, &pieces);
        x = y;
      }
      // Only an interval that may be among the longest is kept with its causes (Longer reads
      // the times and the iteration alone).
      Kept kept;
      kept.start = a;
      kept.end = e;
      kept.iteration = k;
      const bool candidate = w.largest.size() < kLargestIntervals || Longer(kept, w.largest.front());
      if (candidate) {
        kept.previous = previous;
        kept.next = next;
        kept.thread = thread;
        kept.cause_ns.fill(0);
        for (const CausePiece& p : pieces) kept.cause_ns[static_cast<size_t>(p.cause)] += p.end - p.start;
      }
      for (const CausePiece& p : pieces) {
        const TimeNs len = p.end - p.start;
        const size_t c = static_cast<size_t>(p.cause);
        it.idle_cause_ns[c] += len;
        if (p.cause == IdleCause::kHostStage) {  // the named pre/post phases
          if (want_pieces) w.pieces.push_back({p.start, p.end, p.start, p.start, p.cause});
          continue;
        }
        TimeNs moved_pre = 0, moved_post = 0;
        if (p.cause == IdleCause::kHostCompute) {
          const TimeNs pre_end = named_pre ? p.start : std::clamp(pre_until, p.start, p.end);
          const TimeNs post_start = named_post ? p.end : std::clamp(post_from, pre_end, p.end);
          moved_pre = pre_end - p.start;
          moved_post = p.end - post_start;
        }
        if (want_pieces) w.pieces.push_back({p.start, p.end, p.start + moved_pre, p.end - moved_post, p.cause});
        it.pre_from_host_ns += moved_pre;
        it.post_from_host_ns += moved_post;
        w.idle_phase_ns[c] += len - moved_pre - moved_post;
        if (p.cause == IdleCause::kDeviceBacklog && next != kNoItem) w.backlog_next.push_back(next);
      }
      if (candidate) keep(kept);
    };
    for (; j < busy.size() && busy[j].first < it.end; ++j) {
      attribute(cur, std::min(busy[j].first, it.end));
      cur = std::max(cur, busy[j].second);
    }
    attribute(cur, it.end);
    // The moved host compute becomes the pre / post phase.
    it.phase_ns[static_cast<size_t>(Phase::kPre)] += it.pre_from_host_ns;
    it.phase_ns[static_cast<size_t>(Phase::kPost)] += it.post_from_host_ns;
    it.phase_ns[static_cast<size_t>(Phase::kIdle)] -= it.pre_from_host_ns + it.post_from_host_ns;
    w.pre_from_host_ns += it.pre_from_host_ns;
    w.post_from_host_ns += it.post_from_host_ns;
    for (size_t c = 0; c < kIdleCauseCount; ++c) {
      w.ns[c] += it.idle_cause_ns[c];
      w.total_ns += it.idle_cause_ns[c];
    }
  }
}

}  // namespace

IterationIdle AttributeIterationIdle(const Trace& t, const Summary& s, const IdleCauseFinder& finder,
                                     IterationAnalysis* its, std::vector<IdlePiece>* pieces_out, size_t split_from) {
  IterationIdle out;
  out.attributed = true;
  const HostModel* host = finder.host();
  if (host) {
    out.captured_launches = host->captured_launches();
    out.capture_regions = host->capture_regions();
    const uint64_t executed = t.GpuEventCount();
    out.capture_trace = out.captured_launches > 0 && out.captured_launches >= executed;
    if (out.capture_trace)
      out.capture_note = StrFormat(
          "a graph-capture trace: %llu launches made while a stream captured (%llu capture region%s, %s) ran "
          "nothing, and %llu GPU activities executed; the idle time is the capture, so no idle finding is made",
          static_cast<unsigned long long>(out.captured_launches), static_cast<unsigned long long>(out.capture_regions),
          out.capture_regions == 1 ? "" : "s", host->capture_name().c_str(), static_cast<unsigned long long>(executed));
  }
  const RowsInOrder rows(t);
  const size_t n = its->iterations.size();
  // Two walks, the later half of the iterations on the second core with a copy of the finder
  // (it keeps search hints): each iteration's figures are its own, and the totals, the pieces
  // (in iteration order) and the longest intervals are joined exactly as one walk makes them.
  const size_t half = n >= split_from && n >= 2 ? n / 2 : n;
  Walk first, second;
  {
    const IdleCauseFinder finder2(finder);
    SideTask later([&] {
      GpuItems items(t, s.kernels_by_start, rows);
      WalkIterations(s, finder2, items, its, half, n, pieces_out != nullptr, second);
    });
    GpuItems items(t, s.kernels_by_start, rows);
    WalkIterations(s, finder, items, its, 0, half, pieces_out != nullptr, first);
    later.Wait();
  }
  for (size_t c = 0; c < kIdleCauseCount; ++c) {
    out.ns[c] = first.ns[c] + second.ns[c];
    out.idle_phase_ns[c] = first.idle_phase_ns[c] + second.idle_phase_ns[c];
  }
  out.total_ns = first.total_ns + second.total_ns;
  out.pre_from_host_ns = first.pre_from_host_ns + second.pre_from_host_ns;
  out.post_from_host_ns = first.post_from_host_ns + second.post_from_host_ns;
  std::vector<Kept> largest = std::move(first.largest);
  for (const Kept& k : second.largest) KeepLargest(largest, kLargestIntervals, k, Longer);
  std::vector<uint32_t> backlog_next = std::move(first.backlog_next);
  backlog_next.insert(backlog_next.end(), second.backlog_next.begin(), second.backlog_next.end());
  if (pieces_out) {
    pieces_out->insert(pieces_out->end(), first.pieces.begin(), first.pieces.end());
    pieces_out->insert(pieces_out->end(), second.pieces.begin(), second.pieces.end());
  }
  std::vector<CausePiece> pieces;
  std::sort(backlog_next.begin(), backlog_next.end());
  backlog_next.erase(std::unique(backlog_next.begin(), backlog_next.end()), backlog_next.end());
  out.backlog_items = backlog_next.size();
  for (uint32_t ref : backlog_next) {
    const int64_t call = finder.LaunchCall(ref);
    if (call < 0) continue;
    const TimeNs start = RefKind(ref) == ItemKind::kKernel   ? t.kernels.start[RefRow(ref)]
                         : RefKind(ref) == ItemKind::kMemcpy ? t.memcpys.start[RefRow(ref)]
                                                             : t.memsets.start[RefRow(ref)];
    out.backlog_max_lag_ns = std::max(out.backlog_max_lag_ns, start - t.api_calls.end[static_cast<size_t>(call)]);
  }
  std::sort(largest.begin(), largest.end(), Longer);
  for (const Kept& k : largest) {
    IdleInterval iv;
    iv.iteration = k.iteration;
    iv.gap.start_ns = k.start;
    iv.gap.duration_ns = k.end - k.start;
    if (k.previous != kNoItem) iv.gap.previous = ItemLabel(t, k.previous);
    if (k.next != kNoItem) {
      iv.gap.next = ItemLabel(t, k.next);
      iv.gap.next_stream = ItemStream(t, k.next);
    }
    pieces.clear();
    // Described as the finder sees it (named stages are host_stage: the cause_ns say so).
    finder.Split(k.start, k.end, k.previous, k.next, k.thread, &pieces);
    finder.Describe(k.start, k.end, k.previous, k.next, pieces, &iv.gap, k.thread);
    // The causes as attributed: a named pre/post range the finder does not see is host_stage.
    iv.gap.cause_ns = k.cause_ns;
    size_t best = static_cast<size_t>(iv.gap.cause);
    for (size_t c = 0; c < kIdleCauseCount; ++c)
      if (k.cause_ns[c] > k.cause_ns[best]) best = c;
    iv.gap.cause = static_cast<IdleCause>(best);
    out.largest.push_back(std::move(iv));
  }
  if (!its->iterations.empty()) ComputePhaseStats(its);
  return out;
}

}  // namespace tg::internal
