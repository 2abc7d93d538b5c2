// The per-kernel and per-phase diff of two reports and the contributors to the latency change.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <string_view>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {

using internal::FamilyTotals;
using internal::GroupFamilies;

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

namespace {

// The template arguments of the first template in `name` that follows `after`, split at depth 1.
std::vector<std::string_view> TemplateArguments(std::string_view name, size_t after) {
  std::vector<std::string_view> args;
  const size_t open = name.find('<', after);
  if (open == std::string_view::npos) return args;
  int depth = 0;
  size_t begin = open + 1;
  for (size_t i = open; i < name.size(); ++i) {
    const char ch = name[i];
    if (ch == '<' || ch == '(' || ch == '[' || ch == '{') {
      ++depth;
    } else if (ch == '>' || ch == ')' || ch == ']' || ch == '}') {
      if (--depth == 0) {
        args.push_back(name.substr(begin, i - begin));
        return args;
      }
    } else if (ch == ',' && depth == 1) {
      args.push_back(name.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return {};  // unbalanced: not C++
}

// The end of the first template argument or parenthesised list at depth 0 of `s`, from `from`.
size_t EndOfArgument(std::string_view s, size_t from) {
  int depth = 0;
  for (size_t i = from; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<' || ch == '(' || ch == '[' || ch == '{') ++depth;
    else if ((ch == '>' || ch == ')' || ch == ']' || ch == '}') && --depth < 0) return i;
    else if (ch == ',' && depth == 0) return i;
  }
  return s.size();
}

// A functor for a family name, from a template argument as Kineto (c++filt) or Nsight Systems
// writes it: namespaces dropped, gpu_kernel_impl<F> unwrapped to F, a lambda named by the
// function it is in ("at::native::(anonymous namespace)::launch_clamp_scalar(...)::{lambda()#1}..."
// -> "launch_clamp_scalar").
std::string FunctorName(std::string_view arg) {
  std::string out;
  for (size_t i = 0; i < arg.size(); ++i) {
    bool skipped = false;
    for (std::string_view anon : {"(anonymous namespace)::", "<unnamed>::"})
      if (arg.substr(i).starts_with(anon)) {
        i += anon.size() - 1;
        skipped = true;
        break;
      }
    if (skipped) continue;
    out += arg[i];
    if (out.ends_with("::")) {  // drop the qualifier just completed
      size_t q = out.size() - 2;
      while (q > 0 && (std::isalnum(static_cast<unsigned char>(out[q - 1])) || out[q - 1] == '_')) --q;
      if (q < out.size() - 2) out.erase(q);
    }
  }
  std::string_view v = out;
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (v.starts_with("void ")) v.remove_prefix(5);
  for (std::string_view wrapper : {"gpu_kernel_impl_nocast<", "gpu_kernel_impl<"})
    if (v.starts_with(wrapper)) {
      v.remove_prefix(wrapper.size());
      v = v.substr(0, EndOfArgument(v, 0));
      break;
    }
  std::string f(v.substr(0, v.find('(')));
  while (!f.empty() && f.back() == ' ') f.pop_back();
  for (size_t pos; (pos = f.find("> >")) != std::string::npos;) f.erase(pos + 1, 1);
  return f;
}

// A number as a template argument: "4", or "(int)4" as Nsight Systems writes it.
bool IsNumber(std::string_view s) {
  if (s.starts_with("(")) s.remove_prefix(std::min(s.size(), s.find(')') + 1));
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

}  // namespace

std::string KernelFamilyName(const std::string& demangled) {
  std::string family = ShortKernelName(demangled);
  // Inductor: triton_{poi,red,per,tem}_fused_<ops>_<N>.
  static constexpr std::string_view kInductor[] = {"triton_poi_", "triton_red_", "triton_per_", "triton_tem_"};
  if (std::any_of(std::begin(kInductor), std::end(kInductor), [&](std::string_view p) { return family.starts_with(p); })) {
    const size_t under = family.rfind('_');
    if (under != std::string::npos && IsDigits(std::string_view(family).substr(under + 1)))
      return family.substr(0, under + 1) + "*";
    return family;
  }
  // PyTorch: at::native::...elementwise_kernel<[sizes,] functor, ...>: the first argument that is
  // not a number is the operation.
  if (!family.starts_with("at::native::") || !family.ends_with("elementwise_kernel")) return family;
  const size_t at = demangled.find(family.substr(family.rfind("::") + 2));
  if (at == std::string::npos) return family;
  for (std::string_view arg : TemplateArguments(demangled, at)) {
    while (!arg.empty() && arg.front() == ' ') arg.remove_prefix(1);
    if (IsNumber(arg)) continue;
    const std::string functor = FunctorName(arg);
    return functor.empty() ? family : family + "<" + functor + ">";
  }
  return family;
}

std::vector<FamilyDelta> internal::GroupFamilies(const Comparison& c, const std::vector<size_t>& kernels) {
  std::vector<FamilyDelta> families;
  std::map<std::string, size_t> index;
  std::vector<std::string> only_variant;  // a family of one kernel is shown by that kernel's short name
  const double base_iterations = static_cast<double>(std::max<size_t>(c.base.samples, 1));
  const double new_iterations = static_cast<double>(std::max<size_t>(c.next.samples, 1));
  for (size_t i : kernels) {
    const KernelDelta& k = c.kernels[i];
    auto [it, inserted] = index.try_emplace(KernelFamilyName(k.name), families.size());
    if (inserted) {
      families.push_back({.name = it->first, .change = k.change, .has_launches = true});
      only_variant.push_back(ShortKernelName(k.name));
    }
    FamilyDelta& f = families[it->second];
    f.base_ms += k.base_ms;
    f.new_ms += k.new_ms;
    f.delta_ms += k.delta_ms;
    f.base_launches += static_cast<double>(k.base_count) / base_iterations;
    f.new_launches += static_cast<double>(k.new_count) / new_iterations;
    ++f.variants;
    if (f.change != k.change) f.change = KernelChange::kChanged;  // some variants added or removed
  }
  for (size_t j = 0; j < families.size(); ++j) {
    FamilyDelta& f = families[j];
    if (f.variants == 1 && f.name.ends_with("_*")) f.name = only_variant[j];
    f.has_delta_pct = f.change != KernelChange::kAdded && f.base_ms > 0;
    if (f.has_delta_pct) f.delta_pct = f.delta_ms / f.base_ms * 100;
  }
  return families;
}

double internal::KernelDeltaMs(const Comparison& c) {
  double sum = 0;
  for (const KernelDelta& k : c.kernels) sum += k.delta_ms;
  return sum;
}

FamilyTotals internal::TotalFamilies(const Comparison& c, KernelChange change) {
  FamilyTotals t;
  for (const FamilyDelta& f : c.families) {
    if (f.change != change) continue;
    t.families++;
    t.delta_ms += f.delta_ms;
    t.delta_launches += f.new_launches - f.base_launches;
  }
  return t;
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

void internal::DiffKernelsAndPhases(const json& base, const json& next, Comparison& c) {
  DiffKernels(base, next, c);
  DiffPhases(base, next, c);
  DiffFamilies(c);
  SetShares(c.kernels, c.latency_delta_ms, c.significant);
  SetShares(c.phases, c.latency_delta_ms, c.significant);
  c.kernel_contributors = Contributors(c.kernels, c.latency_delta_ms);
  c.phase_contributors = Contributors(c.phases, c.latency_delta_ms);
}

}  // namespace tg
