// Job reports in a comparison: each rank's avg_latency_ms on both sides, so the verdict can name
// the ranks that regressed (the job's latency is only the slowest rank's), and each rank's kernel
// families (ranks[].kernel_families), so it can name what grew on them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"

namespace tg::internal {

using nlohmann::json;

namespace {

// One side's list of a rank's families: ms per iteration by name; whole: no family left out.
struct RankFamilies {
  bool present = false, whole = false;
  std::map<std::string, double> ms;
};

RankFamilies ReadFamilies(const json& rank) {
  RankFamilies f;
  const json* list = internal::Find(rank, "kernel_families");
  if (!list || !list->is_array()) return f;
  f.present = true;
  f.whole = internal::Int(rank, "kernel_families_left_out") == 0;
  for (const json& row : *list)
    if (const std::string name = internal::Text(row, "name"); !name.empty())
      f.ms[name] += internal::Number(row, "ms_per_iteration").value_or(0);
  return f;
}

// The families that grew beyond noise (the per-kernel rule of CompareOptions), largest first,
// ties by name.
std::vector<FamilyDelta> Grown(const RankFamilies& base, const RankFamilies& next, const CompareOptions& o) {
  std::vector<FamilyDelta> grown;
  for (const auto& [name, new_ms] : next.ms) {
    const auto in_base = base.ms.find(name);
    // Missing from a top list that left some out: its base time is unknown, not 0.
    if (in_base == base.ms.end() && !base.whole) continue;
    FamilyDelta f{.name = name, .change = in_base == base.ms.end() ? KernelChange::kAdded : KernelChange::kChanged};
    f.base_ms = in_base == base.ms.end() ? 0 : in_base->second;
    f.new_ms = new_ms;
    f.delta_ms = new_ms - f.base_ms;
    f.has_delta_pct = f.base_ms > 0;
    if (f.has_delta_pct) f.delta_pct = f.delta_ms / f.base_ms * 100;
    if (f.delta_ms > 0 && f.delta_ms >= o.kernel_change_min_ms && f.delta_ms >= f.base_ms * o.kernel_change_pct / 100)
      grown.push_back(std::move(f));
  }
  std::stable_sort(grown.begin(), grown.end(),
                   [](const FamilyDelta& x, const FamilyDelta& y) { return x.delta_ms > y.delta_ms; });
  return grown;
}

// "gemm_compute_kernel +0.300 ms (+15.00%)", "+0.300 ms (new)" for an added family.
std::string GrownText(const FamilyDelta& f) {
  return f.name + " " + FormatSigned(f.delta_ms, 3) + " ms (" +
         (f.has_delta_pct ? FormatSigned(f.delta_pct, 2) + "%" : std::string("new")) + ")";
}

std::string GrownList(const RankDelta& d, size_t most) {
  std::string out;
  for (size_t i = 0; i < d.grown.size() && i < most; ++i) out += (i ? ", " : "") + GrownText(d.grown[i]);
  if (d.grown.size() > most) out += ", " + std::to_string(d.grown.size() - most) + " more";
  return out;
}

}  // namespace

void DiffRanks(const json& base, const json& next, Comparison& c) {
  if (!internal::IsJobReport(base) && !internal::IsJobReport(next)) return;
  std::map<int64_t, RankDelta> by_rank;
  std::map<int64_t, RankFamilies> base_families, new_families;
  auto read = [&](const json& doc, bool is_base) {
    for (const json& r : internal::Array(doc, "ranks")) {
      const std::optional<double> ms = internal::Number(r, keys::kAvgLatencyMs.name);
      if (!internal::Number(r, "rank") || !ms) continue;
      RankDelta& d = by_rank[internal::Int(r, "rank")];
      d.rank = internal::Int(r, "rank");
      (is_base ? d.has_base : d.has_new) = true;
      (is_base ? d.base_ms : d.new_ms) = *ms;
      (is_base ? base_families : new_families)[d.rank] = ReadFamilies(r);
    }
  };
  read(base, true);
  read(next, false);
  for (auto& [rank, d] : by_rank) {
    if (d.has_base && d.has_new && d.base_ms > 0) {
      d.delta_pct = (d.new_ms / d.base_ms - 1) * 100;
      d.over_threshold = d.new_ms > d.base_ms * (1 + c.options.threshold_pct / 100);
    }
    const RankFamilies &b = base_families[rank], &n = new_families[rank];
    d.has_families = d.has_base && d.has_new && b.present && n.present;
    if (d.has_families) d.grown = Grown(b, n, c.options);
    c.ranks.push_back(d);
  }
}

std::string RanksOverText(const Comparison& c) {
  std::string names;
  for (const RankDelta& d : c.ranks) {
    if (!d.over_threshold) continue;
    names += (names.empty() ? "" : "; ") + std::to_string(d.rank) + " " + FormatNumber(d.base_ms, 3) + " -> " +
             FormatNumber(d.new_ms, 3) + " ms (" + FormatSigned(d.delta_pct, 2) + "%)";
    if (d.has_families)
      names += d.grown.empty() ? ": no kernel family grew" : ": " + GrownList(d, c.options.contributors);
  }
  return names.empty() ? "" : "ranks over the limit: " + names;
}

void RankTable(std::ostream& out, const Comparison& c, bool markdown) {
  if (c.ranks.empty()) return;
  if (markdown)
    out << "### Ranks (avg_latency_ms)\n\n| rank | base | new | change | over the limit | kernel families grown |\n"
           "|---:|---:|---:|---:|:---:|---|\n";
  else
    out << "  ranks (avg_latency_ms):\n";
  for (const RankDelta& d : c.ranks) {
    const std::string b = d.has_base ? FormatNumber(d.base_ms, 3) : "n/a";
    const std::string n = d.has_new ? FormatNumber(d.new_ms, 3) : "n/a";
    const std::string pct = d.has_base && d.has_new ? FormatSigned(d.delta_pct, 2) + "%" : "n/a";
    if (markdown) {
      std::string grown = d.has_families ? "" : "n/a";
      for (size_t i = 0; i < d.grown.size(); ++i) grown += (i ? ", " : "") + MdCode(d.grown[i].name) + " " +
                                                           FormatSigned(d.grown[i].delta_ms, 3) + " ms";
      out << "| " << d.rank << " | " << b << " | " << n << " | " << pct << " | " << (d.over_threshold ? "yes" : "")
          << " | " << grown << " |\n";
    } else {
      char line[160];
      std::snprintf(line, sizeof line, "    %6lld %12s -> %12s ms %10s%s\n", static_cast<long long>(d.rank), b.c_str(),
                    n.c_str(), pct.c_str(), d.over_threshold ? "  over the limit" : "");
      out << line;
      // Every family that grew, under the ranks that regressed: the verdict line names only the
      // first few.
      if (d.over_threshold && !d.grown.empty()) out << "           grown: " << GrownList(d, d.grown.size()) << "\n";
    }
  }
  if (markdown) out << "\n";
}

json RanksJson(const Comparison& c) {
  json arr = json::array();
  for (const RankDelta& d : c.ranks) {
    json grown = nullptr;
    if (d.has_families) {
      grown = json::array();
      for (const FamilyDelta& f : d.grown) {
        json j = FamilyJson(f);
        j.erase("variants");  // the job report keeps families, not their variants
        grown.push_back(std::move(j));
      }
    }
    arr.push_back({{"rank", d.rank},
                   {"base_ms", d.has_base ? json(d.base_ms) : json(nullptr)},
                   {"new_ms", d.has_new ? json(d.new_ms) : json(nullptr)},
                   {"delta_pct", d.has_base && d.has_new ? json(d.delta_pct) : json(nullptr)},
                   {"over_threshold", d.over_threshold},
                   {"kernel_families_grown", std::move(grown)}});
  }
  return arr;
}

}  // namespace tg::internal
