// IdleCauseFinder: the cause of every device gap, from evidence in the trace (summary.h lists the
// causes and the order they are tried in) and the evidence that decided it. O(gaps x log(waits +
// stages + streams)) after one sort of the waits.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/summary_internal.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg::internal {

namespace {

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

}  // namespace

IdleCauseFinder::IdleCauseFinder(const Trace& t, const ApiIndex& index, const HostStages* stages,
                                 const std::vector<KernelClass>& classes)
    : t_(t), index_(index), stages_(stages), classes_(classes) {
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
  return RefKind(ref) == ItemKind::kKernel && classes_[RefRow(ref)] == KernelClass::kCommunication;
}

const std::string_view* IdleCauseFinder::WaitDuring(TimeNs s, TimeNs e) const {
  // Of the waits that start before e, the one that ends last overlaps [s, e) when it ends after s.
  const size_t n = static_cast<size_t>(
      std::partition_point(waits_.begin(), waits_.end(), [e](const Wait& w) { return w.start < e; }) - waits_.begin());
  if (n == 0) return nullptr;
  const Wait& w = waits_[longest_[n - 1]];
  return w.end > s ? &w.name : nullptr;
}

namespace {

// (correlation id, pid) of the GPU work a gap item refers to.
std::pair<int64_t, int64_t> LaunchOf(const Trace& t, uint32_t ref) {
  const size_t row = RefRow(ref);
  switch (RefKind(ref)) {
    case ItemKind::kKernel: return {t.kernels.correlation[row], t.kernels.pid[row]};
    case ItemKind::kMemcpy: return {t.memcpys.correlation[row], t.memcpys.pid[row]};
    case ItemKind::kMemset: return {t.memsets.correlation[row], t.memsets.pid[row]};
  }
  return {kUnknownId, kUnknownId};
}

}  // namespace

IdleCause IdleCauseFinder::Decide(const GapItem& g, IdleGap* gap) const {
  IdleCause cause = IdleCause::kUnknown;
  const auto [corr, pid] = LaunchOf(t_, g.next);
  const int64_t found = index_.Find(corr, pid);
  const size_t call = static_cast<size_t>(found);
  const std::string_view* wait = nullptr;
  bool same_launch = false;
  std::optional<StringId> stage;
  if (found >= 0 && t_.api_calls.end[call] >= g.start) {
    if (stages_) stage = stages_->During(t_.api_calls.pid[call], g.start, g.end);
    cause = stage ? IdleCause::kHostStage : IdleCause::kHostLaunch;
  } else if (Collective(g.previous) || Collective(g.next)) {
    cause = IdleCause::kCommunication;
  } else if (found >= 0 && LaunchOf(t_, g.previous) == std::pair{corr, pid}) {
    // Both sides of the gap come from one launch call (a CUDA graph's nodes share its
    // correlation id): the launch returned before the gap, so the GPU waited on a dependency
    // inside the graph (an earlier node, an event or external-semaphore node), not on the host.
    cause = IdleCause::kDependencySync;
    same_launch = true;
  } else if (found >= 0 && (wait = WaitDuring(g.start, g.end))) {
    cause = IdleCause::kDependencySync;
  }
  if (!gap) return cause;
  gap->cause = cause;
  switch (cause) {
    case IdleCause::kHostStage:
      gap->stage = t_.Name(*stage);
      [[fallthrough]];
    case IdleCause::kHostLaunch:
      gap->call = t_.Name(t_.api_calls.name[call]);
      gap->call_returned_ns = t_.api_calls.end[call] - g.start;
      break;
    case IdleCause::kCommunication: gap->collective = ItemLabel(t_, Collective(g.next) ? g.next : g.previous); break;
    case IdleCause::kDependencySync:
      if (same_launch) gap->same_launch = std::string(t_.Name(t_.api_calls.name[call]));
      else gap->call = *wait;
      break;
    default: break;
  }
  return cause;
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

void IdleCauseFinder::Attribute(const std::vector<GapItem>& gaps, DeviceSummary& d, StreamSummary* streams,
                                size_t stream_count, const std::vector<std::pair<TimeNs, TimeNs>>* spans,
                                size_t largest_cap) const {
  IdleCauses& out = d.idle_causes;
  out.attributed = true;
  for (size_t i = 0; i < stream_count; ++i) streams[i].idle_attributed = true;
  std::array<std::vector<GapItem>, kIdleCauseCount> largest, in_largest;
  std::vector<GapItem> in_overall;
  d.has_in_iterations = spans != nullptr;
  d.in_iterations.attributed = spans != nullptr;
  size_t span = 0;  // the first span that ends after the current gap's start (gaps come in time order)
  for (const GapItem& g : gaps) {
    const size_t c = static_cast<size_t>(Decide(g, nullptr));
    out.gaps[c]++;
    out.ns[c] += g.end - g.start;
    KeepLargest(largest[c], kLargestGapsPerCause, g);
    if (spans) {
      while (span < spans->size() && (*spans)[span].second <= g.start) ++span;
      TimeNs inside = 0;
      for (size_t k = span; k < spans->size() && (*spans)[k].first < g.end; ++k)
        inside += std::min(g.end, (*spans)[k].second) - std::max(g.start, (*spans)[k].first);
      if (inside > 0) {
        d.in_iterations.gaps[c]++;
        d.in_iterations.ns[c] += inside;
        d.in_iterations_ns += inside;
        if (inside == g.end - g.start) {  // wholly inside one span: spans are disjoint and leave no gap inside
          KeepLargest(in_largest[c], kLargestGapsPerCause, g);
          KeepLargest(in_overall, largest_cap, g);
        }
      }
    }
    // The device's streams are sorted by stream id, and the next work ran on one of them.
    const int64_t stream = ItemStream(t_, g.next);
    StreamSummary* st = std::partition_point(streams, streams + stream_count,
                                             [stream](const StreamSummary& x) { return x.stream < stream; });
    if (st != streams + stream_count && st->stream == stream) st->idle_before_ns[c] += g.end - g.start;
  }
  DescribeLargest(t_, *this, largest, out);
  if (!spans) return;
  DescribeLargest(t_, *this, in_largest, d.in_iterations);
  std::sort(in_overall.begin(), in_overall.end(), LargerGap);
  for (const GapItem& g : in_overall) {
    d.in_iterations_largest.push_back(DescribeGap(t_, g));
    Decide(g, &d.in_iterations_largest.back());
  }
}

}  // namespace tg::internal
