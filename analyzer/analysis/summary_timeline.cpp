// Per-device and per-stream timelines: busy time as the union of GPU work intervals, idle gaps
// between the union's intervals, and the largest gaps with their neighbouring activities.
//
// Zero-length activities are points: they add no busy time but do split a gap (the device did
// something at that instant), so for every device busy_ns + gap_total_ns == active_ns exactly.
#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <unordered_map>

#include "analyzer/analysis/summary_internal.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/huge_pages.h"
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
    // Consecutive rows are mostly on the same stream, or take a few streams in turn: look at the
    // last few lanes before the hash.
    for (uint32_t l : recent_)
      if (l != UINT32_MAX && keys[l].device == device && keys[l].stream == stream) return l;
    const uint32_t l = Lookup(device, stream);
    recent_[next_++ % recent_.size()] = l;
    return l;
  }

 private:
  std::array<uint32_t, 8> recent_{UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                                  UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  size_t next_ = 0;
  uint32_t Lookup(int32_t device, int64_t stream) {
    auto [it, inserted] = index.emplace(LaneKey{device, stream}, static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(it->first);
    return it->second;
  }
};

// The GPU activities as refs (summary_internal.h), their times read from the tables: 4 bytes an
// activity where a copy of the times would take 24.
class Items {
 public:
  explicit Items(const Trace& t)
      : start_{t.kernels.start.data(), t.memcpys.start.data(), t.memsets.start.data()},
        end_{t.kernels.end.data(), t.memcpys.end.data(), t.memsets.end.data()} {}
  TimeNs Start(uint32_t ref) const { return start_[ref & 3u][RefRow(ref)]; }
  // Importers drop end < start; clamp anyway so a bad row cannot make busy time negative.
  TimeNs End(uint32_t ref) const { return std::max(Start(ref), end_[ref & 3u][RefRow(ref)]); }
  // By start, then end, then ref: a total order.
  bool ByTime(uint32_t a, uint32_t b) const {
    const TimeNs sa = Start(a), sb = Start(b);
    if (sa != sb) return sa < sb;
    const TimeNs ea = End(a), eb = End(b);
    if (ea != eb) return ea < eb;
    return a < b;
  }

 private:
  const TimeNs* start_[3];
  const TimeNs* end_[3];
};

// Every GPU activity of the three tables as a ref, grouped by lane (lanes numbered in (device,
// stream) order), each lane in table order (kernels, then copies, then memsets). `lane_start[l]`
// is where lane l begins. A counting sort placing each ref once.
std::vector<uint32_t> CollectItems(const Trace& t, std::vector<LaneKey>& lane_keys, std::vector<size_t>& lane_start) {
  Lanes lanes;
  std::vector<uint32_t> row_lane;
  row_lane.reserve(t.GpuEventCount());  // a lane for every row below
  AdviseHugePages(row_lane.data(), t.GpuEventCount() * sizeof(uint32_t));
  auto lanes_of = [&](const auto& device, const auto& stream) {
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
  lane_start.assign(lane_keys.size() + 1, 0);
  for (uint32_t& l : row_lane) {
    l = renumber[l];
    lane_start[l + 1]++;
  }
  for (size_t l = 0; l < lane_keys.size(); ++l) lane_start[l + 1] += lane_start[l];

  std::vector<uint32_t> items = WholeVector<uint32_t>(row_lane.size());
  if (lane_keys.size() == 1) {  // one lane: the refs in table order
    size_t row = 0;
    for (ItemKind kind : {ItemKind::kKernel, ItemKind::kMemcpy, ItemKind::kMemset}) {
      const size_t n = kind == ItemKind::kKernel   ? t.kernels.size()
                       : kind == ItemKind::kMemcpy ? t.memcpys.size()
                                                   : t.memsets.size();
      for (size_t i = 0; i < n; ++i) items[row++] = MakeRef(kind, i);
    }
    return items;
  }
  std::vector<size_t> next(lane_start.begin(), lane_start.end() - 1);
  size_t row = 0;
  auto place = [&](ItemKind kind, size_t n) {
    for (size_t i = 0; i < n; ++i, ++row) items[next[row_lane[row]]++] = MakeRef(kind, i);
  };
  place(ItemKind::kKernel, t.kernels.size());
  place(ItemKind::kMemcpy, t.memcpys.size());
  place(ItemKind::kMemset, t.memsets.size());
  return items;
}

// Union of a time-sorted range of refs: calls on_gap(gap_start, gap_end, previous, next) for each
// hole and returns the busy time. `previous` is the activity that ends the interval before it.
template <typename OnGap>
TimeNs SweepUnion(const Items& items, const uint32_t* first, const uint32_t* last, OnGap&& on_gap) {
  if (first == last) return 0;
  TimeNs busy = 0;
  TimeNs cur_start = items.Start(*first), cur_end = items.End(*first);
  uint32_t cur_last = *first;  // the item whose end is cur_end
  for (const uint32_t* it = first + 1; it != last; ++it) {
    const TimeNs start = items.Start(*it), end = items.End(*it);
    if (start > cur_end) {
      busy += cur_end - cur_start;
      on_gap(cur_end, start, cur_last, *it);
      cur_start = start;
      cur_end = end;
      cur_last = *it;
    } else if (end > cur_end) {
      cur_end = end;
      cur_last = *it;
    }
  }
  return busy + (cur_end - cur_start);
}

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

// `first`..`last`: the device's items, its lanes' time-sorted blocks at offsets `lane_bounds`,
// sorted by time here. Appends the device's busy union to `busy` and keeps its largest gaps in
// `heap`. The gaps are swept twice (a sweep is a read of the sorted refs): once for the counts and
// the largest, once for the busy pieces, so that no gap is stored; AttributeDevice sweeps them a
// third time for their causes.
void SweepDevice(const AnalyzeOptions& options, const Items& items, uint32_t* first, uint32_t* last,
                 const std::vector<size_t>& lane_bounds, DeviceSummary& d, std::vector<std::pair<TimeNs, TimeNs>>& busy,
                 std::vector<GapItem>& heap) {
  internal::MergeSortedBlocks(first, lane_bounds, [&](uint32_t a, uint32_t b) { return items.ByTime(a, b); });
  d.first_start_ns = items.Start(*first);
  d.last_end_ns = items.End(*first);
  for (const uint32_t* it = first; it != last; ++it) {
    d.last_end_ns = std::max(d.last_end_ns, items.End(*it));
  }
  d.active_ns = d.last_end_ns - d.first_start_ns;
  // Bounded heap of the `largest_gaps` largest gaps: its front is the smallest kept.
  heap.reserve(options.largest_gaps + 1);
  TimeNs piece_start = d.first_start_ns;  // the busy piece the gaps below close
  size_t pieces = 0;
  d.busy_ns = SweepUnion(items, first, last, [&](TimeNs gs, TimeNs ge, uint32_t previous, uint32_t next) {
    TimeNs len = ge - gs;
    d.gap_count++;
    d.gap_total_ns += len;
    size_t b = GapBucketOf(len);
    d.gap_histogram[b]++;
    d.gap_histogram_ns[b] += len;
    pieces += gs > piece_start;
    piece_start = ge;
    KeepLargest(heap, options.largest_gaps, GapItem{gs, ge, previous, next});
  });
  d.has_idle_ratio = d.active_ns > 0;
  d.idle_ratio = d.has_idle_ratio
                     ? static_cast<double>(d.active_ns - d.busy_ns) / static_cast<double>(d.active_ns)
                     : 0.0;
  busy.reserve(busy.size() + pieces + 1);
  piece_start = d.first_start_ns;
  SweepUnion(items, first, last, [&](TimeNs gs, TimeNs ge, uint32_t, uint32_t) {
    if (gs > piece_start) busy.emplace_back(piece_start, gs);
    piece_start = ge;
  });
  if (d.last_end_ns > piece_start) busy.emplace_back(piece_start, d.last_end_ns);
}

// Gaps per chunk when a device's gaps are attributed in chunks that two threads share.
constexpr size_t kGapsPerChunk = size_t{1} << 13;

// The causes of the device's gaps (`first`..`last` sorted by SweepDevice), when `causes`, and its
// largest gaps described. `streams`: the device's stream summaries, by stream id. With `help`,
// a device of many gaps is attributed in chunks that another thread may take a share of (each
// with a copy of the finder): a chunk starts at an item that starts a busy piece (every earlier
// item has ended), so that a sweep from there is the sweep from the first item from there on, and
// ends at the item that starts the next chunk (the gap before it is the chunk's last).
void AttributeDevice(const Trace& t, const AnalyzeOptions& options, IdleCauseFinder* causes, LazySpans& spans,
                     const Items& items, const uint32_t* first, const uint32_t* last, StreamSummary* streams,
                     size_t stream_count, std::vector<GapItem>& heap, DeviceSummary& d, HelpBoard* help) {
  if (causes) {
    const auto* in_spans = spans.Get(causes);
    // Chunk bounds: positions of items that start a busy piece (d.busy holds the device's pieces).
    std::vector<const uint32_t*> bounds{first};
    const size_t chunks = help ? std::min<size_t>(d.gap_count / kGapsPerChunk, 256) : 0;
    for (size_t c = 1; c < chunks; ++c) {
      const size_t piece = c * d.busy.size() / chunks;
      if (piece == 0 || piece >= d.busy.size()) continue;
      const TimeNs at = d.busy[piece].first;
      const uint32_t* p = std::partition_point(first, last, [&](uint32_t r) { return items.Start(r) < at; });
      if (p > bounds.back() && p < last) bounds.push_back(p);
    }
    bounds.push_back(last);
    const size_t n = bounds.size() - 1;
    std::vector<IdleCauseFinder::GapTotals> totals(n);
    auto run = [&](size_t c, const IdleCauseFinder& finder) {
      const uint32_t* to = c + 1 < n ? bounds[c + 1] + 1 : last;  // through the next chunk's first item
      finder.AttributeRun(
          [&](const std::function<void(const GapItem&)>& attribute) {
            SweepUnion(items, bounds[c], to, [&](TimeNs gs, TimeNs ge, uint32_t previous, uint32_t next) {
              attribute(GapItem{gs, ge, previous, next});
            });
          },
          streams, stream_count, in_spans, options.largest_gaps, totals[c]);
    };
    if (n == 1) {
      run(0, *causes);
    } else {
      const IdleCauseFinder helper_finder(*causes);
      help->Run(n, [&](size_t c, int worker) { run(c, worker == 0 ? *causes : helper_finder); });
      for (size_t c = 1; c < n; ++c) totals[0].Join(totals[c], options.largest_gaps);
    }
    causes->FinishAttribution(totals[0], d, streams, stream_count, in_spans);
  }
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
                        const SpanSource* iteration_spans, const HostSource* host,
                        const std::function<void()>* busy_known, Summary& s, HelpBoard* help) {
  std::optional<IdleCauseFinder> causes;
  LazySpans spans(iteration_spans, host);
  if (api_index && kernel_classes) causes.emplace(t, *api_index, stages, *kernel_classes, nullptr, options);
  std::vector<LaneKey> lane_keys;
  std::vector<size_t> lane_start;
  // Pass 1: per stream (lane), each lane's items contiguous in the trace's order, then sorted.
  const Items times(t);
  auto by_time = [&](uint32_t a, uint32_t b) { return times.ByTime(a, b); };
  std::vector<uint32_t> items = CollectItems(t, lane_keys, lane_start);
  s.streams.resize(lane_keys.size());
  for (uint32_t lane = 0; lane < lane_keys.size(); ++lane) {
    uint32_t* first = items.data() + lane_start[lane];
    uint32_t* last = items.data() + lane_start[lane + 1];
    // A lane holds its kernels, then its copies, then its memsets, each usually in time order.
    internal::SortMostlySorted(first, last, by_time);
    StreamSummary& st = s.streams[lane];
    st.device = lane_keys[lane].device;
    st.stream = lane_keys[lane].stream;
    st.first_start_ns = times.Start(*first);
    st.last_end_ns = times.End(*first);
    for (const uint32_t* it = first; it != last; ++it) {
      switch (RefKind(*it)) {
        case ItemKind::kKernel: st.kernels++; break;
        case ItemKind::kMemcpy: st.memcpys++; break;
        case ItemKind::kMemset: st.memsets++; break;
      }
      st.last_end_ns = std::max(st.last_end_ns, times.End(*it));
    }
    st.busy_ns = SweepUnion(times, first, last, [](TimeNs, TimeNs, uint32_t, uint32_t) {});
  }
  // Pass 2: per device. Lanes are numbered in (device, stream) order, so a device's items are
  // one contiguous block; re-sort that block by time alone, and sweep it for the busy union.
  struct DeviceBlock {
    size_t begin, end, first_lane, lanes;
    std::vector<GapItem> heap;  // its largest gaps
  };
  std::vector<DeviceBlock> blocks;
  size_t lane = 0;
  size_t begin = 0;
  size_t kernels = 0;
  std::vector<size_t> kernel_bounds{0};  // per device, for the merge below
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
    DeviceBlock block{begin, end, first_lane, lane - first_lane, {}};
    SweepDevice(options, times, items.data() + begin, items.data() + end, bounds, d, d.busy, block.heap);
    kernels += d.kernels;
    kernel_bounds.push_back(kernels);
    for (size_t l = first_lane; l < lane; ++l)
      s.streams[l].device_busy_share =
          d.busy_ns > 0 ? static_cast<double>(s.streams[l].busy_ns) / static_cast<double>(d.busy_ns) : 0.0;
    s.devices.push_back(std::move(d));
    blocks.push_back(std::move(block));
    begin = end;
  }
  // The kernel rows in start order: each device's in time order, then merged.
  s.kernels_by_start.reserve(kernels);
  for (const DeviceBlock& b : blocks)
    for (size_t i = b.begin; i < b.end; ++i)
      if (RefKind(items[i]) == ItemKind::kKernel) s.kernels_by_start.push_back(static_cast<uint32_t>(RefRow(items[i])));
  if (s.devices.size() > 1) {
    // Each device's part is in time order: merge them, then join the devices' busy pieces.
    const KernelTable& k = t.kernels;
    internal::MergeSortedBlocks(s.kernels_by_start.data(), std::move(kernel_bounds), [&](uint32_t a, uint32_t b) {
      return k.start[a] != k.start[b] ? k.start[a] < k.start[b] : a < b;
    });
    std::vector<std::pair<TimeNs, TimeNs>> all;
    std::vector<size_t> busy_bounds{0};
    for (const DeviceSummary& d : s.devices) {
      all.insert(all.end(), d.busy.begin(), d.busy.end());
      busy_bounds.push_back(all.size());
    }
    internal::MergeSortedBlocks(all.data(), std::move(busy_bounds), std::less<std::pair<TimeNs, TimeNs>>());
    for (const auto& [a, b] : all) {
      std::vector<std::pair<TimeNs, TimeNs>>& joined = s.gpu_busy_merged;
      if (!joined.empty() && a <= joined.back().second) joined.back().second = std::max(joined.back().second, b);
      else joined.emplace_back(a, b);
    }
  }
  // From here on another thread may read s.GpuBusy() and s.kernels_by_start (summary.h).
  if (busy_known && *busy_known) (*busy_known)();
  // Pass 3: the devices' gaps to their causes.
  for (size_t k = 0; k < blocks.size(); ++k) {
    DeviceBlock& b = blocks[k];
    AttributeDevice(t, options, causes ? &*causes : nullptr, spans, times, items.data() + b.begin, items.data() + b.end,
                    s.streams.data() + b.first_lane, b.lanes, b.heap, s.devices[k], help);
  }
}

}  // namespace tg::internal
