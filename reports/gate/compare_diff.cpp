// The per-kernel and per-phase diff of two reports and the contributors to the latency change.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"

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
    k.has_delta_pct = k.base_ms > 0;
    if (k.has_delta_pct) k.delta_pct = k.delta_ms / k.base_ms * 100;
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

// A share of the latency change means something only when the latency really changed: with a
// change that is noise (say +0.01 ms), a kernel's +0.3 ms would read as a share of 30.
template <typename T>
void SetShares(std::vector<T>& items, double latency_delta, bool significant) {
  if (latency_delta == 0 || !significant) return;
  for (T& item : items) {
    item.has_share = true;
    item.share_of_change = item.delta_ms / latency_delta;
  }
}

}  // namespace

std::vector<FamilyDelta> GroupFamilies(const Comparison& c, const std::vector<size_t>& kernels) {
  std::vector<FamilyDelta> families;
  std::map<std::string, size_t> index;
  for (size_t i : kernels) {
    const KernelDelta& k = c.kernels[i];
    auto [it, inserted] = index.try_emplace(ShortKernelName(k.name), families.size());
    if (inserted) families.push_back({.name = it->first, .change = k.change});
    FamilyDelta& f = families[it->second];
    f.base_ms += k.base_ms;
    f.new_ms += k.new_ms;
    f.delta_ms += k.delta_ms;
    ++f.variants;
    if (f.change != k.change) f.change = KernelChange::kChanged;  // some variants added or removed
  }
  for (FamilyDelta& f : families) {
    f.has_delta_pct = f.change != KernelChange::kAdded && f.base_ms > 0;
    if (f.has_delta_pct) f.delta_pct = f.delta_ms / f.base_ms * 100;
  }
  return families;
}

namespace {

// The families whose time moved beyond noise (the per-kernel rule of CompareOptions applied to the
// family's sum, so many variants that each moved a little still count), largest move first, and
// those over kernel_threshold_pct: grown by more than it on both sides' common ground.
void DiffFamilies(Comparison& c) {
  std::vector<size_t> all(c.kernels.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const CompareOptions& o = c.options;
  for (FamilyDelta& f : GroupFamilies(c, all)) {
    const double moved = std::abs(f.delta_ms);
    if (f.change == KernelChange::kUnchanged) f.change = KernelChange::kChanged;
    if (moved >= o.kernel_change_min_ms && moved >= f.base_ms * o.kernel_change_pct / 100)
      c.families.push_back(std::move(f));
  }
  std::stable_sort(c.families.begin(), c.families.end(), [](const FamilyDelta& x, const FamilyDelta& y) {
    return std::abs(x.delta_ms) > std::abs(y.delta_ms);
  });
  if (!o.has_kernel_threshold) return;
  for (size_t i = 0; i < c.families.size(); ++i) {
    const FamilyDelta& f = c.families[i];
    if (f.has_delta_pct && f.new_ms > 0 && f.delta_pct > o.kernel_threshold_pct) c.families_over.push_back(i);
  }
}

}  // namespace

void DiffKernelsAndPhases(const json& base, const json& next, Comparison& c) {
  DiffKernels(base, next, c);
  DiffPhases(base, next, c);
  DiffFamilies(c);
  SetShares(c.kernels, c.latency_delta_ms, c.significant);
  SetShares(c.phases, c.latency_delta_ms, c.significant);
  c.kernel_contributors = Contributors(c.kernels, c.latency_delta_ms);
  c.phase_contributors = Contributors(c.phases, c.latency_delta_ms);
}

}  // namespace tg
