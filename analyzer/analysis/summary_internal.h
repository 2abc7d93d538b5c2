// Internals of Summarize() shared by its translation units (not a public API).
#pragma once

#include <cstddef>
#include <cstdint>
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

// Fills s.devices (busy/idle, gaps, and their causes when api_index is given) and s.streams.
void SummarizeTimelines(const Trace& trace, const AnalyzeOptions& options, const ApiIndex* api_index, Summary& s);

// One hole in a device's busy union: [start, end), the item ending before it and the one after.
struct GapItem {
  TimeNs start, end;
  uint32_t before, after;
};

// Decides each gap's cause (IdleCause) and fills d.idle_causes.
class IdleCauseFinder {
 public:
  IdleCauseFinder(const Trace& t, const ApiIndex& index);
  void Attribute(const std::vector<GapItem>& gaps, DeviceSummary& d) const;

 private:
  bool Collective(uint32_t ref) const;
  bool WaitDuring(TimeNs s, TimeNs e) const;
  const Trace& t_;
  const ApiIndex& index_;
  mutable std::vector<uint8_t> collective_name_;  // per StringId: 1 collective, 0 not, 2 not decided yet
  std::vector<std::pair<TimeNs, TimeNs>> waits_;  // union of wait intervals, disjoint, by start
};

}  // namespace tg::internal
