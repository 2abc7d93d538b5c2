// Internals of Summarize() shared by its translation units (not a public API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracegate/analyzer/summary.h"

namespace tg::internal {

enum class ItemKind : uint32_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// One GPU activity in the sort buffer: 24 bytes. `ref` packs the table (2 low bits) and the row,
// so each GPU table may hold up to 2^30 rows (a trace that large would not fit in memory anyway).
struct GpuItem {
  TimeNs start, end;
  uint32_t ref;
  uint32_t lane;  // dense (device, stream) index, numbered in (device, stream) order
};

inline uint32_t MakeRef(ItemKind kind, size_t row) {
  return static_cast<uint32_t>(row << 2) | static_cast<uint32_t>(kind);
}
inline ItemKind RefKind(uint32_t ref) { return static_cast<ItemKind>(ref & 3u); }
inline size_t RefRow(uint32_t ref) { return ref >> 2; }

// Fills s.devices (busy/idle, gaps, and their causes when api_index and kernel_classes are
// given) and s.streams.
void SummarizeTimelines(const Trace& trace, const AnalyzeOptions& options, const ApiIndex* api_index,
                        const HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                        const SpanSource* iteration_spans, Summary& s);

// One hole in a device's busy union: [start, end), the item ending where it begins and the one
// starting where it ends.
struct GapItem {
  TimeNs start, end;
  uint32_t previous, next;
};

// Heap order: the "largest" gap is the longest; among equal lengths the earlier one.
inline bool LargerGap(const GapItem& a, const GapItem& b) {
  if (a.end - a.start != b.end - b.start) return a.end - a.start > b.end - b.start;
  return a.start < b.start;
}
// Keeps the `cap` largest gaps offered in `heap` (a heap whose front is the smallest kept).
void KeepLargest(std::vector<GapItem>& heap, size_t cap, const GapItem& g);

// The gap's times, its neighbours' names and the stream of the next work (no cause).
IdleGap DescribeGap(const Trace& t, const GapItem& g);
// "gemm", "Memcpy HtoD", "Memset": the display name of a GPU item.
std::string ItemLabel(const Trace& t, uint32_t ref);
// The stream a GPU item ran on.
int64_t ItemStream(const Trace& t, uint32_t ref);

// Decides each gap's cause (IdleCause) and fills d.idle_causes.
class IdleCauseFinder {
 public:
  // `classes`: ClassifyKernels' class of every kernel row (which ones are collectives).
  IdleCauseFinder(const Trace& t, const ApiIndex& index, const HostStages* stages,
                  const std::vector<KernelClass>& classes);
  // The cause of `g`; with `gap`, sets gap->cause and the evidence fields that decided it.
  IdleCause Decide(const GapItem& g, IdleGap* gap) const;
  // Every gap of the device: d.idle_causes, and the time before each stream's next work
  // (`streams`: the device's streams, sorted by stream id). With `spans` (sorted, disjoint) also
  // d.in_iterations and the `largest` longest gaps wholly inside one span. `gaps` in time order.
  void Attribute(const std::vector<GapItem>& gaps, DeviceSummary& d, StreamSummary* streams, size_t stream_count,
                 const std::vector<std::pair<TimeNs, TimeNs>>* spans = nullptr, size_t largest = 0) const;

 private:
  struct Wait {
    TimeNs start, end;
    std::string_view name;
  };
  bool Collective(uint32_t ref) const;
  // The name of a wait in progress during [s, e), or nullptr.
  const std::string_view* WaitDuring(TimeNs s, TimeNs e) const;
  const Trace& t_;
  const ApiIndex& index_;
  const HostStages* stages_;
  const std::vector<KernelClass>& classes_;
  std::vector<Wait> waits_;                       // by start
  std::vector<uint32_t> longest_;                 // longest_[i]: the wait of waits_[0..i] that ends last
};

}  // namespace tg::internal
