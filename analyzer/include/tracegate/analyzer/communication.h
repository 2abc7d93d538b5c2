// Communication of one trace (one rank): its collective kernels grouped into a per-collective
// table with message sizes and NCCL's algorithm / bus bandwidths, and the rank's communication
// figures (communication and compute time per iteration, their overlap, the collective calls in
// time order for the cross-rank analysis; that analysis, across the ranks of a job, is in
// cross_rank.h). Collectives are the kernels ClassifyKernels puts in KernelClass::kCommunication
// (metadata, else the name). docs/RULES.md ("Communication") gives every formula.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/model.h"

namespace tg {

// Bytes of one element of a PyTorch dtype as the collective metadata spells it ("Float",
// "BFloat16", "Long", ...); 0 for a name we do not know.
int64_t DtypeBytes(std::string_view dtype);
// NCCL's bus-bandwidth factor (nccl-tests PERFORMANCE.md) for PyTorch's collective name
// ("allreduce", "_allgather_base", "reduce_scatter_tensor", ...) and group size n: all-reduce
// 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, reduce, send, recv 1.
// nullopt for another collective or n < 1.
std::optional<double> BusBandwidthFactor(std::string_view collective, int64_t group_size);

// One row per (collective name, dtype, message bytes, group size).
struct CollectiveStat {
  std::string collective;  // metadata's name, or the kernel's short name without metadata
  std::string dtype;       // "" = unknown
  std::optional<int64_t> bytes;  // max(In, Out msg nelems) x dtype size
  std::string bytes_reason;      // why bytes is unknown
  int32_t group_size = 0;        // 0 = unknown
  uint64_t count = 0;
  TimeNs total_ns = 0;           // summed kernel durations
  std::optional<double> algbw_gbs, busbw_gbs;  // bytes x count / total_ns; algbw x factor
  std::string algbw_reason, busbw_reason;
};

// Fills a row's algbw (bytes x count / total_ns) and busbw (algbw x BusBandwidthFactor), or their
// reasons, from its bytes, count, total_ns and group size: the one place the bandwidths are
// computed, for a trace's table and a job's alike.
void FillCollectiveBandwidths(CollectiveStat& s);

// A collective kernel as the cross-rank analysis reads it (a per-rank report keeps these as
// ranks[].collective_calls, so a job is analysed from its per-rank reports without the traces).
struct CollectiveCall {
  std::string name;   // the collective's name (metadata), else the kernel's short name
  std::string group;  // process group name; "" = unknown
  int64_t seq = kUnknownId;         // the group's sequence number; < 0 when unknown
  TimeNs start_ns = 0, end_ns = 0;  // on the rank's own clock
  std::optional<int64_t> bytes;
  // The kept iteration whose launch it is (index into IterationAnalysis::iterations), -1 outside
  // every kept one; and that iteration's step, the number its marker's name ends with
  // ("ProfilerStep#12": 12; the same on every rank of a job), < 0 when the name has none.
  int32_t iteration = -1;
  int64_t step = kUnknownId;
  // Its row in the trace's kernels (the job's replay couples it to the other ranks' calls); not
  // kept in a report.
  uint32_t kernel = UINT32_MAX;
};

struct RankCommunication {
  std::optional<int64_t> rank;  // distributedInfo.rank
  std::string rank_reason;
  std::string file;             // the trace's source path
  // Per kept iteration (means): unions of communication / other kernels per device, inside the
  // iteration spans, summed over devices. nullopt without iterations.
  std::optional<double> comm_ms, compute_ms;
  std::string comm_reason;
  std::optional<double> overlap_ratio;  // time compute runs beside communication / communication
  std::string overlap_reason;
  std::vector<CollectiveCall> calls;    // every collective kernel, by start
};

struct CommunicationAnalysis {
  std::vector<CollectiveStat> collectives;  // by total time, descending, then name
  uint64_t collective_kernels = 0, with_metadata = 0;
  RankCommunication rank;
};

// `kernel_classes`: ClassifyKernels; `kernels_by_start`: kernel rows by start time (the
// summary's), or empty to order them here.
CommunicationAnalysis AnalyzeCommunication(const Trace& trace, const IterationAnalysis& iterations,
                                           const std::vector<KernelClass>& kernel_classes,
                                           const std::vector<uint32_t>& kernels_by_start);

}  // namespace tg
