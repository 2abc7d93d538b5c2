// Findings replayed (issue 31): a finding that is a speedup of located work (its claim's parts
// all located in the gpu, idle or post space, its Amdahl estimate applicable with S > 1) becomes
// a located change for the replay (tracegate/analyzer/replay.h): its gpu parts a GPU located
// speedup with its S, its idle and post parts a host located speedup with its S (the host work
// on the iterations' marker thread in those instants runs S times faster: an idle instant is
// modelled as the host work behind it getting faster). Several findings make one change, each
// instant taking the largest S of those claiming it, as the combined estimate gives each unit of
// claimed time to the finding with the largest S (docs/PREDICTION.md, "Findings replayed").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/iteration_idle.h"
#include "tracegate/analyzer/replay.h"
#include "tracegate/analyzer/status.h"

namespace tg {

namespace internal {
class ApiIndex;
}  // namespace internal

// Why the finding is not a speedup of located work the replay can make, one line; "" when it is.
std::string FindingNotReplayable(const Finding& f);

// Adds the finding's located speedups to `change` (InvalidInput with the reason when it is not
// replayable; `ref` names it in the message).
Status AddFindingChange(const Finding& f, const std::string& ref, ReplayChange* change);

struct FindingsChange {
  std::vector<size_t> replayed;  // indexes into the findings, in list order
  ReplayChange change;           // their located speedups, together
  struct LeftOut {
    size_t finding;      // its index
    std::string reason;  // FindingNotReplayable
  };
  std::vector<LeftOut> left_out;  // the findings asked for that are not replayable
};

// The findings named by `refs` (FindingRefs), or, with the single ref "all", every finding:
// the replayable ones in one change, the others left out with why. InvalidInput for an unknown
// ref (the line lists the refs that exist), a ref given twice, a named finding that is not
// replayable (the reason), or nothing replayable at all.
Status FindingsReplayChange(const std::vector<Finding>& findings, const std::vector<std::string>& refs,
                            FindingsChange* out);

// The replay's estimate of every finding's gain and of the combined one (analyze --replay-findings):
// each replayable finding's change replayed alone (Finding::replay, the same figures as `predict
// --finding REF`), the others given their replay_reason, and so are those whose replay gives no
// figure (NothingCovered, LongerIterationsCaution); the combined estimate's, the changes of the
// findings with a figure at once (`predict --finding A --finding B ...` with their refs; the same
// as `--finding all` when every replayable finding has one). `index`: the trace's correlation
// index (null: built here). An error only for what no finding could cause (no kept iterations).
Status ReplayFindingGains(const Trace& trace, const IterationAnalysis& iterations, const internal::ApiIndex* index,
                          std::vector<Finding>* findings, CombinedEstimate* combined);

// Why a findings' replay re-timed nothing (ReplayResult::located_gpu_ns and located_host_ns
// both 0: the claimed instants hold no GPU work and no host time between calls on the marker
// thread), "" when it re-timed something. Such a replay predicts nothing: no figure is given.
std::string NothingCovered(const ReplayResult& r);

// The idle findings' instants (AnalysisConfig::locate_idle_claims): their idle claim parts,
// unlocated as the rules make them, get the iterations' idle pieces (AttributeIterationIdle's,
// in time order) they measure: idle_gaps the idle phase's claimable pieces (not device_backlog,
// not graph_capture), launch_bound and sync_in_loop the idle phase's host_launch pieces,
// host_bound the pieces of host work (host_compute, jit_compile, host_sync, host_idle), pre and
// post included. A part that already has instants, and every other finding, is left as it is.
// Returns the parts it located, (finding, part), so a report can drop them again after the replay.
std::vector<std::pair<size_t, size_t>> LocateIdleClaims(const std::vector<IdlePiece>& pieces,
                                                        std::vector<Finding>* findings);

}  // namespace tg
