// Job reports in a comparison: each rank's avg_latency_ms on both sides, so the verdict can name
// the ranks that regressed (the job's latency is only the slowest rank's).
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"

namespace tg {

using nlohmann::json;

void DiffRanks(const json& base, const json& next, Comparison& c) {
  if (!internal::IsJobReport(base) && !internal::IsJobReport(next)) return;
  std::map<int64_t, RankDelta> by_rank;
  auto read = [&](const json& doc, bool is_base) {
    for (const json& r : internal::Array(doc, "ranks")) {
      const std::optional<double> ms = internal::Number(r, "avg_latency_ms");
      if (!internal::Number(r, "rank") || !ms) continue;
      RankDelta& d = by_rank[internal::Int(r, "rank")];
      d.rank = internal::Int(r, "rank");
      (is_base ? d.has_base : d.has_new) = true;
      (is_base ? d.base_ms : d.new_ms) = *ms;
    }
  };
  read(base, true);
  read(next, false);
  for (auto& [rank, d] : by_rank) {
    if (d.has_base && d.has_new && d.base_ms > 0) {
      d.delta_pct = (d.new_ms / d.base_ms - 1) * 100;
      d.over_threshold = d.new_ms > d.base_ms * (1 + c.options.threshold_pct / 100);
    }
    c.ranks.push_back(d);
  }
}

std::string RanksOverText(const Comparison& c) {
  std::string names;
  for (const RankDelta& d : c.ranks)
    if (d.over_threshold)
      names += (names.empty() ? "" : ", ") + std::to_string(d.rank) + " " + FormatNumber(d.base_ms, 3) + " -> " +
               FormatNumber(d.new_ms, 3) + " ms (" + FormatSigned(d.delta_pct, 2) + "%)";
  return names.empty() ? "" : "ranks over the limit: " + names;
}

void RankTable(std::ostream& out, const Comparison& c, bool markdown) {
  if (c.ranks.empty()) return;
  if (markdown)
    out << "### Ranks (avg_latency_ms)\n\n| rank | base | new | change | over the limit |\n|---:|---:|---:|---:|:---:|\n";
  else
    out << "  ranks (avg_latency_ms):\n";
  for (const RankDelta& d : c.ranks) {
    const std::string b = d.has_base ? FormatNumber(d.base_ms, 3) : "n/a";
    const std::string n = d.has_new ? FormatNumber(d.new_ms, 3) : "n/a";
    const std::string pct = d.has_base && d.has_new ? FormatSigned(d.delta_pct, 2) + "%" : "n/a";
    if (markdown) {
      out << "| " << d.rank << " | " << b << " | " << n << " | " << pct << " | " << (d.over_threshold ? "yes" : "") << " |\n";
    } else {
      char line[160];
      std::snprintf(line, sizeof line, "    %6lld %12s -> %12s ms %10s%s\n", static_cast<long long>(d.rank), b.c_str(),
                    n.c_str(), pct.c_str(), d.over_threshold ? "  over the limit" : "");
      out << line;
    }
  }
  if (markdown) out << "\n";
}

json RanksJson(const Comparison& c) {
  json arr = json::array();
  for (const RankDelta& d : c.ranks)
    arr.push_back({{"rank", d.rank},
                   {"base_ms", d.has_base ? json(d.base_ms) : json(nullptr)},
                   {"new_ms", d.has_new ? json(d.new_ms) : json(nullptr)},
                   {"delta_pct", d.has_base && d.has_new ? json(d.delta_pct) : json(nullptr)},
                   {"over_threshold", d.over_threshold}});
  return arr;
}

}  // namespace tg
