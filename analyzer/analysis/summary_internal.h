// Internals of Summarize() shared by its translation units (not a public API).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/host/host_model.h"
#include "analyzer/util/help_board.h"
#include "tracegate/analyzer/summary.h"

namespace tg::internal {
class HostModel;
}

namespace tg::internal {

enum class ItemKind : uint32_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// One GPU activity in the timelines' sort buffer, a ref: 4 bytes that pack the table (2 low bits)
// and the row, so each GPU table may hold up to 2^30 rows (a trace that large would not fit in
// memory anyway); its times are read from the table.
inline uint32_t MakeRef(ItemKind kind, size_t row) {
  return static_cast<uint32_t>(row << 2) | static_cast<uint32_t>(kind);
}
inline ItemKind RefKind(uint32_t ref) { return static_cast<ItemKind>(ref & 3u); }
inline size_t RefRow(uint32_t ref) { return ref >> 2; }

// Fills s.devices (busy/idle, gaps, and their causes when api_index and kernel_classes are
// given), s.streams, s.gpu_busy_merged and s.kernels_by_start; `busy_known` (may be null) is called once
// the last two are final, before the gaps' causes are attributed (summary.h, SummarizeInto).
void SummarizeTimelines(const Trace& trace, const AnalyzeOptions& options, const ApiIndex* api_index,
                        const HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                        const SpanSource* iteration_spans, const HostSource* host,
                        const std::function<void()>* busy_known, Summary& s, HelpBoard* help = nullptr);

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

// A piece of GPU-idle time with one cause: `frame` is the host event that decided a host cause
// (HostModel::kNoEvent otherwise).
struct CausePiece {
  TimeNs start, end;
  IdleCause cause;
  uint32_t frame;
};
// Per API call row: 1 when a kernel, memcpy or memset of its process carries its correlation id.
// `before_launch` (may be null): how many of those GPU activities start before their call does.
std::vector<uint8_t> LaunchedCalls(const Trace& t, const ApiIndex& index, uint64_t* before_launch);

inline constexpr uint32_t kNoItem = UINT32_MAX;  // no GPU item on that side of an idle interval

// Splits idle time into caused pieces (idle_cause.h) and fills d.idle_causes.
class IdleCauseFinder {
 public:
  // `classes`: ClassifyKernels' class of every kernel row (which ones are collectives). `host`: the
  // host model (may be null: every host piece is then host_launch, or host_stage in a stage).
  IdleCauseFinder(const Trace& t, const ApiIndex& index, const HostStages* stages,
                  const std::vector<KernelClass>& classes, const HostModel* host, const AnalyzeOptions& options);
  // The pieces of [s, e), where no GPU work runs, between `previous` and `next` (GPU item refs, or
  // kNoItem), appended to `out` in time order; they cover [s, e) exactly. `thread`: the host
  // thread to read when neither side has a launch call (HostModel::kNoThread: none).
  void Split(TimeNs s, TimeNs e, uint32_t previous, uint32_t next, int32_t thread, std::vector<CausePiece>* out) const;
  // The cause with the most time in `g` (ties: the earlier cause); with `gap`, sets gap->cause,
  // gap->cause_ns and the evidence that decided it, and names the host frames inside it.
  IdleCause Decide(const GapItem& g, IdleGap* gap) const;
  // Fills `gap` (cause, cause_ns, evidence, host frames) from the pieces of one interval.
  // `thread`: the thread read when neither side has a launch call (as Split's).
  void Describe(TimeNs s, TimeNs e, uint32_t previous, uint32_t next, const std::vector<CausePiece>& pieces,
                IdleGap* gap, int32_t thread = -1) const;
  // A device's gaps to their causes: d.idle_causes, and the time before each stream's next work
  // (`streams`: the device's streams, sorted by stream id); with `spans` (sorted, disjoint) also
  // d.in_iterations and the `largest` longest gaps wholly inside one span. AttributeRun adds up
  // the gaps a GapSweep calls its argument with (in time order: the gaps are swept, not stored)
  // into GapTotals; FinishAttribution writes the totals of all of them. Runs of consecutive gaps, each added
  // up on its own (on any thread, each with a finder of its own) and joined with Join in any
  // order, give what one run over all the gaps gives: sums, and the longest gaps under a total
  // order (LargerGap: a device's gaps start at distinct times).
  struct GapTotals {
    std::array<uint64_t, kIdleCauseCount> gaps{}, in_gaps{};
    std::array<TimeNs, kIdleCauseCount> ns{}, in_ns{};
    TimeNs in_iterations_ns = 0;
    std::array<std::vector<GapItem>, kIdleCauseCount> largest, in_largest;  // heaps (KeepLargest)
    std::vector<GapItem> in_overall;                                        // heap
    std::vector<std::array<TimeNs, kIdleCauseCount>> stream_ns;             // per stream of the device
    void Join(const GapTotals& o, size_t largest_cap);
  };
  using GapSweep = std::function<void(const std::function<void(const GapItem&)>&)>;
  // Adds the gaps that `gaps` sweeps (in time order) to `totals`; `streams`: the device's, by
  // stream id (read for their ids only).
  void AttributeRun(const GapSweep& gaps, const StreamSummary* streams, size_t stream_count,
                    const std::vector<std::pair<TimeNs, TimeNs>>* spans, size_t largest, GapTotals& totals) const;
  // Writes the totals of all of a device's gaps to d and its streams, with its longest gaps
  // described.
  void FinishAttribution(const GapTotals& totals, DeviceSummary& d, StreamSummary* streams, size_t stream_count,
                         const std::vector<std::pair<TimeNs, TimeNs>>* spans) const;
  // The row of the call that launched a GPU item, or -1.
  int64_t LaunchCall(uint32_t ref) const;
  const HostModel* host() const { return host_; }
  // The host model, when it comes after the finder (Summarize's HostSource).
  void set_host(const HostModel* host) { host_ = host; }

 private:
  struct Wait {
    TimeNs start, end;
    std::string_view name;
  };
  bool Collective(uint32_t ref) const;
  // The name of a wait in progress during [s, e), or nullptr.
  const std::string_view* WaitDuring(TimeNs s, TimeNs e) const;
  IdleCause QueuedCause(TimeNs s, TimeNs e, uint32_t previous, uint32_t next, int64_t call) const;
  const Trace& t_;
  const ApiIndex& index_;
  const HostStages* stages_;
  const std::vector<KernelClass>& classes_;
  const HostModel* host_;
  AnalyzeOptions options_;
  std::vector<Wait> waits_;                       // by start
  std::vector<uint32_t> longest_;                 // longest_[i]: the wait of waits_[0..i] that ends last
  mutable std::vector<CausePiece> scratch_;       // Decide's pieces (one thread uses a finder at a time)
  mutable HostModel::Hint hint_;                  // where the last host split searched (HostModel::Split)
};

}  // namespace tg::internal
