// Across the ranks of one job (docs/RULES.md, "Across ranks"): the same collective found on every
// rank, the ranks' clocks aligned on the completions of the collectives they share, the time each
// rank's collectives waited for the last rank to arrive, and which rank arrives last how often.
//
// Works on each rank's collective calls only (what a per-rank report keeps as
// ranks[].collective_calls), so a job is analysed from its per-rank reports without the traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg {

struct CollectiveCall {
  std::string name;    // "allreduce", "ncclDevKernel_AllGather_RING_LL", ...
  std::string group;   // the process group ("" when unknown)
  int64_t seq = -1;    // the group's sequence number; < 0 when unknown
  TimeNs start_ns = 0, end_ns = 0;  // on the rank's own clock
  int64_t bytes = 0;
};

struct RankCalls {
  int64_t rank = 0;
  std::vector<CollectiveCall> calls;  // in the rank's order (by start)
  double iterations = 1;              // kept iterations: waits are per iteration (at least 1)
};

struct RankAlignment {
  // Added to the rank's times to put them on the reference rank's clock (the first rank of the
  // input, or of its connected set of ranks); nullopt when the rank shares no collective with an
  // aligned rank.
  std::optional<TimeNs> clock_offset_ns;
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
  std::string matched_by;            // "seq", "order", "seq and order" or "" (none matched)
};

// Matching: a call with a group and seq >= 0 is the collective (group, seq); any other is the
// k-th call of its (group, name) on the rank. Offsets: from the first rank, along the ranks that
// share collectives (in input order), each the lower median over the shared collectives of
// (end on the aligned rank - end on this rank). Arrival = aligned start.
CrossRank AnalyzeCrossRank(const std::vector<RankCalls>& ranks);

}  // namespace tg
