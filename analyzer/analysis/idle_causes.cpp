// IdleCauseFinder: every piece of GPU-idle time gets its cause from evidence in the trace
// (idle_cause.h lists the causes and the order they are tried in). An interval is split where the
// next work's launch call returns (before: the host's state decides; after: the device's side),
// and the host side again where the launching thread's state changes (host_model.h). O(pieces x
// log events) per interval after one sort of the waits.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/summary_internal.h"
#include "analyzer/host/host_model.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg::internal {

namespace {

// The most a launch takes from its call returning to the work starting on an idle device.
constexpr TimeNs kLaunchLatencyNs = 50'000;
// How far a profiler's host and device timestamps may disagree before it counts as a clock error.
constexpr TimeNs kClockToleranceNs = 1'000;

bool ContainsNoCase(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

// Host calls during which a queued operation may be held back: waits on events and streams and
// synchronisations (the device or the host waits on other work).
bool IsWaitApi(std::string_view name) {
  return ContainsNoCase(name, "Synchronize") || ContainsNoCase(name, "StreamWaitEvent") ||
         ContainsNoCase(name, "StreamWaitValue") || ContainsNoCase(name, "EventQuery");
}

IdleCause HostCause(HostState s) {
  switch (s) {
    case HostState::kCompute: return IdleCause::kHostCompute;
    case HostState::kJit: return IdleCause::kJitCompile;
    case HostState::kSync: return IdleCause::kHostSync;
    case HostState::kIdle: return IdleCause::kHostIdle;
    case HostState::kCapture: return IdleCause::kGraphCapture;
    case HostState::kLaunch: break;
  }
  return IdleCause::kHostLaunch;
}

bool IsHostSide(IdleCause c) {
  return c == IdleCause::kHostStage || c == IdleCause::kHostLaunch || IsHostWorkCause(c) ||
         c == IdleCause::kGraphCapture;
}

// Appends [s, e) with `cause`, merging it into the last piece when that one ends at s with the
// same cause and frame.
void Append(std::vector<CausePiece>* out, TimeNs s, TimeNs e, IdleCause cause, uint32_t frame) {
  if (e <= s) return;
  if (!out->empty() && out->back().end == s && out->back().cause == cause && out->back().frame == frame) {
    out->back().end = e;
    return;
  }
  out->push_back({s, e, cause, frame});
}

// (correlation id, pid) of the GPU work a ref refers to.
std::pair<int64_t, int64_t> LaunchOf(const Trace& t, uint32_t ref) {
  if (ref == kNoItem) return {kUnknownId, kUnknownId};
  const size_t row = RefRow(ref);
  switch (RefKind(ref)) {
    case ItemKind::kKernel: return {t.kernels.correlation[row], t.kernels.pid[row]};
    case ItemKind::kMemcpy: return {t.memcpys.correlation[row], t.memcpys.pid[row]};
    case ItemKind::kMemset: return {t.memsets.correlation[row], t.memsets.pid[row]};
  }
  return {kUnknownId, kUnknownId};
}

TimeNs ItemStart(const Trace& t, uint32_t ref) {
  const size_t row = RefRow(ref);
  switch (RefKind(ref)) {
    case ItemKind::kKernel: return t.kernels.start[row];
    case ItemKind::kMemcpy: return t.memcpys.start[row];
    case ItemKind::kMemset: return t.memsets.start[row];
  }
  return 0;
}

}  // namespace

IdleCauseFinder::IdleCauseFinder(const Trace& t, const ApiIndex& index, const HostStages* stages,
                                 const std::vector<KernelClass>& classes, const HostModel* host,
                                 const AnalyzeOptions& options)
    : t_(t), index_(index), stages_(stages), classes_(classes), host_(host), options_(options) {
  for (size_t i = 0; i < t.syncs.size(); ++i)
    if (t.syncs.end[i] > t.syncs.start[i]) waits_.push_back({t.syncs.start[i], t.syncs.end[i], SyncKindName(t.syncs.kind[i])});
  std::vector<int8_t> wait_name(t.strings.size(), -1);
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    int8_t& w = wait_name[a.name[i]];
    if (w < 0) w = IsWaitApi(t.Name(a.name[i])) ? 1 : 0;
    if (w && a.end[i] > a.start[i]) waits_.push_back({a.start[i], a.end[i], t.Name(a.name[i])});
  }
  std::sort(waits_.begin(), waits_.end(), [](const Wait& x, const Wait& y) {
    return x.start != y.start ? x.start < y.start : x.end < y.end;
  });
  longest_.resize(waits_.size());
  for (uint32_t i = 0; i < waits_.size(); ++i)
    longest_[i] = i > 0 && waits_[longest_[i - 1]].end >= waits_[i].end ? longest_[i - 1] : i;
}

// The kernel classes' collective test (metadata, else the name), as every other consumer.
bool IdleCauseFinder::Collective(uint32_t ref) const {
  return ref != kNoItem && RefKind(ref) == ItemKind::kKernel && classes_[RefRow(ref)] == KernelClass::kCommunication;
}

const std::string_view* IdleCauseFinder::WaitDuring(TimeNs s, TimeNs e) const {
  // Of the waits that start before e, the one that ends last overlaps [s, e) when it ends after s.
  const size_t n = static_cast<size_t>(
      std::partition_point(waits_.begin(), waits_.end(), [e](const Wait& w) { return w.start < e; }) - waits_.begin());
  if (n == 0) return nullptr;
  const Wait& w = waits_[longest_[n - 1]];
  return w.end > s ? &w.name : nullptr;
}

int64_t IdleCauseFinder::LaunchCall(uint32_t ref) const {
  const auto [corr, pid] = LaunchOf(t_, ref);
  return index_.Find(corr, pid);
}

IdleCause IdleCauseFinder::QueuedCause(TimeNs s, TimeNs e, uint32_t previous, uint32_t next, int64_t call) const {
  if (Collective(previous) || Collective(next)) return IdleCause::kCommunication;
  // Both sides of the gap from one launch call (a CUDA graph's nodes share its correlation id): the
  // launch returned before the gap, so the GPU waited on a dependency inside the graph.
  if (previous != kNoItem && next != kNoItem && call >= 0 && LaunchOf(t_, previous) == LaunchOf(t_, next))
    return IdleCause::kDependencySync;
  if (WaitDuring(s, e)) return IdleCause::kDependencySync;
  if (next == kNoItem || call < 0) return IdleCause::kHostLaunch;
  const TimeNs lag = ItemStart(t_, next) - t_.api_calls.end[static_cast<size_t>(call)];
  if (lag >= options_.backlog_ns) return IdleCause::kDeviceBacklog;
  // A launch's own latency; a longer wait with nothing recorded to explain it is not known.
  return lag <= kLaunchLatencyNs ? IdleCause::kHostLaunch : IdleCause::kUnknown;
}

void IdleCauseFinder::Split(TimeNs s, TimeNs e, uint32_t previous, uint32_t next, int32_t thread,
                            std::vector<CausePiece>* out) const {
  if (e <= s) return;
  const int64_t call = next != kNoItem ? LaunchCall(next) : -1;
  // The host side: until next's launch call returned (all of it without next work).
  TimeNs host_until = s;
  int32_t read = HostModel::kNoThread;
  int64_t pid = kUnknownId;
  if (call >= 0) {
    host_until = std::clamp(t_.api_calls.end[static_cast<size_t>(call)], s, e);
    pid = t_.api_calls.pid[static_cast<size_t>(call)];
    if (host_) read = host_->ThreadOfCall(static_cast<size_t>(call));
  } else if (next == kNoItem || !(Collective(previous) || Collective(next))) {
    // No launch call for next (or no next): read the thread that launched previous, else `thread`.
    const int64_t prev_call = previous != kNoItem ? LaunchCall(previous) : -1;
    if (host_ && prev_call >= 0) read = host_->ThreadOfCall(static_cast<size_t>(prev_call));
    if (read == HostModel::kNoThread) read = thread;
    if (host_ && read != HostModel::kNoThread) {
      host_until = e;
      pid = host_->Pid(read);
    } else {
      Append(out, s, e, IdleCause::kUnknown, HostModel::kNoEvent);
      return;
    }
  }
  if (host_until > s) {
    auto staged = [&](TimeNs a, TimeNs b, IdleCause c) {
      if (stages_ && (c == IdleCause::kHostLaunch || c == IdleCause::kHostCompute || c == IdleCause::kHostIdle) &&
          stages_->During(pid, a, b))
        return IdleCause::kHostStage;
      return c;
    };
    if (host_ && read != HostModel::kNoThread) {
      host_->Split(
          read, s, host_until,
          [&](const HostPiece& p) { Append(out, p.start, p.end, staged(p.start, p.end, HostCause(p.state)), p.frame); },
          &hint_);
    } else {
      Append(out, s, host_until, staged(s, host_until, IdleCause::kHostLaunch), HostModel::kNoEvent);
    }
  }
  if (host_until < e) {
    if (call < 0 && next != kNoItem && !(Collective(previous) || Collective(next)))
      Append(out, host_until, e, IdleCause::kUnknown, HostModel::kNoEvent);
    else Append(out, host_until, e, QueuedCause(host_until, e, previous, next, call), HostModel::kNoEvent);
  }
}

void IdleCauseFinder::Describe(TimeNs s, TimeNs e, uint32_t previous, uint32_t next,
                               const std::vector<CausePiece>& pieces, IdleGap* gap, int32_t fallback) const {
  gap->cause_ns.fill(0);
  std::array<TimeNs, kIdleCauseCount> largest_piece{};
  std::array<uint32_t, kIdleCauseCount> frame{};
  frame.fill(HostModel::kNoEvent);
  for (const CausePiece& p : pieces) {
    const size_t c = static_cast<size_t>(p.cause);
    gap->cause_ns[c] += p.end - p.start;
    if (p.end - p.start > largest_piece[c] && p.frame != HostModel::kNoEvent) {
      largest_piece[c] = p.end - p.start;
      frame[c] = p.frame;
    }
  }
  size_t best = static_cast<size_t>(IdleCause::kUnknown);
  for (size_t c = 0; c < kIdleCauseCount; ++c)
    if (gap->cause_ns[c] > gap->cause_ns[best] || (gap->cause_ns[c] == gap->cause_ns[best] && c < best)) best = c;
  const IdleCause cause = static_cast<IdleCause>(best);
  gap->cause = cause;
  const int64_t call = next != kNoItem ? LaunchCall(next) : -1;
  const size_t row = static_cast<size_t>(call);
  int32_t thread = HostModel::kNoThread;
  if (host_) {
    if (call >= 0) thread = host_->ThreadOfCall(row);
    else if (const int64_t prev_call = previous != kNoItem ? LaunchCall(previous) : -1; prev_call >= 0)
      thread = host_->ThreadOfCall(static_cast<size_t>(prev_call));
    if (thread == HostModel::kNoThread) thread = fallback;
  }
  // The thread whose state decided the host pieces, whichever cause dominates (a gap that is
  // mostly backlog may begin with host time).
  if (host_ && thread != HostModel::kNoThread &&
      std::any_of(pieces.begin(), pieces.end(), [](const CausePiece& p) { return IsHostSide(p.cause); }))
    gap->host_tid = host_->Tid(thread);
  if (IsHostSide(cause)) {
    if (call >= 0 && t_.api_calls.end[row] >= s) {
      gap->call = t_.Name(t_.api_calls.name[row]);
      gap->call_returned_ns = t_.api_calls.end[row] - s;
    }
    if (cause == IdleCause::kHostStage && stages_) {
      const int64_t pid = call >= 0                        ? t_.api_calls.pid[row]
                          : thread != HostModel::kNoThread ? host_->Pid(thread)
                                                           : kUnknownId;
      if (const auto stage = stages_->During(pid, s, e)) gap->stage = t_.Name(*stage);
    }
    if (host_ && frame[best] != HostModel::kNoEvent) gap->frame = host_->ShortName(frame[best]);
    if (host_ && thread != HostModel::kNoThread) {
      // The frames that decided the host pieces, largest piece time first.
      std::vector<std::pair<TimeNs, uint32_t>> by_frame;
      for (const CausePiece& p : pieces) {
        if (p.frame == HostModel::kNoEvent || !IsHostSide(p.cause)) continue;
        auto it = std::find_if(by_frame.begin(), by_frame.end(), [&](const auto& x) { return x.second == p.frame; });
        if (it == by_frame.end()) by_frame.emplace_back(p.end - p.start, p.frame);
        else it->first += p.end - p.start;
      }
      std::sort(by_frame.begin(), by_frame.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      // Frames that decided at least a twentieth of the interval (always the largest).
      std::vector<std::pair<uint32_t, TimeNs>> anchors;
      for (size_t k = 0; k < by_frame.size() && k < options_.host_frames; ++k)
        if (k == 0 || by_frame[k].first >= (e - s) / 20) anchors.emplace_back(by_frame[k].second, by_frame[k].first);
      for (HostFrame& f : host_->Frames(thread, s, e, options_.host_frames, anchors))
        gap->host_frames.push_back({std::move(f.path), std::move(f.name), f.overlap_ns});
    }
  }
  switch (cause) {
    case IdleCause::kCommunication: gap->collective = ItemLabel(t_, Collective(next) ? next : previous); break;
    case IdleCause::kDependencySync:
      if (call >= 0 && previous != kNoItem && LaunchOf(t_, previous) == LaunchOf(t_, next)) {
        gap->same_launch = std::string(t_.Name(t_.api_calls.name[row]));
      } else {
        // The wait in progress during the dependency's piece.
        for (const CausePiece& p : pieces)
          if (p.cause == IdleCause::kDependencySync)
            if (const std::string_view* w = WaitDuring(p.start, p.end)) {
              gap->call = *w;
              break;
            }
      }
      break;
    case IdleCause::kDeviceBacklog:
      if (call >= 0) {
        gap->call = t_.Name(t_.api_calls.name[row]);
        gap->lag_ns = ItemStart(t_, next) - t_.api_calls.end[row];
      }
      break;
    default: break;
  }
}

IdleCause IdleCauseFinder::Decide(const GapItem& g, IdleGap* gap) const {
  scratch_.clear();
  Split(g.start, g.end, g.previous, g.next, HostModel::kNoThread, &scratch_);
  if (gap) {
    Describe(g.start, g.end, g.previous, g.next, scratch_, gap);
    return gap->cause;
  }
  std::array<TimeNs, kIdleCauseCount> ns{};
  for (const CausePiece& p : scratch_) ns[static_cast<size_t>(p.cause)] += p.end - p.start;
  size_t best = static_cast<size_t>(IdleCause::kUnknown);
  for (size_t c = 0; c < kIdleCauseCount; ++c)
    if (ns[c] > ns[best] || (ns[c] == ns[best] && c < best)) best = c;
  return static_cast<IdleCause>(best);
}

namespace {

// The longest gaps kept per cause, as the report's IdleGaps (sorted, causes decided).
void DescribeLargest(const Trace& t, const IdleCauseFinder& f, std::array<std::vector<GapItem>, kIdleCauseCount>& kept,
                     IdleCauses& out) {
  for (size_t c = 0; c < kIdleCauseCount; ++c) {
    std::sort(kept[c].begin(), kept[c].end(), LargerGap);
    for (const GapItem& g : kept[c]) {
      IdleGap gap = DescribeGap(t, g);
      f.Decide(g, &gap);
      out.largest[c].push_back(std::move(gap));
    }
  }
}

}  // namespace

void IdleCauseFinder::GapTotals::Join(const GapTotals& o, size_t largest_cap) {
  for (size_t c = 0; c < kIdleCauseCount; ++c) {
    gaps[c] += o.gaps[c];
    in_gaps[c] += o.in_gaps[c];
    ns[c] += o.ns[c];
    in_ns[c] += o.in_ns[c];
    for (const GapItem& g : o.largest[c]) KeepLargest(largest[c], kLargestGapsPerCause, g);
    for (const GapItem& g : o.in_largest[c]) KeepLargest(in_largest[c], kLargestGapsPerCause, g);
  }
  in_iterations_ns += o.in_iterations_ns;
  for (const GapItem& g : o.in_overall) KeepLargest(in_overall, largest_cap, g);
  if (stream_ns.size() < o.stream_ns.size()) stream_ns.resize(o.stream_ns.size());
  for (size_t k = 0; k < o.stream_ns.size(); ++k)
    for (size_t c = 0; c < kIdleCauseCount; ++c) stream_ns[k][c] += o.stream_ns[k][c];
}

void IdleCauseFinder::AttributeRun(const GapSweep& gaps, const StreamSummary* streams, size_t stream_count,
                                   const std::vector<std::pair<TimeNs, TimeNs>>* spans, size_t largest_cap,
                                   GapTotals& out) const {
  out.stream_ns.resize(stream_count);
  size_t span = 0;  // the first span that ends after the current gap's start (gaps come in time order)
  bool span_found = false;
  std::vector<CausePiece> pieces;
  // The gap's time per cause, summed over its pieces (a gap has one to a few): only the causes
  // of its pieces are read, and set back to zero after it.
  std::array<TimeNs, kIdleCauseCount> ns{};
  gaps([&](const GapItem& g) {
    pieces.clear();
    Split(g.start, g.end, g.previous, g.next, HostModel::kNoThread, &pieces);
    for (const CausePiece& p : pieces) {
      const size_t c = static_cast<size_t>(p.cause);
      ns[c] += p.end - p.start;
      out.ns[c] += p.end - p.start;
    }
    // The cause with the most time (ties: the first in IdleCause's order). The gap is not empty
    // and its pieces cover it, so that cause is one of theirs.
    size_t best = kIdleCauseCount;
    for (const CausePiece& p : pieces) {
      const size_t c = static_cast<size_t>(p.cause);
      if (best == kIdleCauseCount || ns[c] > ns[best] || (ns[c] == ns[best] && c < best)) best = c;
    }
    if (best == kIdleCauseCount) best = 0;  // no piece (an empty gap): every cause ties at zero
    out.gaps[best]++;
    KeepLargest(out.largest[best], kLargestGapsPerCause, g);
    if (spans) {
      if (!span_found) {  // a run may begin anywhere in the device's gaps
        span = static_cast<size_t>(
            std::partition_point(spans->begin(), spans->end(),
                                 [&](const std::pair<TimeNs, TimeNs>& x) { return x.second <= g.start; }) -
            spans->begin());
        span_found = true;
      }
      while (span < spans->size() && (*spans)[span].second <= g.start) ++span;
      TimeNs inside = 0;
      for (size_t k = span; k < spans->size() && (*spans)[k].first < g.end; ++k) {
        const TimeNs a = std::max(g.start, (*spans)[k].first), b = std::min(g.end, (*spans)[k].second);
        if (b <= a) continue;
        inside += b - a;
        // Each piece's part inside the span, to its cause.
        for (const CausePiece& p : pieces) {
          const TimeNs pa = std::max(a, p.start), pb = std::min(b, p.end);
          if (pb > pa) out.in_ns[static_cast<size_t>(p.cause)] += pb - pa;
        }
      }
      if (inside > 0) {
        out.in_gaps[best]++;
        out.in_iterations_ns += inside;
        if (inside == g.end - g.start) {  // wholly inside one span: spans are disjoint and leave no gap inside
          KeepLargest(out.in_largest[best], kLargestGapsPerCause, g);
          KeepLargest(out.in_overall, largest_cap, g);
        }
      }
    }
    // The device's streams are sorted by stream id, and the next work ran on one of them.
    const int64_t stream = ItemStream(t_, g.next);
    const StreamSummary* st = std::partition_point(streams, streams + stream_count,
                                                   [stream](const StreamSummary& x) { return x.stream < stream; });
    std::array<TimeNs, kIdleCauseCount>* before = st != streams + stream_count && st->stream == stream
                                                      ? &out.stream_ns[static_cast<size_t>(st - streams)]
                                                      : nullptr;
    for (const CausePiece& p : pieces) {
      const size_t c = static_cast<size_t>(p.cause);
      if (before) (*before)[c] += p.end - p.start;
      ns[c] = 0;
    }
  });
}

void IdleCauseFinder::FinishAttribution(const GapTotals& totals, DeviceSummary& d, StreamSummary* streams,
                                        size_t stream_count,
                                        const std::vector<std::pair<TimeNs, TimeNs>>* spans) const {
  IdleCauses& out = d.idle_causes;
  out.attributed = true;
  out.gaps = totals.gaps;
  out.ns = totals.ns;
  for (size_t i = 0; i < stream_count; ++i) {
    streams[i].idle_attributed = true;
    if (i < totals.stream_ns.size())
      for (size_t c = 0; c < kIdleCauseCount; ++c) streams[i].idle_before_ns[c] += totals.stream_ns[i][c];
  }
  d.has_in_iterations = spans != nullptr;
  d.in_iterations.attributed = spans != nullptr;
  std::array<std::vector<GapItem>, kIdleCauseCount> largest = totals.largest;
  DescribeLargest(t_, *this, largest, out);
  if (!spans) return;
  d.in_iterations.gaps = totals.in_gaps;
  d.in_iterations.ns = totals.in_ns;
  d.in_iterations_ns = totals.in_iterations_ns;
  std::array<std::vector<GapItem>, kIdleCauseCount> in_largest = totals.in_largest;
  DescribeLargest(t_, *this, in_largest, d.in_iterations);
  std::vector<GapItem> in_overall = totals.in_overall;
  std::sort(in_overall.begin(), in_overall.end(), LargerGap);
  for (const GapItem& g : in_overall) {
    d.in_iterations_largest.push_back(DescribeGap(t_, g));
    Decide(g, &d.in_iterations_largest.back());
  }
}

std::vector<uint8_t> LaunchedCalls(const Trace& t, const ApiIndex& index, uint64_t* before_launch) {
  std::vector<uint8_t> out(t.api_calls.size(), 0);
  uint64_t before = 0;
  auto mark = [&](const auto& table) {
    for (size_t i = 0; i < table.size(); ++i)
      if (const int64_t call = index.Find(table.correlation[i], table.pid[i]); call >= 0) {
        out[static_cast<size_t>(call)] = 1;
        // More than a microsecond early: the CPU and GPU clocks of a profiler agree to about that.
        before += table.start[i] < t.api_calls.start[static_cast<size_t>(call)] - kClockToleranceNs;
      }
  };
  mark(t.kernels);
  mark(t.memcpys);
  mark(t.memsets);
  if (before_launch) *before_launch = before;
  return out;
}

}  // namespace tg::internal
