// The rules across the ranks of a job (docs/RULES.md, "Across ranks"): straggler, compute_imbalance
// and comm_exposed. They need every rank, so the job reducer (reports/job) evaluates them with
// EvaluateJobRules once its ranks are in, from what it keeps of each rank and the cross-rank
// analysis of their collectives (AnalyzeCrossRank), not the rule engine that sees one trace.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

namespace internal {

namespace {

std::string Ms(double ms) { return StrFormat("%.3f ms", ms); }

std::string Gbs(const JobCollective& c) {
  return c.busbw_gbs ? StrFormat("%.2f GB/s", *c.busbw_gbs) : "n/a (" + c.busbw_reason + ")";
}

// comm_ms x (1 - overlap_ratio): the rank's communication per iteration with no compute kernel
// beside it on the same device, summed over its devices; nullopt without the figures.
std::optional<double> Exposed(const JobRank& rank) {
  if (!rank.comm_ms || *rank.comm_ms <= 0) return rank.comm_ms;
  if (!rank.overlap_ratio) return std::nullopt;
  return *rank.comm_ms * (1 - *rank.overlap_ratio);
}

}  // namespace

size_t JobRuleContext::Count(const RuleDef& rule, std::string_view key) const {
  // A rules file's value is a finite number >= 0 (RulesConfig::Set); more than the ranks is all.
  return static_cast<size_t>(std::min(P(rule, key), 1e9));
}

// A straggler arrives last at `min_last_share` of the shared collectives or more, and its
// lateness is at least `min_share` of the job's latency.
void EvaluateStraggler(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const CrossRank& cross = c.cross();
  uint64_t most = 0;
  for (const RankAlignment& a : cross.ranks) most = std::max(most, a.last);
  if (most == 0 || cross.shared_collectives == 0) return;
  Finding f = StartFinding(rule);
  uint64_t last = 0;
  double late_ms = 0, others_ms = 0;
  for (size_t i = 0; i < cross.ranks.size(); ++i) {
    const RankAlignment& a = cross.ranks[i];
    if (a.last != most) continue;
    const double it = c.ranks()[i].iterations;
    last += a.last;
    late_ms += NsToMs(a.lateness_ns) / it;
    others_ms += NsToMs(a.others_wait_ns) / it;
    f.involved.push_back({"rank", std::to_string(c.ranks()[i].rank), a.last, a.lateness_ns,
                          "last at " + std::to_string(a.last) + " of " + std::to_string(a.shared) +
                              " shared collectives, " + Ms(NsToMs(a.lateness_ns) / it) +
                              " after the next rank per iteration; the others waited " +
                              Ms(NsToMs(a.others_wait_ns) / it) + " per iteration for it"});
  }
  const double last_share = static_cast<double>(last) / static_cast<double>(cross.shared_collectives);
  const double share = std::min(1.0, late_ms / c.latency_ms());
  const double min_last = c.P(rule, "min_last_share"), min_share = c.P(rule, "min_share");
  if (last_share < min_last || share < min_share) return;
  std::string names;
  for (const Involved& v : f.involved) names += (names.empty() ? "" : ", ") + v.name;
  f.summary = "Rank " + names + " arrives last at " + std::to_string(last) + " of " +
              std::to_string(cross.shared_collectives) + " shared collectives, " + Ms(late_ms) +
              " per iteration after the next rank; the other ranks wait " + Ms(others_ms) + " per iteration for it.";
  f.evidence.push_back(Ev("last_arrival_share", last_share, min_last, ">="));
  f.evidence.push_back(Ev("lateness_share", share, min_share, ">="));
  f.amdahl = MakeAmdahl(share, kInfiniteSpeedup, "measured",
                        "the late rank arrives with the next-latest: its lateness leaves the job's iteration");
  out.push_back(std::move(f));
}

// Compute is imbalanced when the rank with the most exceeds the ranks' mean by `threshold`.
void EvaluateComputeImbalance(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  double sum = 0, most = -1;
  size_t n = 0, at = 0;
  for (size_t i = 0; i < c.ranks().size(); ++i) {
    const std::optional<double> compute = c.ranks()[i].compute_ms;
    if (!compute) continue;
    sum += *compute;
    ++n;
    if (*compute > most) most = *compute, at = i;
  }
  if (n < 2 || sum <= 0) return;
  const double mean = sum / static_cast<double>(n);
  const double ratio = most / mean - 1;
  const double threshold = c.P(rule, "threshold");
  if (ratio < threshold) return;
  Finding f = StartFinding(rule);
  const std::string rank = std::to_string(c.ranks()[at].rank);
  f.summary = "Rank " + rank + " computes " + Ms(most) + " per iteration, " + std::to_string(std::lround(ratio * 100)) +
              "% over the ranks' mean of " + Ms(mean) + "; the others wait for it at the next collective.";
  f.evidence.push_back(Ev("compute_imbalance_ratio", ratio, threshold, ">="));
  f.involved.push_back({"rank", rank, 1, static_cast<TimeNs>(std::llround(most * 1e6)),
                        "compute " + Ms(most) + " per iteration vs the mean " + Ms(mean)});
  f.amdahl = MakeAmdahl(std::min(1.0, most / c.latency_ms()), most / mean, "measured",
                        "the rank with the most compute does the ranks' mean");
  out.push_back(std::move(f));
}

// Communication is exposed when the part of it compute could hide on the slowest rank,
// min(exposed, compute), is at least `min_share` of the job's latency. Involved: the `top_ranks`
// ranks with the most exposed communication and the `top_collectives` collectives with the most
// time.
void EvaluateCommExposed(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  if (!c.in().slowest || *c.in().slowest >= c.ranks().size()) return;
  const JobRank& slowest = c.ranks()[*c.in().slowest];
  const std::optional<double> exposed = Exposed(slowest);
  const std::optional<double> compute = slowest.compute_ms;
  if (!exposed || !compute || !(*exposed > 0)) return;
  // Overlap hides exposed communication only behind compute that exists (as the per-trace
  // communication rule bounds its P). The figures are summed over the rank's devices: per device
  // (the mean), they are at most the wall time they cover, so P never exceeds a wall-time share.
  const size_t devices = c.in().slowest_devices;
  const double per_device = static_cast<double>(std::max<size_t>(1, devices));
  const double latency_ms = c.latency_ms();
  const double hideable = std::min(*exposed, *compute) / per_device;
  const double exposed_share = std::min(1.0, *exposed / per_device / latency_ms);
  const double share = std::min(1.0, hideable / latency_ms);
  const double min_share = c.P(rule, "min_share");
  if (share < min_share) return;
  const std::string over = devices > 1 ? " per device (mean of its " + std::to_string(devices) + " devices)" : "";
  Finding f = StartFinding(rule);
  f.summary = "On rank " + std::to_string(slowest.rank) + ", the slowest, collectives run " +
              Ms(*exposed / per_device) + over + " per iteration with no compute beside them (" +
              std::to_string(std::lround(exposed_share * 100)) + "% of the job's " + Ms(latency_ms) +
              " iteration); its " + Ms(*compute / per_device) + " of compute could hide " + Ms(hideable) + " of it.";
  f.evidence.push_back(Ev("exposed_comm_share", exposed_share, min_share, ">="));
  f.evidence.push_back(Ev("hideable_comm_share", share, min_share, ">="));
  std::vector<std::pair<double, size_t>> by_exposed;
  for (size_t i = 0; i < c.ranks().size(); ++i)
    if (const std::optional<double> e = Exposed(c.ranks()[i]); e && *e > 0) by_exposed.emplace_back(*e, i);
  std::stable_sort(by_exposed.begin(), by_exposed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (by_exposed.size() > c.Count(rule, "top_ranks")) by_exposed.resize(c.Count(rule, "top_ranks"));
  for (const auto& [e, i] : by_exposed) {
    const JobRank& r = c.ranks()[i];
    f.involved.push_back({"rank", std::to_string(r.rank), r.collectives, static_cast<TimeNs>(std::llround(e * 1e6)),
                          "exposed " + Ms(e) + " per iteration of " + Ms(r.comm_ms.value_or(0)) +
                              " communication, summed over its devices (" +
                              std::to_string(std::lround(r.overlap_ratio.value_or(0) * 100)) + "% overlapped)"});
  }
  std::string largest;
  const std::vector<JobCollective>& collectives = c.in().collectives;
  for (size_t i = 0; i < collectives.size() && i < c.Count(rule, "top_collectives"); ++i) {
    const JobCollective& col = collectives[i];
    const std::string what =
        col.collective + (col.message_bytes ? " of " + std::to_string(*col.message_bytes) + " B" : "");
    f.involved.push_back({"collective", col.collective, col.count,
                          static_cast<TimeNs>(std::llround(col.total_ms * 1e6)),
                          what + " on " + std::to_string(col.ranks) + " ranks, mean " + Ms(col.mean_ms) +
                              " per call, bus bandwidth " + Gbs(col)});
    if (i == 0) largest = what + " reaches " + Gbs(col) + " bus bandwidth";
  }
  // The table's second strategy (fewer, larger collectives) names the collective with the most
  // time, whose bus bandwidth says whether its messages are latency-bound.
  f.strategies.at(1) += largest.empty() ? std::string(": small messages are latency-bound")
                                        : ": the collective with the most time, " + largest +
                                              "; a bus bandwidth far below the link's means latency-bound messages";
  f.amdahl = MakeAmdahl(share, kInfiniteSpeedup, "measured",
                        "the slowest rank's collectives overlap compute completely; at most min(exposed "
                        "communication, compute) is hidden");
  // The GPU time where the slowest rank's collectives run alone: the time its own communication
  // finding claims (the job report marks the two in each other's overlaps), not located here.
  f.claim = SpaceClaim(ClaimSpace::kGpu, share);
  out.push_back(std::move(f));
}

}  // namespace internal

}  // namespace tg
