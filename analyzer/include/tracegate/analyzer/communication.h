// Communication of one trace (one rank): its collective kernels grouped into a per-collective
// table with message sizes and NCCL's algorithm / bus bandwidths, and the rank's communication
// figures (communication and compute time per iteration, their overlap, the collective calls in
// time order for the cross-rank analysis), and the analysis across the ranks of a job. Collectives are the kernels ClassifyKernels puts in
// KernelClass::kCommunication (metadata, else the name). docs/RULES.md ("Communication") gives
// every formula.
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

// Across the ranks of one job (docs/RULES.md, "Across ranks"), from each rank's collective calls
// only: the same collective found on every rank, the ranks' clocks aligned on the completions of
// the collectives they share, the time each rank's collectives waited for the last rank to
// arrive, and which rank arrives last how often. Implemented in analyzer/ranks/.
// A collective call as the cross-rank step keeps it: 48 bytes, names interned in the `names`
// given to AnalyzeCrossRank (a job keeps every rank's calls until its ranks are all in).
struct RankCall {
  uint32_t name = 0;   // index into names
  uint32_t group = 0;  // index into names; 0 ("") = unknown
  int64_t seq = kUnknownId;   // < 0: unknown
  int64_t step = kUnknownId;  // < 0: unknown (CollectiveCall::step)
  TimeNs start_ns = 0, end_ns = 0;
  // Inside one of the rank's kept iterations, or the rank's report does not say: its wait and
  // lateness count in the per-iteration figures.
  bool counted = true;
};

struct RankCalls {
  int64_t rank = 0;
  std::vector<RankCall> calls;  // in the rank's order (by start)
  double iterations = 1;        // kept iterations: waits are per iteration (at least 1)
};

struct RankAlignment {
  // Added to the rank's times to put them on the reference rank's clock (the first rank of the
  // input, or of its connected set of ranks); nullopt when the rank shares no collective with an
  // aligned rank.
  std::optional<TimeNs> clock_offset_ns;
  // The rank (index into the input) whose clock that is: the first rank of the input among the
  // ranks sharing collectives with this one, directly or through others. Ranks of another set
  // (two jobs in one directory, formats whose process groups are named apart) are on another
  // clock; SIZE_MAX without an offset.
  size_t clock_reference = SIZE_MAX;
  TimeNs wait_ns = 0;        // over its shared collectives: the last arrival minus its own arrival
  double wait_ms = 0;        // wait_ns per iteration, ms
  uint64_t shared = 0;       // its collectives found on at least one other rank
  uint64_t last = 0;         // of those, how many it reached strictly after every other rank
  TimeNs lateness_ns = 0;    // summed over those: its arrival minus the next-latest arrival
  TimeNs others_wait_ns = 0; // summed over those: the other ranks' waits for it
};

struct CrossRank {
  std::vector<RankAlignment> ranks;  // in the input's order
  uint64_t shared_collectives = 0;   // collectives found on two or more ranks
  // How they were matched: "seq", "step", "order", those used joined by " and ", or "" (none).
  std::string matched_by;
  // Shared all-reduces, all-gathers, reduce-scatters and all-to-alls whose kernels do not all
  // overlap once the clocks are aligned: none can end before every rank has arrived, so the
  // match is wrong (a call missing on a rank without sequence numbers) or the clocks drift. They
  // count in shared_collectives and the alignment, not in waits or late arrivals.
  uint64_t doubtful = 0;
  // Runs of calls matched by order, (group, name) or (group, name, step), whose number of calls
  // differs between the ranks that have them: a call missing on one rank shifts the pairs after
  // it (in a run of one call a step, only that step's call goes unmatched).
  uint64_t uneven = 0;
};

// Matching: a call with a group and seq >= 0 is the collective (group, seq). Any other is the
// k-th call of its (group, name) within its step when every rank with such calls has a step on
// some of them (calls without one: the k-th of those), else the k-th call of its (group, name)
// on the rank. Offsets: from the first rank, along the ranks that share collectives (in input
// order), each the lower median over the shared collectives of (end on the aligned rank - end on
// this rank). Arrival = aligned start. `names`: the text of the calls' name and group ids.
CrossRank AnalyzeCrossRank(const std::vector<std::string>& names, const std::vector<RankCalls>& ranks);

}  // namespace tg
