#include "tracegate/analyzer/model.h"

#include <algorithm>
#include <cstdint>

#include "analyzer/util/sort_runs.h"

namespace tg {

std::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kHtoA: return "HtoA";
    case CopyKind::kAtoH: return "AtoH";
    case CopyKind::kAtoA: return "AtoA";
    case CopyKind::kAtoD: return "AtoD";
    case CopyKind::kDtoA: return "DtoA";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    case CopyKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view MemKindName(MemKind k) {
  switch (k) {
    case MemKind::kPageable: return "pageable";
    case MemKind::kPinned: return "pinned";
    case MemKind::kDevice: return "device";
    case MemKind::kArray: return "array";
    case MemKind::kManaged: return "managed";
    case MemKind::kDeviceStatic: return "device_static";
    case MemKind::kManagedStatic: return "managed_static";
    case MemKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view SyncKindName(SyncKind k) {
  switch (k) {
    case SyncKind::kEventSync: return "event_sync";
    case SyncKind::kStreamWaitEvent: return "stream_wait_event";
    case SyncKind::kStreamSync: return "stream_sync";
    case SyncKind::kContextSync: return "context_sync";
    case SyncKind::kUnknown: break;
  }
  return "unknown";
}

// Add / Row / Reserve of every table, from its column list (model.h).
#define TG_PUSH_COLUMN(T, n, def, S) n.push_back(r.n);
#define TG_ROW_VALUE(T, n, def, S) static_cast<T>(n[i]),
#define TG_RESERVE_COLUMN(T, n, def, S) n.reserve(count);
#define TG_DEFINE_TABLE(Table, R, COLUMNS)                                   \
  void Table::Add(const R& r) { COLUMNS(TG_PUSH_COLUMN) }                    \
  R Table::Row(size_t i) const { return R{COLUMNS(TG_ROW_VALUE)}; }          \
  void Table::Reserve(size_t count) { COLUMNS(TG_RESERVE_COLUMN) }

TG_DEFINE_TABLE(KernelTable, Kernel, TG_KERNEL_COLUMNS)
TG_DEFINE_TABLE(MemcpyTable, Memcpy, TG_MEMCPY_COLUMNS)
TG_DEFINE_TABLE(MemsetTable, Memset, TG_MEMSET_COLUMNS)
TG_DEFINE_TABLE(SyncTable, Sync, TG_SYNC_COLUMNS)
TG_DEFINE_TABLE(ApiTable, ApiCall, TG_API_COLUMNS)
TG_DEFINE_TABLE(RangeTable, Range, TG_RANGE_COLUMNS)
TG_DEFINE_TABLE(SampleTable, Sample, TG_SAMPLE_COLUMNS)

namespace {
void Extend(std::pair<TimeNs, TimeNs>& w, bool& any, const std::vector<TimeNs>& s,
            const std::vector<TimeNs>& e) {
  if (s.empty()) return;
  TimeNs lo = *std::min_element(s.begin(), s.end());
  TimeNs hi = *std::max_element(e.begin(), e.end());
  if (!any) { w = {lo, hi}; any = true; return; }
  w.first = std::min(w.first, lo);
  w.second = std::max(w.second, hi);
}
}  // namespace

std::pair<TimeNs, TimeNs> Trace::Window() const {
  std::pair<TimeNs, TimeNs> w{0, 0};
  bool any = false;
  Extend(w, any, kernels.start, kernels.end);
  Extend(w, any, memcpys.start, memcpys.end);
  Extend(w, any, memsets.start, memsets.end);
  Extend(w, any, syncs.start, syncs.end);
  Extend(w, any, api_calls.start, api_calls.end);
  Extend(w, any, ranges.start, ranges.end);
  return w;
}

const Device* Trace::FindDevice(int32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

namespace {
// Depth of each range among ranges on the same (pid, tid), from interval containment.
// Sets each range's nesting depth on its thread; returns how many ranges overlap an enclosing
// one without nesting in it.
uint64_t ComputeRangeDepth(RangeTable& r) {
  // uint32 rows halve the order's memory; 2^32 ranges would need well over 100 GB of columns.
  std::vector<uint32_t> order(std::min<size_t>(r.size(), UINT32_MAX));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  // Rows are mostly in order already; a profiler writes an enclosing range after what it encloses.
  internal::SortNearlySorted(order, [&](uint32_t a, uint32_t b) {
    if (r.pid[a] != r.pid[b]) return r.pid[a] < r.pid[b];
    if (r.tid[a] != r.tid[b]) return r.tid[a] < r.tid[b];
    if (r.on_gpu[a] != r.on_gpu[b]) return r.on_gpu[a] < r.on_gpu[b];
    if (r.start[a] != r.start[b]) return r.start[a] < r.start[b];
    if (r.end[a] != r.end[b]) return r.end[a] > r.end[b];  // outer range first when both start together
    return a < b;  // identical ranges: the earlier row is the outer one
  });
  std::vector<size_t> open;  // stack of enclosing ranges
  uint64_t overlapping = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    if (k > 0) {
      size_t p = order[k - 1];
      if (r.pid[p] != r.pid[i] || r.tid[p] != r.tid[i] || r.on_gpu[p] != r.on_gpu[i]) open.clear();
    }
    while (!open.empty() && r.end[open.back()] <= r.start[i]) open.pop_back();
    // Partially overlapping (not nested) ranges are placed one deeper than what they overlap.
    if (!open.empty() && r.end[i] > r.end[open.back()]) ++overlapping;
    r.depth[i] = static_cast<int32_t>(open.size());
    open.push_back(i);
  }
  return overlapping;
}
}  // namespace

namespace {
// The correlation ids of the API calls, for membership tests. CUPTI numbers correlations
// consecutively, so the ids usually fill a narrow range: then a bitmap over [min, max] (one bit
// per id, a test is one load); otherwise a sorted vector and binary search.
class CorrelationSet {
 public:
  explicit CorrelationSet(const std::vector<int64_t>& ids) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t known = 0;
    for (int64_t c : ids) {
      if (c == kUnknownId) continue;
      lo = std::min(lo, c);
      hi = std::max(hi, c);
      ++known;
    }
    if (known == 0) return;
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // no overflow
    if (span / 64 <= known) {
      lo_ = lo;
      span_ = span;
      bits_.assign(span / 64 + 1, 0);
      for (int64_t c : ids)
        if (c != kUnknownId) Set(static_cast<uint64_t>(c) - static_cast<uint64_t>(lo));
    } else {
      sorted_.reserve(known);
      for (int64_t c : ids)
        if (c != kUnknownId) sorted_.push_back(c);
      std::sort(sorted_.begin(), sorted_.end());
    }
  }
  bool Contains(int64_t c) const {
    if (!bits_.empty()) {
      const uint64_t off = static_cast<uint64_t>(c) - static_cast<uint64_t>(lo_);
      return c >= lo_ && off <= span_ && (bits_[off / 64] >> (off % 64) & 1u);
    }
    return std::binary_search(sorted_.begin(), sorted_.end(), c);
  }

 private:
  void Set(uint64_t off) { bits_[off / 64] |= uint64_t{1} << (off % 64); }
  int64_t lo_ = 0;
  uint64_t span_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<int64_t> sorted_;
};

// Drops the rows whose time column holds a negative value; returns how many.
template <class T>
uint64_t DropNegative(T& table, const std::vector<TimeNs>& time) {
  size_t negative = 0;
  for (TimeNs t : time) negative += t < 0;
  if (negative == 0) return 0;
  T kept;
  for (size_t i = 0; i < table.size(); ++i)
    if (time[i] >= 0) kept.Add(table.Row(i));
  table = std::move(kept);
  return negative;
}
}  // namespace

void FinalizeTrace(Trace& trace) {
  // Every kept timestamp is in [0, INT64_MAX], so end - start of any two never overflows.
  uint64_t negative = DropNegative(trace.kernels, trace.kernels.start) +
                      DropNegative(trace.memcpys, trace.memcpys.start) +
                      DropNegative(trace.memsets, trace.memsets.start) +
                      DropNegative(trace.syncs, trace.syncs.start) +
                      DropNegative(trace.api_calls, trace.api_calls.start) +
                      DropNegative(trace.ranges, trace.ranges.start) +
                      DropNegative(trace.samples, trace.samples.time);
  trace.quality.Add(Quality::kNegativeTimestamp, negative);
  if (trace.api_calls.size() > 0) {
    const CorrelationSet launched(trace.api_calls.correlation);
    uint64_t unmatched = 0;
    auto count = [&](const std::vector<int64_t>& corr) {
      for (int64_t c : corr)
        if (c != kUnknownId && !launched.Contains(c)) ++unmatched;
    };
    count(trace.kernels.correlation);
    count(trace.memcpys.correlation);
    count(trace.memsets.correlation);
    trace.quality.Set(Quality::kUnmatchedCorrelation, unmatched);
  }
  trace.quality.Add(Quality::kOverlappingRanges, ComputeRangeDepth(trace.ranges));
  uint64_t invalid_utf8 = 0;
  for (StringId id = 0; id < trace.strings.size(); ++id) {
    std::string_view text = trace.strings.View(id);
    if (IsValidUtf8(text)) continue;
    ++invalid_utf8;
    trace.strings.Replace(id, RepairUtf8(text));
  }
  trace.quality.Add(Quality::kInvalidUtf8, invalid_utf8);
}

}  // namespace tg
