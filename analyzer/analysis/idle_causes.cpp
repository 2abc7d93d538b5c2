// IdleCauseFinder: the cause of every device gap, from evidence in the trace (summary.h lists the
// causes and the order they are tried in). O(gaps x log(waits)) after one sort of the waits.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/summary_internal.h"

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

IdleCauseFinder::IdleCauseFinder(const Trace& t, const ApiIndex& index)
    : t_(t), index_(index), collective_name_(t.strings.size(), 2) {
  std::vector<std::pair<TimeNs, TimeNs>> v;
  for (size_t i = 0; i < t.syncs.size(); ++i)
    if (t.syncs.end[i] > t.syncs.start[i]) v.emplace_back(t.syncs.start[i], t.syncs.end[i]);
  std::vector<int8_t> wait_name(t.strings.size(), -1);
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    int8_t& w = wait_name[a.name[i]];
    if (w < 0) w = IsWaitApi(t.Name(a.name[i])) ? 1 : 0;
    if (w && a.end[i] > a.start[i]) v.emplace_back(a.start[i], a.end[i]);
  }
  std::sort(v.begin(), v.end());
  for (const auto& [s, e] : v) {
    if (!waits_.empty() && s <= waits_.back().second) waits_.back().second = std::max(waits_.back().second, e);
    else waits_.emplace_back(s, e);
  }
}

bool IdleCauseFinder::Collective(uint32_t ref) const {
  if (RefKind(ref) != ItemKind::kKernel) return false;
  const StringId id = t_.kernels.name[RefRow(ref)];
  uint8_t& c = collective_name_[id];
  if (c == 2) {
    std::string_view n = t_.Name(id);
    c = ContainsNoCase(n, "nccl") || ContainsNoCase(n, "rccl") ? 1 : 0;
  }
  return c == 1;
}

bool IdleCauseFinder::WaitDuring(TimeNs s, TimeNs e) const {
  // The first wait that ends after s; it overlaps [s, e) when it starts before e.
  auto it = std::partition_point(waits_.begin(), waits_.end(), [s](const auto& w) { return w.second <= s; });
  return it != waits_.end() && it->first < e;
}

void IdleCauseFinder::Attribute(const std::vector<GapItem>& gaps, DeviceSummary& d) const {
  IdleCauses& out = d.idle_causes;
  out.attributed = true;
  for (const GapItem& g : gaps) {
    IdleCause cause = IdleCause::kUnknown;
    const size_t row = RefRow(g.after);
    int64_t corr = kUnknownId, pid = kUnknownId;
    switch (RefKind(g.after)) {
      case ItemKind::kKernel: corr = t_.kernels.correlation[row], pid = t_.kernels.pid[row]; break;
      case ItemKind::kMemcpy: corr = t_.memcpys.correlation[row], pid = t_.memcpys.pid[row]; break;
      case ItemKind::kMemset: corr = t_.memsets.correlation[row], pid = t_.memsets.pid[row]; break;
    }
    const int64_t call = index_.Find(corr, pid);
    if (call >= 0 && t_.api_calls.end[static_cast<size_t>(call)] >= g.start) {
      cause = IdleCause::kHostLaunch;
    } else if (Collective(g.before) || Collective(g.after)) {
      cause = IdleCause::kCommunication;
    } else if (call >= 0 && WaitDuring(g.start, g.end)) {
      cause = IdleCause::kDependencySync;
    }
    out.gaps[static_cast<size_t>(cause)]++;
    out.ns[static_cast<size_t>(cause)] += g.end - g.start;
  }
}

}  // namespace tg::internal
