// communication: collective (NCCL/RCCL) kernels take a large share of the iteration's wall time,
// or the devices sit idle next to them. Collectives move data between ranks: they are not
// material for merging, fusing or a compiler, and the remedy is to hide them behind compute.
#include <algorithm>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

void EvaluateCommunication(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  if (c.NoDeviceActivity()) return;
  const KernelTable& k = c.trace().kernels;
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  auto is_collective = [](KernelClass x) { return x == KernelClass::kCommunication; };
  std::map<std::string, Tally> groups;
  KernelTimeWhere(c, is_collective, &groups);
  if (groups.empty()) return;
  auto collective = [&](size_t i) { return c.KernelKept(i) && is_collective(cls[i]); };
  auto compute = [&](size_t i) { return c.KernelKept(i) && !is_collective(cls[i]); };
  // Wall times inside the iterations' spans, as every share the rules print (docs/RULES.md).
  const std::vector<Interval> collective_iv = WallIntervalsWhere(c, k, collective);
  const std::vector<Interval> compute_iv = WallIntervalsWhere(c, k, compute);
  const TimeNs comm_ns = LengthOf(collective_iv);
  const double comm_share = c.Share(comm_ns);
  // The iteration's idle time in gaps next to a collective: the idle phase times the share of the
  // devices' gap time attributed to communication (as launch_bound scales by host_launch).
  const std::optional<double> gap_share = c.IdleCauseShare(IdleCause::kCommunication);
  const double comm_idle = c.PhaseRatio(Phase::kIdle) * gap_share.value_or(0);
  const double min_share = c.P(rule, "min_share"), min_idle = c.P(rule, "min_idle_share");
  if (!(comm_share >= min_share || comm_idle >= min_idle)) return;

  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("collective_wall_ratio", comm_share, min_share, ">="));
  if (gap_share) f.evidence.push_back(Ev("communication_idle_ratio", comm_idle, min_idle, ">="));
  // Collective time with no other kernel running beside it can be hidden behind compute, but at
  // most as much as there is compute to hide it behind: P = min(exposed collective, compute).
  std::vector<Interval> exposed_iv = SubtractUnions(collective_iv, compute_iv);
  const TimeNs compute_ns = LengthOf(compute_iv), exposed_ns = LengthOf(exposed_iv);
  const TimeNs hidden_ns = std::min(exposed_ns, compute_ns);
  f.summary = StrFormat("Collective (NCCL/RCCL) kernels run during %.1f%% of the iteration's wall time, %.1f%% of it "
                        "with no compute beside them, and the GPU idles %s of the iteration in gaps next to a "
                        "collective: the devices wait on communication.",
                        comm_share * 100, c.Share(exposed_ns) * 100,
                        gap_share ? StrFormat("%.1f%%", comm_idle * 100).c_str() : "an unknown share");
  f.involved = TopInvolved(groups, "kernel", kTopInvolved);  // the collectives, by time
  if (c.in().summary)
    for (const DeviceSummary& d : c.in().summary->devices)
      for (const IdleGap& gap : JudgedCauses(d).largest[static_cast<size_t>(IdleCause::kCommunication)])
        f.involved.push_back(GapInvolved(c, d, gap));
  f.amdahl = MakeAmdahl(c.Share(hidden_ns), kInfiniteSpeedup, "measured",
                        "collectives overlap compute completely; at most min(exposed collective, compute) wall time "
                        "is hidden");
  // It claims GPU time where a collective runs alone (the time hiding it would save).
  f.claim = LocatedClaim(c, std::move(exposed_iv), f.amdahl.share, true);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
