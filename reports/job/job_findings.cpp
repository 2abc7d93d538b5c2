// The findings across ranks (docs/RULES.md, "Across ranks"). They need every rank, so they are
// evaluated when the job is reduced, not by the rule engine that sees one trace.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
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
// Communication is exposed when the part of it compute could hide on the slowest rank,
// min(exposed, compute), is at least 5% of the job's latency. Involved: the ranks with the most
// exposed communication and the collectives with the most time, a few of each.
constexpr double kExposedMinShare = 0.05;
constexpr size_t kExposedTopRanks = 3, kExposedTopCollectives = 3;

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

std::string Gbs(const json& row, const char* key) {
  const std::optional<double> v = Number(row, key);
  if (!v) return "n/a (" + Text(row, std::string(key) + "_reason") + ")";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB/s", *v);
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

// comm_ms x (1 - overlap_ratio): the rank's communication per iteration with no compute kernel
// beside it on the same device, summed over its devices; nullopt without the figures.
std::optional<double> Exposed(const json& rank) {
  const std::optional<double> comm = Number(rank, "comm_ms");
  if (!comm || *comm <= 0) return comm;
  const std::optional<double> overlap = Number(rank, "overlap_ratio");
  if (!overlap) return std::nullopt;
  return *comm * (1 - *overlap);
}

void CommExposed(const json& ranks, size_t slowest, size_t devices, const json& collectives, double latency_ms,
                 std::vector<Finding>& out) {
  const std::optional<double> exposed = Exposed(ranks[slowest]);
  const std::optional<double> compute = Number(ranks[slowest], "compute_ms");
  if (!exposed || !compute || !(*exposed > 0)) return;
  // Overlap hides exposed communication only behind compute that exists (as the per-trace
  // communication rule bounds its P). The figures are summed over the rank's devices: per device
  // (the mean), they are at most the wall time they cover, so P never exceeds a wall-time share.
  const double per_device = static_cast<double>(std::max<size_t>(1, devices));
  const double hideable = std::min(*exposed, *compute) / per_device;
  const double exposed_share = std::min(1.0, *exposed / per_device / latency_ms);
  const double share = std::min(1.0, hideable / latency_ms);
  if (share < kExposedMinShare) return;
  const std::string over = devices > 1 ? " per device (mean of its " + std::to_string(devices) + " devices)" : "";
  Finding f;
  f.id = "comm_exposed";
  f.title = "Communication is not hidden behind compute";
  const std::string rank = std::to_string(Int(ranks[slowest], "rank"));
  f.summary = "On rank " + rank + ", the slowest, collectives run " + Ms(*exposed / per_device) + over +
              " per iteration with no compute beside them (" + std::to_string(std::lround(exposed_share * 100)) +
              "% of the job's " + Ms(latency_ms) + " iteration); its " + Ms(*compute / per_device) +
              " of compute could hide " + Ms(hideable) + " of it.";
  f.evidence.push_back({"exposed_comm_share", exposed_share, kExposedMinShare, ">=", "ratio"});
  f.evidence.push_back({"hideable_comm_share", share, kExposedMinShare, ">=", "ratio"});
  std::vector<std::pair<double, size_t>> by_exposed;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (const std::optional<double> e = Exposed(ranks[i]); e && *e > 0) by_exposed.emplace_back(*e, i);
  std::stable_sort(by_exposed.begin(), by_exposed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (by_exposed.size() > kExposedTopRanks) by_exposed.resize(kExposedTopRanks);
  for (const auto& [e, i] : by_exposed)
    f.involved.push_back({"rank", std::to_string(Int(ranks[i], "rank")),
                          static_cast<uint64_t>(Int(ranks[i], "collectives")),
                          static_cast<TimeNs>(std::llround(e * 1e6)),
                          "exposed " + Ms(e) + " per iteration of " + Ms(Number(ranks[i], "comm_ms").value_or(0)) +
                              " communication, summed over its devices (" +
                              std::to_string(std::lround(Number(ranks[i], "overlap_ratio").value_or(0) * 100)) +
                              "% overlapped)"});
  std::string largest;
  for (size_t i = 0; i < collectives.size() && i < kExposedTopCollectives; ++i) {
    const json& c = collectives[i];
    const std::optional<double> bytes = Number(c, "message_bytes");
    const std::string what =
        Text(c, "collective") + (bytes ? " of " + std::to_string(Int(c, "message_bytes")) + " B" : "");
    f.involved.push_back({"collective", Text(c, "collective"), static_cast<uint64_t>(Int(c, "count")),
                          static_cast<TimeNs>(std::llround(Number(c, "total_ms").value_or(0) * 1e6)),
                          what + " on " + std::to_string(Int(c, "ranks")) + " ranks, mean " +
                              Ms(Number(c, "mean_ms").value_or(0)) + " per call, bus bandwidth " +
                              Gbs(c, "busbw_gbs")});
    if (i == 0) largest = what + " reaches " + Gbs(c, "busbw_gbs") + " bus bandwidth";
  }
  f.strategies = {
      "Overlap communication with compute: bucket gradients (DDP bucket_cap_mb) or prefetch parameters (FSDP "
      "forward/backward prefetch) so each collective starts while compute still runs",
      "Use fewer, larger collectives (larger buckets, coalesced calls)" +
          (largest.empty() ? std::string(": small messages are latency-bound")
                           : ": the collective with the most time, " + largest +
                                 "; a bus bandwidth far below the link's means latency-bound messages"),
      "Run collectives on their own stream (async_op=True, a dedicated NCCL stream) so compute and communication "
      "run together, and wait only where the result is needed"};
  f.amdahl = MakeAmdahl(share, kInfiniteSpeedup, "measured",
                        "the slowest rank's collectives overlap compute completely; at most min(exposed "
                        "communication, compute) is hidden");
  // The GPU time where the slowest rank's collectives run alone: the time its own communication
  // finding claims (MarkSharedClaims), not located here.
  f.claim = {ClaimPart{ClaimSpace::kGpu, share, {}}};
  f.priority = DerivePriority(Priority::kMedium, f);
  out.push_back(std::move(f));
}

}  // namespace

json CrossRankFindings(const json& ranks, const CrossRank& cross, std::optional<double> job_latency_ms,
                       std::optional<size_t> slowest, size_t slowest_devices, const json& collectives) {
  std::vector<Finding> findings;
  if (!job_latency_ms || *job_latency_ms <= 0) return json::array();  // P is a share of it
  Straggler(ranks, cross, *job_latency_ms, findings);
  ComputeImbalance(ranks, *job_latency_ms, findings);
  if (slowest && *slowest < ranks.size())
    CommExposed(ranks, *slowest, slowest_devices, collectives, *job_latency_ms, findings);
  OrderFindings(findings);
  return FindingsJson(findings);
}

void MarkSharedClaims(json& findings) {
  json* exposed = nullptr;
  json* own = nullptr;
  size_t owns = 0;
  for (json& f : findings) {
    const std::string id = Text(f, "id");
    if (id == "comm_exposed") exposed = &f;
    if (id == "communication") {
      own = &f;
      ++owns;
    }
  }
  // A trace has one communication finding; its ref is its id.
  if (!exposed || owns != 1) return;
  auto add = [](json& f, const char* ref) {
    json& list = f["overlaps"];
    if (!list.is_array()) list = json::array();
    if (std::find(list.begin(), list.end(), ref) == list.end()) list.push_back(ref);
  };
  add(*exposed, "communication");
  add(*own, "comm_exposed");
}

}  // namespace tg::internal
