// Across the ranks of one job (docs/RULES.md, "Across ranks"), from each rank's collective calls
// only: the same collective found on every rank, the ranks' clocks aligned on the completions of
// the collectives they share, the time each rank's collectives waited for the last rank to
// arrive, and which rank arrives last how often. Implemented in analyzer/ranks/ (tracegate_ranks);
// it needs no trace, only the calls (a rank's trace gives them as CollectiveCall, communication.h;
// a per-rank report as ranks[].collective_calls).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/types.h"

namespace tg {

// A collective call as the cross-rank step keeps it: 48 bytes, names interned in the `names`
// given to AnalyzeCrossRank (a job keeps every rank's calls until its ranks are all in).
struct RankCall {
  uint32_t name = 0;          // index into names
  uint32_t group = 0;         // index into names; 0 ("") = unknown
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
  TimeNs wait_ns = 0;         // over its shared collectives: the last arrival minus its own arrival
  double wait_ms = 0;         // wait_ns per iteration, ms
  uint64_t shared = 0;        // its collectives found on at least one other rank
  uint64_t last = 0;          // of those, how many it reached strictly after every other rank
  TimeNs lateness_ns = 0;     // summed over those: its arrival minus the next-latest arrival
  TimeNs others_wait_ns = 0;  // summed over those: the other ranks' waits for it
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

// The matching and the clocks without the figures, for the job's replay (job_replay.h): each
// collective found on two or more ranks, as AnalyzeCrossRank matches it.
struct MatchedCollective {
  std::vector<std::pair<size_t, size_t>> calls;  // (index into the input, index of the call), one per rank
  // An all-reduce, all-gather, reduce-scatter or all-to-all: no rank leaves it before every rank
  // has arrived.
  bool every_rank_waits = false;
  // One of those whose kernels do not all overlap once the clocks are aligned (CrossRank::doubtful).
  bool doubtful = false;
};
struct CrossRankMatch {
  std::vector<MatchedCollective> collectives;
  std::vector<std::optional<TimeNs>> offsets;  // as RankAlignment::clock_offset_ns, in the input's order
};
CrossRankMatch MatchAcrossRanks(const std::vector<std::string>& names, const std::vector<RankCalls>& ranks);

}  // namespace tg
