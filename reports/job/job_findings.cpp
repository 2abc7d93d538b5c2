// The findings across ranks (docs/RULES.md, "Across ranks"). They need every rank, so they are
// evaluated when the job is reduced, not by the rule engine that sees one trace.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "reports/document/report_document.h"
#include "reports/job/job_internal.h"
#include "reports/report/findings_json.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/findings.h"

namespace tg::internal {

namespace {

// A straggler arrives last at half of the shared collectives or more, and its lateness is at
// least 1% of the job's latency; compute is imbalanced when the rank with the most exceeds the
// ranks' mean by 10%.
constexpr double kStragglerLastShare = 0.5;
constexpr double kStragglerMinShare = 0.01;
constexpr double kImbalanceRatio = 0.10;

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

double Iterations(const json& rank) { return std::max<double>(1, static_cast<double>(Int(rank, "iterations"))); }

void Straggler(const json& ranks, const CrossRank& cross, double latency_ms, std::vector<Finding>& out) {
  uint64_t most = 0;
  for (const RankAlignment& a : cross.ranks) most = std::max(most, a.last);
  if (most == 0 || cross.shared_collectives == 0) return;
  Finding f;
  uint64_t last = 0;
  double late_ms = 0, others_ms = 0;
  for (size_t i = 0; i < cross.ranks.size(); ++i) {
    const RankAlignment& a = cross.ranks[i];
    if (a.last != most) continue;
    const double it = Iterations(ranks[i]);
    last += a.last;
    late_ms += NsToMs(a.lateness_ns) / it;
    others_ms += NsToMs(a.others_wait_ns) / it;
    f.involved.push_back({"rank", std::to_string(Int(ranks[i], "rank")), a.last, a.lateness_ns,
                          "last at " + std::to_string(a.last) + " of " + std::to_string(a.shared) +
                              " shared collectives, " + Ms(NsToMs(a.lateness_ns) / it) +
                              " after the next rank per iteration; the others waited " +
                              Ms(NsToMs(a.others_wait_ns) / it) + " per iteration for it"});
  }
  const double last_share = static_cast<double>(last) / static_cast<double>(cross.shared_collectives);
  const double share = std::min(1.0, late_ms / latency_ms);
  if (last_share < kStragglerLastShare || share < kStragglerMinShare) return;
  f.id = "straggler";
  f.title = "A rank arrives last at collectives and the others wait for it";
  std::string names;
  for (const Involved& v : f.involved) names += (names.empty() ? "" : ", ") + v.name;
  f.summary = "Rank " + names + " arrives last at " + std::to_string(last) + " of " +
              std::to_string(cross.shared_collectives) + " shared collectives, " + Ms(late_ms) +
              " per iteration after the next rank; the other ranks wait " + Ms(others_ms) +
              " per iteration for it.";
  f.evidence.push_back({"last_arrival_share", last_share, kStragglerLastShare, ">=", "ratio"});
  f.evidence.push_back({"lateness_share", share, kStragglerMinShare, ">=", "ratio"});
  f.strategies = {"Find what delays the late rank before its collectives: more compute (see compute_imbalance), "
                  "its input pipeline or host-side stalls",
                  "Rebalance the work (layers, micro-batches, sequence lengths) across the ranks",
                  "Check the late rank's host and GPU: CPU contention, clocks or temperature, another GPU model"};
  f.amdahl = MakeAmdahl(share, kInfiniteSpeedup, "measured",
                        "the late rank arrives with the next-latest: its lateness leaves the job's iteration");
  f.priority = DerivePriority(Priority::kMedium, f);
  out.push_back(std::move(f));
}

void ComputeImbalance(const json& ranks, double latency_ms, std::vector<Finding>& out) {
  double sum = 0, most = -1;
  size_t n = 0, at = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::optional<double> c = Number(ranks[i], "compute_ms");
    if (!c) continue;
    sum += *c;
    ++n;
    if (*c > most) most = *c, at = i;
  }
  if (n < 2 || sum <= 0) return;
  const double mean = sum / static_cast<double>(n);
  const double ratio = most / mean - 1;
  if (ratio < kImbalanceRatio) return;
  Finding f;
  f.id = "compute_imbalance";
  f.title = "Compute is imbalanced across ranks";
  const std::string rank = std::to_string(Int(ranks[at], "rank"));
  f.summary = "Rank " + rank + " computes " + Ms(most) + " per iteration, " + std::to_string(std::lround(ratio * 100)) +
              "% over the ranks' mean of " + Ms(mean) + "; the others wait for it at the next collective.";
  f.evidence.push_back({"compute_imbalance_ratio", ratio, kImbalanceRatio, ">=", "ratio"});
  f.involved.push_back({"rank", rank, 1, static_cast<TimeNs>(std::llround(most * 1e6)),
                        "compute " + Ms(most) + " per iteration vs the mean " + Ms(mean)});
  f.strategies = {"Split layers, experts or sequences so that each rank computes the same",
                  "Look for work only this rank does (logging, evaluation, a larger shard)"};
  f.amdahl = MakeAmdahl(std::min(1.0, most / latency_ms), most / mean, "measured",
                        "the rank with the most compute does the ranks' mean");
  f.priority = DerivePriority(Priority::kMedium, f);
  out.push_back(std::move(f));
}

}  // namespace

json CrossRankFindings(const json& ranks, const CrossRank& cross, std::optional<double> job_latency_ms) {
  std::vector<Finding> findings;
  if (!job_latency_ms || *job_latency_ms <= 0) return json::array();  // P is a share of it
  Straggler(ranks, cross, *job_latency_ms, findings);
  ComputeImbalance(ranks, *job_latency_ms, findings);
  OrderFindings(findings);
  return FindingsJson(findings);
}

}  // namespace tg::internal
