// TimelineJson: the report's "timeline" section. Items are the kernels, memcpys and memsets that
// the iteration analysis assigned to the chosen iteration, one lane per (device, stream).
#include "reports/report/timeline_json.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/stats.h"

namespace tg {

namespace {

using nlohmann::json;

enum class Kind : uint8_t { kKernel, kMemcpy, kMemset };
constexpr const char* kKindNames[] = {"kernel", "memcpy", "memset"};

struct Item {
  TimeNs start, end;
  Kind kind;
  size_t row;
};

using LaneKey = std::pair<int32_t, int64_t>;  // (device, stream): std::map orders lanes

json IdOrNull(int64_t id) { return id == kUnknownId ? json(nullptr) : json(id); }

// The position (in analysis.iterations) of the kept iteration whose latency is the nearest-rank
// median; the first such iteration when several have that latency.
size_t MedianIteration(const IterationAnalysis& it) {
  std::vector<double> ms;
  ms.reserve(it.iterations.size());
  for (const Iteration& i : it.iterations) ms.push_back(NsToMs(i.latency_ns()));
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = NearestRank(sorted, 50);
  return static_cast<size_t>(std::find(ms.begin(), ms.end(), median) - ms.begin());
}

// Every GPU item of iteration `pos`, grouped by lane.
std::map<LaneKey, std::vector<Item>> CollectLanes(const Trace& t, const IterationAnalysis& it, size_t pos) {
  std::map<LaneKey, std::vector<Item>> lanes;
  auto add = [&](Kind kind, const std::vector<int32_t>& owner, const std::vector<TimeNs>& start,
                 const std::vector<TimeNs>& end, const std::vector<int32_t>& device,
                 const std::vector<int64_t>& stream) {
    for (size_t r = 0; r < owner.size(); ++r)
      if (owner[r] >= 0 && static_cast<size_t>(owner[r]) == pos)
        lanes[{device[r], stream[r]}].push_back(Item{start[r], std::max(start[r], end[r]), kind, r});
  };
  add(Kind::kKernel, it.kernel_iteration, t.kernels.start, t.kernels.end, t.kernels.device, t.kernels.stream);
  add(Kind::kMemcpy, it.memcpy_iteration, t.memcpys.start, t.memcpys.end, t.memcpys.device, t.memcpys.stream);
  add(Kind::kMemset, it.memset_iteration, t.memsets.start, t.memsets.end, t.memsets.device, t.memsets.stream);
  return lanes;
}

// Longest first; among equal durations the earlier, then table order (a total order, so the
// items kept under the cap do not depend on the sort algorithm).
bool Longer(const Item& a, const Item& b) {
  TimeNs da = a.end - a.start, db = b.end - b.start;
  if (da != db) return da > db;
  if (a.start != b.start) return a.start < b.start;
  return a.kind != b.kind ? a.kind < b.kind : a.row < b.row;
}

// Marks the `cap` longest items over all lanes as kept; returns the keep flags per lane.
std::map<LaneKey, std::vector<bool>> KeepLongest(const std::map<LaneKey, std::vector<Item>>& lanes, size_t cap) {
  std::vector<std::pair<Item, std::pair<LaneKey, size_t>>> all;
  std::map<LaneKey, std::vector<bool>> keep;
  for (const auto& [key, items] : lanes) {
    keep[key].assign(items.size(), false);
    for (size_t i = 0; i < items.size(); ++i) all.push_back({items[i], {key, i}});
  }
  auto longer = [](const auto& a, const auto& b) { return Longer(a.first, b.first); };
  if (all.size() > cap) std::nth_element(all.begin(), all.begin() + static_cast<ptrdiff_t>(cap), all.end(), longer);
  for (size_t i = 0; i < std::min(cap, all.size()); ++i) keep[all[i].second.first][all[i].second.second] = true;
  return keep;
}

class Namer {
 public:
  explicit Namer(const Trace& t) : t_(t) {}
  const std::string& Name(const Item& item) {
    switch (item.kind) {
      case Kind::kKernel: {
        StringId id = t_.kernels.name[item.row];
        auto [it, inserted] = kernels_.try_emplace(id);
        if (inserted) it->second = ShortKernelName(Demangle(t_.Name(id)));
        return it->second;
      }
      case Kind::kMemcpy: {
        auto [it, inserted] = copies_.try_emplace(t_.memcpys.kind[item.row]);
        if (inserted) it->second = "Memcpy " + std::string(CopyKindName(it->first));
        return it->second;
      }
      case Kind::kMemset: break;
    }
    return memset_;
  }

 private:
  const Trace& t_;
  std::unordered_map<StringId, std::string> kernels_;
  std::map<CopyKind, std::string> copies_;
  std::string memset_ = "Memset";
};

}  // namespace

json TimelineJson(const Trace& trace, const Analysis& analysis, size_t item_cap) {
  const IterationAnalysis& it = analysis.iterations;
  const std::vector<KernelClass>& classes = analysis.kernel_classes;
  json doc = {{"item_cap", item_cap}, {"columns", {"start_offset_ns", "duration_ns", "kind", "name"}}};
  if (it.iterations.empty()) {
    doc["iteration"] = nullptr;
    doc["iteration_reason"] = "no iterations";
    doc["items_total"] = 0;
    doc["items_dropped"] = 0;
    doc["lanes"] = json::array();
    return doc;
  }
  const size_t pos = MedianIteration(it);
  const Iteration& iter = it.iterations[pos];
  doc["iteration"] = iter.index;
  doc["selection"] = "median latency (nearest rank) of " + std::to_string(it.iterations.size()) +
                     " kept iteration(s)";
  doc["name"] = iter.name;
  doc["start_ns"] = iter.start;
  doc["end_ns"] = iter.end;
  doc["duration_ns"] = iter.latency_ns();
  doc["latency_ms"] = NsToMs(iter.latency_ns());
  doc["marker_start_offset_ns"] = it.from_markers ? json(iter.marker_start - iter.start) : json(nullptr);
  doc["marker_end_offset_ns"] = it.from_markers ? json(iter.marker_end - iter.start) : json(nullptr);
  json phases = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) phases[kPhaseNames[p]] = NsToMs(iter.phase_ns[p]);
  doc["phases_ms"] = std::move(phases);

  std::map<LaneKey, std::vector<Item>> lanes = CollectLanes(trace, it, pos);
  std::map<LaneKey, std::vector<bool>> keep = KeepLongest(lanes, item_cap);
  Namer namer(trace);
  json lanes_json = json::array();
  size_t total = 0, dropped = 0;
  for (auto& lane : lanes) {
    const auto& key = lane.first;
    auto& items = lane.second;  // a plain reference: clang 14 cannot capture structured bindings
    std::vector<bool>& kept = keep[key];
    std::vector<Interval> spans;
    std::vector<size_t> order;
    for (size_t i = 0; i < items.size(); ++i) {
      // Clipped: work that began before the span (no launch call matched it) counts from its start.
      spans.emplace_back(std::max(items[i].start, iter.start), items[i].end);
      if (kept[i]) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return items[a].start != items[b].start ? items[a].start < items[b].start : Longer(items[a], items[b]);
    });
    json rows = json::array();
    for (size_t i : order) {
      const Item& item = items[i];
      // Collectives (the kernel classes' one test) get their own kind, so the timeline colours them.
      const bool collective = item.kind == Kind::kKernel && item.row < classes.size() &&
                              classes[item.row] == KernelClass::kCommunication;
      rows.push_back({item.start - iter.start, item.end - item.start,
                      collective ? "collective" : kKindNames[static_cast<size_t>(item.kind)], namer.Name(item)});
    }
    TimeNs busy = UnionLength(spans);
    total += items.size();
    dropped += items.size() - order.size();
    lanes_json.push_back({{"device", IdOrNull(key.first)},
                          {"stream", IdOrNull(key.second)},
                          {"busy_ns", busy},
                          {"idle_ns", iter.latency_ns() - busy},
                          {"items_total", items.size()},
                          {"items_dropped", items.size() - order.size()},
                          {"items", std::move(rows)}});
  }
  doc["items_total"] = total;
  doc["items_dropped"] = dropped;
  doc["lanes"] = std::move(lanes_json);
  return doc;
}

}  // namespace tg
