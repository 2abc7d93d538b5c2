// PrintComparison: the terminal summary of `tracegate compare` and `tracegate gate`.
#include <array>
#include <cstdio>
#include <ostream>

#include "reports/gate/compare_internal.h"
#include "tracegate/reports/compare.h"

namespace tg {

using internal::CountChanges;
using internal::FamilyTotals;
using internal::FormatNumber;
using internal::FormatP;
using internal::FormatSigned;
using internal::KernelDeltaMs;
using internal::MetricDecimals;
using internal::RankTable;
using internal::TotalFamilies;

namespace {

constexpr size_t kPrintedContributors = 5;
constexpr size_t kNameChars = 100;  // long template names are cut; the JSON keeps them whole

std::string Clip(const std::string& name) {
  return name.size() <= kNameChars ? name : name.substr(0, kNameChars - 3) + "...";
}

std::string Side(const SideInfo& s) {
  std::string text = s.label + " (n = " + std::to_string(s.samples);
  if (s.skipped > 0) text += " of " + std::to_string(s.found) + ", " + std::to_string(s.skipped) + " warm-up dropped";
  text += std::string(", CV ") + (s.has_cv ? FormatNumber(s.cv, 4) : "n/a");
  if (!s.devices.empty()) text += ", " + s.devices.front() + (s.devices.size() > 1 ? " +" : "");
  return text + ")";
}

std::string Value(bool has, double v, int decimals) { return has ? FormatNumber(v, decimals) : "n/a"; }

// The kernel families of one kind of change (removed, added, changed), largest move first, with
// their total: what a compiler fused away and what it generated instead.
void FamilyGroup(std::ostream& out, const Comparison& c, KernelChange change, const char* title) {
  const FamilyTotals t = TotalFamilies(c, change);
  if (t.families == 0) return;
  out << "  kernel families " << title << ": " << t.families << ", " << FormatSigned(t.delta_ms, 3) << " ms and "
      << FormatSigned(t.delta_launches, 1) << " launches per iteration\n";
  size_t shown = 0;
  char line[128];
  for (const FamilyDelta& f : c.families) {
    if (f.change != change) continue;
    if (shown++ == kPrintedContributors) break;
    std::snprintf(line, sizeof line, "    %10s %9s  %8s -> %-8s %6s -> %-6s ", FormatSigned(f.delta_ms, 3).c_str(),
                  f.has_delta_pct ? (FormatSigned(f.delta_pct, 2) + "%").c_str() : KernelChangeName(f.change).data(),
                  FormatNumber(f.base_ms, 3).c_str(), FormatNumber(f.new_ms, 3).c_str(),
                  FormatNumber(f.base_launches, 1).c_str(), FormatNumber(f.new_launches, 1).c_str());
    out << line << Clip(f.name) << (f.variants > 1 ? " (" + std::to_string(f.variants) + " variants)" : "") << "\n";
  }
  if (t.families > kPrintedContributors)
    out << "    " << t.families - kPrintedContributors << " more in tracegate compare --json\n";
}

}  // namespace

void PrintComparison(std::ostream& out, const Comparison& c) {
  out << c.verdict_text << "\n";
  if (c.metrics.empty()) return;  // the inputs could not be read: nothing else to show
  out << "  base: " << Side(c.base) << "\n  new:  " << Side(c.next) << "\n";
  for (const SideInfo* s : {&c.base, &c.next})
    if (s->skipped > 0) out << "  warm-up, " << (s == &c.base ? "base" : "new") << ": " << s->warmup << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-18s %12s %12s %12s %9s\n", "metric", "base", "new", "delta", "delta %");
  out << line;
  for (const MetricDelta& m : c.metrics) {
    if (!m.has_base && !m.has_new) continue;
    const int d = MetricDecimals(m);
    std::snprintf(line, sizeof line, "  %-18s %12s %12s %12s %9s\n", m.key.c_str(),
                  Value(m.has_base, m.base, d).c_str(), Value(m.has_new, m.next, d).c_str(),
                  m.has_base && m.has_new ? FormatSigned(m.delta, d).c_str() : "n/a",
                  m.has_pct ? (FormatSigned(m.pct, 2) + "%").c_str() : "n/a");
    out << line;
  }
  RankTable(out, c, false);
  internal::ServingTable(out, c, false);  // serving reports: the step groups
  if (!c.kernel_contributors.empty()) {
    const double total = KernelDeltaMs(c);
    if (total * c.latency_delta_ms < 0)  // these moved with the latency, the kernels as a whole against it
      out << "  kernels that " << (c.latency_delta_ms > 0 ? "grew" : "shrank") << " (ms per iteration; all kernels "
          << FormatSigned(total, 3) << "):\n";
    else out << "  " << (c.latency_delta_ms > 0 ? "slower" : "faster") << " kernels (ms per iteration):\n";
    for (size_t j = 0; j < c.kernel_contributors.size() && j < kPrintedContributors; ++j) {
      const KernelDelta& k = c.kernels[c.kernel_contributors[j]];
      std::snprintf(line, sizeof line, "    %10s  %10s -> %-10s ", FormatSigned(k.delta_ms, 3).c_str(),
                    FormatNumber(k.base_ms, 3).c_str(), FormatNumber(k.new_ms, 3).c_str());
      out << line << Clip(k.name) << "\n";
    }
  }
  FamilyGroup(out, c, KernelChange::kRemoved, "removed (in base only)");
  FamilyGroup(out, c, KernelChange::kAdded, "added (in new only)");
  FamilyGroup(out, c, KernelChange::kChanged, "changed");
  if (!c.phase_contributors.empty()) {
    out << "  phases (ms per iteration):";
    for (size_t i : c.phase_contributors)
      out << " " << c.phases[i].phase << " " << FormatSigned(c.phases[i].delta_ms, 3);
    out << "\n";
  }
  if (!c.kernels.empty()) {
    const std::array<size_t, 4> counts = CountChanges(c);
    out << "  kernels: " << counts[static_cast<size_t>(KernelChange::kAdded)] << " added, "
        << counts[static_cast<size_t>(KernelChange::kRemoved)] << " removed, "
        << counts[static_cast<size_t>(KernelChange::kChanged)] << " changed, "
        << counts[static_cast<size_t>(KernelChange::kUnchanged)] << " unchanged\n";
  }
  if (c.mann_whitney.ok)
    out << "  Mann-Whitney U " << FormatNumber(c.mann_whitney.u, 1) << ", p = " << FormatP(c.mann_whitney.p_two_sided)
        << " (" << (c.mann_whitney.exact ? "exact" : "normal approximation") << "), "
        << (c.significant ? "significant" : "not significant") << " at " << FormatNumber(c.options.alpha, -1) << "\n";
  if (c.bootstrap.ok)
    out << "  mean(new) / mean(base) = " << FormatNumber(c.bootstrap.ratio, 4) << ", "
        << FormatNumber(c.bootstrap.confidence * 100, -1) << "% bootstrap interval [" << FormatNumber(c.bootstrap.lo, 4)
        << ", " << FormatNumber(c.bootstrap.hi, 4) << "]\n";
  for (const std::string& n : c.notes) out << "  note: " << n << "\n";
}

}  // namespace tg
