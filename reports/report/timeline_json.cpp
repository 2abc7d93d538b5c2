// TimelineJson: the report's "timeline" section. Items are the kernels, memcpys and memsets that
// the iteration analysis assigned to the chosen iteration, one lane per (device, stream); the
// device-idle intervals of its span; its host calls and CPU ranges; an overview of the whole
// trace (busy time per device in equal bins, the kept iterations' spans).
#include "reports/report/timeline_json.h"
#include "analyzer/util/keep_largest.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"
#include "analyzer/util/sort_runs.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/stats.h"

namespace tg::internal {

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

// Every GPU item of iteration `pos`, grouped by lane.
// Each lane's vector is sized by a first counting pass: a trace that is one long iteration (no
// step markers) puts all of its GPU work here, and growing the vectors by doubling would hold up
// to twice that at once.
std::map<LaneKey, std::vector<Item>> CollectLanes(const Trace& t, const IterationAnalysis& it, size_t pos) {
  std::map<LaneKey, std::vector<Item>> lanes;
  for (int pass = 0; pass < 2; ++pass) {
    std::map<LaneKey, size_t> counts;
    auto add = [&](Kind kind, const std::vector<int32_t>& owner, const std::vector<TimeNs>& start,
                   const std::vector<TimeNs>& end, const CodedColumn<int32_t>& device,
                   const CodedColumn<int64_t>& stream) {
      auto last = lanes.end();
      auto last_count = counts.end();
      for (size_t r = 0; r < owner.size(); ++r) {
        if (owner[r] < 0 || static_cast<size_t>(owner[r]) != pos) continue;
        const LaneKey key{device[r], stream[r]};
        if (pass == 0) {
          if (last_count == counts.end() || last_count->first != key) last_count = counts.try_emplace(key, 0).first;
          last_count->second++;
        } else {
          if (last == lanes.end() || last->first != key) last = lanes.find(key);
          last->second.push_back(Item{start[r], std::max(start[r], end[r]), kind, r});
        }
      }
    };
    add(Kind::kKernel, it.kernel_iteration, t.kernels.start, t.kernels.end, t.kernels.device, t.kernels.stream);
    add(Kind::kMemcpy, it.memcpy_iteration, t.memcpys.start, t.memcpys.end, t.memcpys.device, t.memcpys.stream);
    add(Kind::kMemset, it.memset_iteration, t.memsets.start, t.memsets.end, t.memsets.device, t.memsets.stream);
    if (pass == 0)
      for (const auto& [key, n] : counts) lanes[key].reserve(n);
  }
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
// A heap of at most `cap` entries (its front the shortest kept), not a copy of every item.
std::map<LaneKey, std::vector<bool>> KeepLongest(const std::map<LaneKey, std::vector<Item>>& lanes, size_t cap) {
  struct Entry {
    const Item* item;
    std::vector<bool>* keep;
    size_t index;
  };
  std::map<LaneKey, std::vector<bool>> keep;
  std::vector<Entry> heap;
  auto longer = [](const Entry& a, const Entry& b) { return Longer(*a.item, *b.item); };
  for (const auto& [key, items] : lanes) {
    std::vector<bool>& flags = keep[key];
    flags.assign(items.size(), false);
    for (size_t i = 0; i < items.size() && cap > 0; ++i) {
      KeepLargest(heap, cap, Entry{&items[i], &flags, i}, longer);
    }
  }
  for (const Entry& e : heap) (*e.keep)[e.index] = true;
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


// The device-idle intervals of the span [from, to): the complement of the union of every item of
// the device (listed or not), one list per device that has work in the span.
std::map<int32_t, std::vector<Interval>> DeviceGaps(const std::map<LaneKey, std::vector<Item>>& lanes, TimeNs from,
                                                    TimeNs to) {
  std::map<int32_t, std::vector<Interval>> busy;
  for (const auto& [key, items] : lanes)
    for (const Item& i : items)
      if (std::min(i.end, to) > std::max(i.start, from)) busy[key.first].emplace_back(std::max(i.start, from), std::min(i.end, to));
  std::map<int32_t, std::vector<Interval>> gaps;
  for (auto& [device, spans] : busy) {
    const std::vector<Interval> whole{{from, to}};
    gaps[device] = SubtractUnions(whole, UnionOf(spans));
  }
  return gaps;
}

// "gaps": the longest `cap` device-idle intervals of the span, by device then start.
json GapsJson(const std::map<int32_t, std::vector<Interval>>& gaps, TimeNs origin, size_t cap, size_t* total) {
  struct Gap {
    int32_t device;
    Interval span;
  };
  std::vector<Gap> all;
  for (const auto& [device, list] : gaps)
    for (const Interval& g : list) all.push_back({device, g});
  *total = all.size();
  auto longer = [](const Gap& a, const Gap& b) {
    const TimeNs da = a.span.second - a.span.first, db = b.span.second - b.span.first;
    return da != db ? da > db : std::tie(a.device, a.span.first) < std::tie(b.device, b.span.first);
  };
  if (all.size() > cap) {
    std::nth_element(all.begin(), all.begin() + static_cast<ptrdiff_t>(cap), all.end(), longer);
    all.resize(cap);
  }
  std::sort(all.begin(), all.end(),
            [](const Gap& a, const Gap& b) { return std::tie(a.device, a.span.first) < std::tie(b.device, b.span.first); });
  json arr = json::array();
  for (const Gap& g : all)
    arr.push_back({{"device", IdOrNull(g.device)},
                   {"start_offset_ns", g.span.first - origin},
                   {"duration_ns", g.span.second - g.span.first}});
  return arr;
}

// What a host API call is on the timeline's host row, from its name.
const char* CallKind(std::string_view name) {
  if (name.find("Launch") != std::string_view::npos) return "launch";
  if (name.find("Synchronize") != std::string_view::npos || name.find("Sync") != std::string_view::npos ||
      name.find("Wait") != std::string_view::npos || name.find("Query") != std::string_view::npos)
    return "sync";
  if (name.find("Memcpy") != std::string_view::npos || name.find("Memset") != std::string_view::npos) return "copy";
  return "api";
}

// "host": the iteration's API calls (those the iteration analysis gave it) and the CPU ranges
// (NVTX, user annotations) that overlap its span, one lane per (pid, tid), at most `cap` calls and
// `cap` ranges (the longest of each) and `max_lanes` lanes (those with the most items).
json HostJson(const Trace& t, const IterationAnalysis& it, size_t pos, const Iteration& iter, size_t cap,
              size_t max_lanes) {
  struct HostItem {
    TimeNs start, end;
    const char* kind;
    StringId name;
    int32_t depth;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<HostItem>> threads;
  for (size_t r = 0; r < t.api_calls.size() && r < it.api_iteration.size(); ++r)
    if (it.api_iteration[r] >= 0 && static_cast<size_t>(it.api_iteration[r]) == pos)
      threads[{t.api_calls.pid[r], t.api_calls.tid[r]}].push_back(
          {t.api_calls.start[r], std::max(t.api_calls.start[r], t.api_calls.end[r]),
           CallKind(t.Name(t.api_calls.name[r])), t.api_calls.name[r], 0});
  for (size_t r = 0; r < t.ranges.size(); ++r) {
    if (t.ranges.on_gpu[r] || t.ranges.end[r] <= iter.start || t.ranges.start[r] >= iter.end) continue;
    if (t.ranges.end[r] <= t.ranges.start[r]) continue;  // marks: nothing to draw
    threads[{t.ranges.pid[r], t.ranges.tid[r]}].push_back(
        {t.ranges.start[r], t.ranges.end[r], "range", t.ranges.name[r], t.ranges.depth[r]});
  }
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::vector<HostItem>>> lanes(threads.begin(), threads.end());
  std::stable_sort(lanes.begin(), lanes.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  if (lanes.size() > max_lanes) lanes.resize(max_lanes);
  std::sort(lanes.begin(), lanes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The longest `cap` calls and the longest `cap` ranges over the kept lanes (a CPU-op range per
  // operator must not crowd out the launches).
  struct Cut {
    size_t n = 0;
    TimeNs shortest = 0;  // the shortest length kept when n > cap
    size_t ties = 0;      // items of exactly that length that still fit
    bool Keep(TimeNs d, size_t cap) {
      if (n <= cap || d > shortest) return true;
      if (d < shortest || ties == 0) return false;
      --ties;
      return true;
    }
  };
  Cut cuts[2];  // calls, ranges
  for (int is_range = 0; is_range < 2; ++is_range) {
    std::vector<TimeNs> lengths;
    for (const auto& lane : lanes)
      for (const HostItem& h : lane.second)
        if ((h.kind == std::string_view("range")) == (is_range != 0)) lengths.push_back(h.end - h.start);
    Cut& c = cuts[is_range];
    c.n = lengths.size();
    if (c.n <= cap) continue;
    std::nth_element(lengths.begin(), lengths.begin() + static_cast<ptrdiff_t>(cap - 1), lengths.end(), std::greater<TimeNs>());
    c.shortest = lengths[cap - 1];
    c.ties = static_cast<size_t>(std::count(lengths.begin(), lengths.begin() + static_cast<ptrdiff_t>(cap), c.shortest));
  }
  json arr = json::array();
  for (auto& lane : lanes) {
    auto& items = lane.second;
    std::sort(items.begin(), items.end(), [](const HostItem& a, const HostItem& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    json rows = json::array();
    for (const HostItem& h : items) {
      const TimeNs d = h.end - h.start;
      if (!cuts[h.kind == std::string_view("range") ? 1 : 0].Keep(d, cap)) continue;
      rows.push_back({h.start - iter.start, d, h.kind, Demangle(t.Name(h.name)), h.depth});
    }
    arr.push_back({{"pid", IdOrNull(lane.first.first)},
                   {"tid", IdOrNull(lane.first.second)},
                   {"items_total", items.size()},
                   {"items_dropped", items.size() - rows.size()},
                   {"items", std::move(rows)}});
  }
  return arr;
}

// "overview": the whole trace window in equal bins; per device the busy time (the union of its
// kernels, copies and memsets) in each bin, and the kept iterations' spans (BinBusy, summary.h).
json OverviewJson(const BusyOverview& o, const IterationAnalysis& it) {
  json doc = {{"start_ns", o.start_ns}, {"duration_ns", o.duration_ns}, {"bin_ns", o.bin_ns}};
  json devices = json::array();
  for (const auto& [device, per_bin] : o.devices)
    devices.push_back({{"device", IdOrNull(device)}, {"busy_ns", per_bin}});
  doc["devices"] = std::move(devices);
  // Offsets from the start in unsigned arithmetic, as BinBusy's.
  json spans = json::array();
  for (const Iteration& i : it.iterations)
    spans.push_back({static_cast<uint64_t>(i.start) - static_cast<uint64_t>(o.start_ns),
                     static_cast<uint64_t>(i.end) - static_cast<uint64_t>(i.start)});
  doc["iterations"] = std::move(spans);
  return doc;
}

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
    doc["overview"] = OverviewJson(analysis.overview, it);
    return doc;
  }
  const size_t pos = MedianIterationPosition(it);
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
  size_t gaps_total = 0;
  doc["gaps"] = GapsJson(DeviceGaps(lanes, iter.start, iter.end), iter.start, kTimelineGapCap, &gaps_total);
  doc["gaps_total"] = gaps_total;
  doc["host"] = HostJson(trace, it, pos, iter, kTimelineHostCap, kTimelineHostLanes);
  // The drawn iteration's critical path (analyze --critical-path keeps it: critical_path.h).
  const CriticalPathResult& cp = analysis.critical_path;
  if (cp.has_detail && cp.detail_index == iter.index) {
    json rows = json::array();
    for (const PathTopSegment& s : cp.detail)
      rows.push_back({s.start - iter.start, s.duration, kPathKindNames[static_cast<size_t>(s.kind)],
                      s.name.empty() ? json(nullptr) : json(s.name), s.gpu ? IdOrNull(s.device) : json(nullptr),
                      s.gpu ? IdOrNull(s.stream) : json(nullptr), s.gpu ? json(nullptr) : IdOrNull(s.pid),
                      s.gpu ? json(nullptr) : IdOrNull(s.tid)});
    doc["critical_path"] = {
        {"columns", {"start_offset_ns", "duration_ns", "kind", "name", "device", "stream", "pid", "tid"}},
        {"segments_total", cp.detail_total},
        {"segments_dropped", cp.detail_total - cp.detail.size()},
        {"segments", std::move(rows)}};
  }
  doc["overview"] = OverviewJson(analysis.overview, it);
  return doc;
}

}  // namespace tg::internal
