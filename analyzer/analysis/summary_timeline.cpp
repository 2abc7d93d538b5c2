// Per-device and per-stream timelines: busy time as the union of GPU work intervals, idle gaps
// between the union's intervals, and the largest gaps with their neighbouring activities.
//
// Zero-length activities are points: they add no busy time but do split a gap (the device did
// something at that instant), so for every device busy_ns + gap_total_ns == active_ns exactly.
#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "analyzer/analysis/summary_internal.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/keep_largest.h"
#include "analyzer/util/sort_runs.h"

namespace tg::internal {

namespace {

struct LaneKey {
  int32_t device;
  int64_t stream;
  bool operator==(const LaneKey&) const = default;
  bool operator<(const LaneKey& o) const {
    return device != o.device ? device < o.device : stream < o.stream;
  }
};
struct LaneKeyHash {
  size_t operator()(const LaneKey& k) const {
    return std::hash<uint64_t>{}(static_cast<uint64_t>(k.stream) * 1000003u +
                                 static_cast<uint32_t>(k.device));
  }
};

struct Lanes {
  std::vector<LaneKey> keys;
  std::unordered_map<LaneKey, uint32_t, LaneKeyHash> index;
  uint32_t Of(int32_t device, int64_t stream) {
    // Consecutive rows are mostly on the same stream: skip the hash lookup then.
    if (last_ != UINT32_MAX && keys[last_].device == device && keys[last_].stream == stream) return last_;
    return last_ = Lookup(device, stream);
  }

 private:
  uint32_t last_ = UINT32_MAX;
  uint32_t Lookup(int32_t device, int64_t stream) {
    auto [it, inserted] = index.emplace(LaneKey{device, stream}, static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(it->first);
    return it->second;
  }
};

// The sort buffer: every GPU activity of the three tables, grouped by lane (lanes numbered in
// (device, stream) order), each lane in table order (kernels, then copies, then memsets).
// `lane_start[l]` is where lane l begins. A counting sort placing each item once: one buffer of
// items (plus a lane number per row) rather than two, which is most of the summary's peak memory.
std::vector<GpuItem> CollectItems(const Trace& t, std::vector<LaneKey>& lane_keys, std::vector<size_t>& lane_start) {
  Lanes lanes;
  std::vector<uint32_t> row_lane;
  row_lane.reserve(t.GpuEventCount());
  auto lanes_of = [&](const std::vector<int32_t>& device, const std::vector<int64_t>& stream) {
    for (size_t i = 0; i < device.size(); ++i) row_lane.push_back(lanes.Of(device[i], stream[i]));
  };
  lanes_of(t.kernels.device, t.kernels.stream);
  lanes_of(t.memcpys.device, t.memcpys.stream);
  lanes_of(t.memsets.device, t.memsets.stream);

  std::vector<uint32_t> order(lanes.keys.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return lanes.keys[a] < lanes.keys[b]; });
  std::vector<uint32_t> renumber(order.size());
  lane_keys.resize(order.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    renumber[order[pos]] = pos;
    lane_keys[pos] = lanes.keys[order[pos]];
  }
  for (uint32_t& l : row_lane) l = renumber[l];
  lane_start.assign(lane_keys.size() + 1, 0);
  for (uint32_t l : row_lane) lane_start[l + 1]++;
  for (size_t l = 0; l < lane_keys.size(); ++l) lane_start[l + 1] += lane_start[l];

  std::vector<GpuItem> items(row_lane.size());
  std::vector<size_t> next(lane_start.begin(), lane_start.end() - 1);
  size_t row = 0;
  auto place = [&](ItemKind kind, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
    for (size_t i = 0; i < start.size(); ++i, ++row) {
      const uint32_t l = row_lane[row];
      // Importers drop end < start; clamp anyway so a bad row cannot make busy time negative.
      items[next[l]++] = GpuItem{start[i], std::max(start[i], end[i]), MakeRef(kind, i), l};
    }
  };
  place(ItemKind::kKernel, t.kernels.start, t.kernels.end);
  place(ItemKind::kMemcpy, t.memcpys.start, t.memcpys.end);
  place(ItemKind::kMemset, t.memsets.start, t.memsets.end);
  return items;
}

bool ByTime(const GpuItem& a, const GpuItem& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end < b.end;
  return a.ref < b.ref;
}

// Union of a time-sorted range: calls on_gap(gap_start, gap_end, previous, next) for each hole and
// returns the busy time. `previous` is the activity that ends the interval before it.
template <typename OnGap>
TimeNs SweepUnion(const GpuItem* first, const GpuItem* last, OnGap&& on_gap) {
  if (first == last) return 0;
  TimeNs busy = 0;
  TimeNs cur_start = first->start, cur_end = first->end;
  const GpuItem* cur_last = first;  // the item whose end is cur_end
  for (const GpuItem* it = first + 1; it != last; ++it) {
    if (it->start > cur_end) {
      busy += cur_end - cur_start;
      on_gap(cur_end, it->start, *cur_last, *it);
      cur_start = it->start;
      cur_end = it->end;
      cur_last = it;
    } else if (it->end > cur_end) {
      cur_end = it->end;
      cur_last = it;
    }
  }
  return busy + (cur_end - cur_start);
}

// `lane_bounds`: the device's items are its lanes' time-sorted blocks, at these offsets.
// `streams`: the device's stream summaries, by stream id.
// Appends the device's kernel rows in start order to `kernels` and its busy union to `busy`.
// The kept iterations' spans and the host model, asked for once, when the first device's gaps
// are attributed (the other thread may still be finding them).
class LazySpans {
 public:
  LazySpans(const SpanSource* source, const HostSource* host) : source_(source), host_(host) {}
  const std::vector<std::pair<TimeNs, TimeNs>>* Get(IdleCauseFinder* causes) {
    if (!asked_) {
      // The host first: this thread may build it while the other still finds the iterations.
      if (causes && host_ && *host_) causes->set_host((*host_)());
      if (source_ && *source_) spans_ = (*source_)();
    }
    asked_ = true;
    return spans_;
  }

 private:
  const SpanSource* source_;
  const HostSource* host_;
  bool asked_ = false;
  const std::vector<std::pair<TimeNs, TimeNs>>* spans_ = nullptr;
};

void SummarizeDevice(const Trace& t, const AnalyzeOptions& options, IdleCauseFinder* causes, LazySpans& spans,
                     GpuItem* first, GpuItem* last, const std::vector<size_t>& lane_bounds, StreamSummary* streams,
                     size_t stream_count, DeviceSummary& d, std::vector<uint32_t>& kernels,
                     std::vector<std::pair<TimeNs, TimeNs>>& busy) {
  std::vector<GapItem> all_gaps;
  internal::MergeSortedBlocks(first, lane_bounds, ByTime);
  for (const GpuItem* it = first; it != last; ++it)
    if (RefKind(it->ref) == ItemKind::kKernel) kernels.push_back(static_cast<uint32_t>(RefRow(it->ref)));
  TimeNs piece_start = first->start;  // the busy piece the gaps below close
  d.first_start_ns = first->start;
  d.last_end_ns = first->end;
  for (const GpuItem* it = first; it != last; ++it) d.last_end_ns = std::max(d.last_end_ns, it->end);
  d.active_ns = d.last_end_ns - d.first_start_ns;
  // Bounded heap of the `largest_gaps` largest gaps: its front is the smallest kept.
  std::vector<GapItem> heap;
  heap.reserve(options.largest_gaps + 1);
  d.busy_ns = SweepUnion(first, last, [&](TimeNs gs, TimeNs ge, const GpuItem& previous, const GpuItem& next) {
    TimeNs len = ge - gs;
    d.gap_count++;
    d.gap_total_ns += len;
    size_t b = GapBucketOf(len);
    d.gap_histogram[b]++;
    d.gap_histogram_ns[b] += len;
    const GapItem g{gs, ge, previous.ref, next.ref};
    if (gs > piece_start) busy.emplace_back(piece_start, gs);
    piece_start = ge;
    if (causes) all_gaps.push_back(g);
    KeepLargest(heap, options.largest_gaps, g);
  });
  if (d.last_end_ns > piece_start) busy.emplace_back(piece_start, d.last_end_ns);
  d.has_idle_ratio = d.active_ns > 0;
  d.idle_ratio = d.has_idle_ratio
                     ? static_cast<double>(d.active_ns - d.busy_ns) / static_cast<double>(d.active_ns)
                     : 0.0;
  if (causes) causes->Attribute(all_gaps, d, streams, stream_count, spans.Get(causes), options.largest_gaps);
  std::sort(heap.begin(), heap.end(), LargerGap);
  d.largest_gaps.reserve(heap.size());
  for (const GapItem& g : heap) {
    d.largest_gaps.push_back(DescribeGap(t, g));
    if (causes) causes->Decide(g, &d.largest_gaps.back());
  }
}

}  // namespace

std::string ItemLabel(const Trace& t, uint32_t ref) {
  size_t row = RefRow(ref);
  switch (RefKind(ref)) {
    case ItemKind::kKernel: return Demangle(t.Name(t.kernels.name[row]));
    case ItemKind::kMemcpy: return "Memcpy " + std::string(CopyKindName(t.memcpys.kind[row]));
    case ItemKind::kMemset: return "Memset";
  }
  return "";
}

int64_t ItemStream(const Trace& t, uint32_t ref) {
  size_t row = RefRow(ref);
  switch (RefKind(ref)) {
    case ItemKind::kKernel: return t.kernels.stream[row];
    case ItemKind::kMemcpy: return t.memcpys.stream[row];
    case ItemKind::kMemset: return t.memsets.stream[row];
  }
  return kUnknownId;
}

IdleGap DescribeGap(const Trace& t, const GapItem& g) {
  IdleGap gap;
  gap.start_ns = g.start;
  gap.duration_ns = g.end - g.start;
  gap.previous = ItemLabel(t, g.previous);
  gap.next = ItemLabel(t, g.next);
  gap.next_stream = ItemStream(t, g.next);
  return gap;
}

void KeepLargest(std::vector<GapItem>& heap, size_t cap, const GapItem& g) { KeepLargest(heap, cap, g, LargerGap); }

void SummarizeTimelines(const Trace& t, const AnalyzeOptions& options, const ApiIndex* api_index,
                        const HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                        const SpanSource* iteration_spans, const HostSource* host, Summary& s) {
  std::optional<IdleCauseFinder> causes;
  LazySpans spans(iteration_spans, host);
  if (api_index && kernel_classes) causes.emplace(t, *api_index, stages, *kernel_classes, nullptr, options);
  std::vector<LaneKey> lane_keys;
  std::vector<size_t> lane_start;
  // Pass 1: per stream (lane), each lane's items contiguous in the trace's order, then sorted.
  std::vector<GpuItem> items = CollectItems(t, lane_keys, lane_start);
  // A lane holds its kernels, then its copies, then its memsets, each usually in time order.
  for (size_t l = 0; l < lane_keys.size(); ++l)
    internal::SortMostlySorted(items.data() + lane_start[l], items.data() + lane_start[l + 1], ByTime);
  s.streams.resize(lane_keys.size());
  size_t begin = 0;
  for (uint32_t lane = 0; lane < lane_keys.size(); ++lane) {
    size_t end = begin;
    StreamSummary& st = s.streams[lane];
    st.device = lane_keys[lane].device;
    st.stream = lane_keys[lane].stream;
    st.first_start_ns = items[begin].start;
    st.last_end_ns = items[begin].end;
    for (; end < items.size() && items[end].lane == lane; ++end) {
      switch (RefKind(items[end].ref)) {
        case ItemKind::kKernel: st.kernels++; break;
        case ItemKind::kMemcpy: st.memcpys++; break;
        case ItemKind::kMemset: st.memsets++; break;
      }
      st.last_end_ns = std::max(st.last_end_ns, items[end].end);
    }
    st.busy_ns = SweepUnion(items.data() + begin, items.data() + end,
                            [](TimeNs, TimeNs, const GpuItem&, const GpuItem&) {});
    begin = end;
  }
  // Pass 2: per device. Lanes are numbered in (device, stream) order, so a device's items are
  // one contiguous block; re-sort that block by time alone.
  size_t lane = 0;
  begin = 0;
  std::vector<size_t> kernel_bounds{0}, busy_bounds{0};  // per device, for the merge below
  while (lane < lane_keys.size()) {
    DeviceSummary d;
    d.device = lane_keys[lane].device;
    if (const Device* dev = t.FindDevice(d.device)) {
      d.known = true;
      d.name = dev->name;
    }
    size_t first_lane = lane;
    std::vector<size_t> bounds{0};
    for (; lane < lane_keys.size() && lane_keys[lane].device == d.device; ++lane) {
      d.kernels += s.streams[lane].kernels;
      d.memcpys += s.streams[lane].memcpys;
      d.memsets += s.streams[lane].memsets;
      bounds.push_back(lane_start[lane + 1] - begin);
    }
    size_t end = begin + d.kernels + d.memcpys + d.memsets;
    SummarizeDevice(t, options, causes ? &*causes : nullptr, spans, items.data() + begin, items.data() + end, bounds,
                    s.streams.data() + first_lane, lane - first_lane, d, s.kernels_by_start, s.gpu_busy);
    kernel_bounds.push_back(s.kernels_by_start.size());
    busy_bounds.push_back(s.gpu_busy.size());
    for (size_t l = first_lane; l < lane; ++l)
      s.streams[l].device_busy_share =
          d.busy_ns > 0 ? static_cast<double>(s.streams[l].busy_ns) / static_cast<double>(d.busy_ns) : 0.0;
    s.devices.push_back(std::move(d));
    begin = end;
  }
  if (s.devices.size() > 1) {
    // Each device's part is in time order: merge them, then join the devices' busy pieces.
    const KernelTable& k = t.kernels;
    internal::MergeSortedBlocks(s.kernels_by_start.data(), std::move(kernel_bounds), [&](uint32_t a, uint32_t b) {
      return k.start[a] != k.start[b] ? k.start[a] < k.start[b] : a < b;
    });
    internal::MergeSortedBlocks(s.gpu_busy.data(), std::move(busy_bounds), std::less<std::pair<TimeNs, TimeNs>>());
    std::vector<std::pair<TimeNs, TimeNs>> joined;
    for (const auto& [a, b] : s.gpu_busy) {
      if (!joined.empty() && a <= joined.back().second) joined.back().second = std::max(joined.back().second, b);
      else joined.emplace_back(a, b);
    }
    s.gpu_busy = std::move(joined);
  }
}

}  // namespace tg::internal
