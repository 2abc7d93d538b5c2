// The findings across ranks (docs/RULES.md, "Across ranks"): the job's figures handed to the rules
// across ranks (EvaluateJobRules, analyzer/analysis/rules/cross_rank_rules.cpp), their findings
// in the report's shape.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/job/job_internal.h"
#include "reports/report/findings_json.h"
#include "tracegate/analyzer/findings.h"

namespace tg::internal {

json CrossRankFindings(const json& ranks, const CrossRank& cross, std::optional<double> job_latency_ms,
                       std::optional<size_t> slowest, size_t slowest_devices, const json& collectives,
                       const RulesConfig& rules) {
  JobRulesInput in;
  in.cross = &cross;
  in.latency_ms = job_latency_ms;
  in.slowest = slowest;
  in.slowest_devices = slowest_devices;
  for (const json& r : ranks) {
    JobRank& rank = in.ranks.emplace_back();
    rank.rank = Int(r, "rank");
    rank.iterations = std::max<double>(1, static_cast<double>(Int(r, keys::kIterations.name)));
    rank.comm_ms = Number(r, "comm_ms");
    rank.compute_ms = Number(r, "compute_ms");
    rank.overlap_ratio = Number(r, "overlap_ratio");
    rank.collectives = static_cast<uint64_t>(Int(r, "collectives"));
  }
  for (const json& c : collectives) {
    JobCollective& row = in.collectives.emplace_back();
    row.collective = Text(c, "collective");
    if (Number(c, "message_bytes")) row.message_bytes = Int(c, "message_bytes");
    row.count = static_cast<uint64_t>(Int(c, "count"));
    row.ranks = Int(c, "ranks");
    row.total_ms = Number(c, "total_ms").value_or(0);
    row.mean_ms = Number(c, "mean_ms").value_or(0);
    row.busbw_gbs = Number(c, "busbw_gbs");
    if (!row.busbw_gbs) row.busbw_reason = Text(c, "busbw_gbs_reason");
  }
  return FindingsJson(EvaluateJobRules(in, rules));
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
