// The per-kernel and per-phase diff of two reports and the contributors to the latency change.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/analyzer/iterations.h"

namespace tg {

using nlohmann::json;
using internal::Number;
using internal::Object;
using internal::Text;

namespace {

struct KernelRow {
  uint64_t count = 0;
  double per_iteration_ms = 0, mean_us = 0;
};

// kernel_table rows by name; false when the report has no kernel_table array.
bool ReadKernelTable(const json& doc, std::map<std::string, KernelRow>* out) {
  const json* table = internal::Find(doc, "kernel_table");
  if (!table || !table->is_array()) return false;
  for (const json& row : *table) {
    std::string name = Text(row, "name");
    if (name.empty()) continue;
    KernelRow& k = (*out)[name];
    if (auto v = Number(row, "count")) k.count += static_cast<uint64_t>(*v);
    if (auto v = Number(row, "per_iteration_ms")) k.per_iteration_ms += *v;
    if (auto v = Number(row, "mean_us")) k.mean_us = *v;
  }
  return true;
}

void DiffKernels(const json& base, const json& next, Comparison& c) {
  std::map<std::string, KernelRow> b, n;
  bool hb = ReadKernelTable(base, &b), hn = ReadKernelTable(next, &n);
  if (!hb || !hn) {
    c.notes.push_back("no kernel_table in " + (hb ? c.next.label : hn ? c.base.label : std::string("either report")) +
                      " (re-run tracegate analyze); kernels not compared");
    return;
  }
  std::set<std::string> names;
  for (const auto& [name, row] : b) names.insert(name);
  for (const auto& [name, row] : n) names.insert(name);
  const CompareOptions& o = c.options;
  for (const std::string& name : names) {
    KernelDelta k;
    k.name = name;
    auto ib = b.find(name), in = n.find(name);
    if (ib != b.end()) {
      k.base_count = ib->second.count;
      k.base_ms = ib->second.per_iteration_ms;
      k.base_mean_us = ib->second.mean_us;
    }
    if (in != n.end()) {
      k.new_count = in->second.count;
      k.new_ms = in->second.per_iteration_ms;
      k.new_mean_us = in->second.mean_us;
    }
    k.delta_ms = k.new_ms - k.base_ms;
    if (ib == b.end())
      k.change = KernelChange::kAdded;
    else if (in == n.end())
      k.change = KernelChange::kRemoved;
    else if (std::abs(k.delta_ms) >= o.kernel_change_min_ms &&
             std::abs(k.delta_ms) >= k.base_ms * o.kernel_change_pct / 100)
      k.change = KernelChange::kChanged;
    c.kernels.push_back(std::move(k));
  }
  std::stable_sort(c.kernels.begin(), c.kernels.end(), [](const KernelDelta& x, const KernelDelta& y) {
    return std::abs(x.delta_ms) > std::abs(y.delta_ms);
  });
}

void DiffPhases(const json& base, const json& next, Comparison& c) {
  const json &b = Object(base, "phases"), &n = Object(next, "phases");
  for (const char* phase : kPhaseNames) {
    auto bv = Number(Object(b, phase), "mean_ms"), nv = Number(Object(n, phase), "mean_ms");
    if (!bv || !nv) {
      c.notes.push_back("phases missing in a report; phases not compared");
      c.phases.clear();
      return;
    }
    c.phases.push_back({phase, *bv, *nv, *nv - *bv});
  }
}

// Indexes of the items whose delta moved like the latency, largest first (ties: input order).
template <typename T>
std::vector<size_t> Contributors(const std::vector<T>& items, double latency_delta) {
  std::vector<size_t> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].delta_ms * latency_delta <= 0) continue;
    if constexpr (std::is_same_v<T, KernelDelta>)
      if (items[i].change == KernelChange::kUnchanged) continue;  // noise, not a cause
    out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](size_t x, size_t y) { return std::abs(items[x].delta_ms) > std::abs(items[y].delta_ms); });
  return out;
}

template <typename T>
void SetShares(std::vector<T>& items, double latency_delta) {
  if (latency_delta == 0) return;
  for (T& item : items) {
    item.has_share = true;
    item.share_of_change = item.delta_ms / latency_delta;
  }
}

}  // namespace

void DiffKernelsAndPhases(const json& base, const json& next, Comparison& c) {
  DiffKernels(base, next, c);
  DiffPhases(base, next, c);
  SetShares(c.kernels, c.latency_delta_ms);
  SetShares(c.phases, c.latency_delta_ms);
  c.kernel_contributors = Contributors(c.kernels, c.latency_delta_ms);
  c.phase_contributors = Contributors(c.phases, c.latency_delta_ms);
}

}  // namespace tg
