// ComparisonMarkdown: the comparison as a pull-request comment or a CI step summary. Short by
// design (about 4 KB for a typical run): the verdict line first in bold, the caveats, the key
// metrics and the kernel families that moved most, with short names; everything else in
// <details>, each table once. Full names only inside <details>; the JSON has every kernel.
#include <algorithm>
#include <sstream>

#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "reports/view/report_view.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace keys = internal::keys;

using internal::Caveat;
using internal::ComparisonCaveats;
using internal::CountChanges;
using internal::FamilyTotals;
using internal::FormatNumber;
using internal::FormatP;
using internal::FormatSigned;
using internal::MdCode;
using internal::MetricDecimals;
using internal::RankTable;
using internal::SmallestMannWhitneyP;
using internal::TotalFamilies;
using internal::VerdictClauses;

namespace {

constexpr size_t kBudget = 4000;        // bytes: the folded sections that do not fit are left out
constexpr size_t kFamiliesShown = 5;    // in the comment itself
constexpr size_t kFamiliesFolded = 10;  // more in <details>, budget permitting
constexpr size_t kNameChars = 56;       // a family's name in a table
constexpr double kUnstableCv = 0.15;
// The metrics of the comment's table; the rest are folded.
constexpr std::string_view kKeyMetrics[] = {
    keys::kAvgLatencyMs.name, keys::kP50LatencyMs.name, keys::kP95LatencyMs.name, keys::kThroughputFps.name,
    "kernel_ms_per_iter",     "launches_per_iter",      keys::kIdleRatio.name};

std::string Md(const std::string& s) { return MarkdownEscape(s); }

// A verdict clause with its long words (kernel names) cut to kNameChars: the comment keeps
// short names; the folded tables and the JSON have them whole.
std::string ShortWords(const std::string& clause) {
  std::string out, word;
  for (size_t i = 0; i <= clause.size(); ++i) {
    if (i < clause.size() && clause[i] != ' ') {
      word += clause[i];
      continue;
    }
    // Paths keep their end, the file's name: they are left whole.
    out += (word.find('/') == std::string::npos ? internal::CutMiddle(word, kNameChars) : word) +
           (i < clause.size() ? " " : "");
    word.clear();
  }
  return out;
}

bool IsKeyMetric(const MetricDelta& m) {
  return std::find_if(std::begin(kKeyMetrics), std::end(kKeyMetrics), [&](std::string_view k) { return m.key == k; }) !=
         std::end(kKeyMetrics);
}

// The key metrics, or (key = false) the others that are not 0 on both sides.
void MetricRows(std::ostream& out, const Comparison& c, bool key) {
  out << "| metric | base | new | delta | delta % |\n|---|---:|---:|---:|---:|\n";
  for (const MetricDelta& m : c.metrics) {
    if ((!m.has_base && !m.has_new) || IsKeyMetric(m) != key) continue;
    if (!key && m.has_base && m.has_new && m.base == 0 && m.next == 0) continue;
    const int d = MetricDecimals(m);
    out << "| " << m.key << " | " << (m.has_base ? FormatNumber(m.base, d) : "n/a") << " | "
        << (m.has_new ? FormatNumber(m.next, d) : "n/a") << " | "
        << (m.has_base && m.has_new ? FormatSigned(m.delta, d) : "n/a") << " | "
        << (m.has_pct ? FormatSigned(m.pct, 2) + "%" : "n/a") << " |\n";
  }
}

void FamilyRows(std::ostream& out, const Comparison& c, size_t from, size_t to) {
  out << "| kernel family | change | ms/iter base → new | delta ms/iter | launches/iter |\n|---|---|---:|---:|---:|\n";
  for (size_t j = from; j < to && j < c.families.size(); ++j) {
    const FamilyDelta& f = c.families[j];
    out << "| " << MdCode(internal::CutMiddle(f.name, kNameChars))
        << (f.variants > 1 ? " ×" + std::to_string(f.variants) : std::string()) << " | " << KernelChangeName(f.change)
        << " | " << FormatNumber(f.base_ms, 3) << " → " << FormatNumber(f.new_ms, 3) << " | "
        << FormatSigned(f.delta_ms, 3) << (f.has_delta_pct ? " (" + FormatSigned(f.delta_pct, 1) + "%)" : "") << " | "
        << FormatNumber(f.base_launches, 1) << " → " << FormatNumber(f.new_launches, 1) << " |\n";
  }
}

void Families(std::ostream& out, const Comparison& c) {
  if (c.kernels.empty()) return;
  out << "\n**Kernel families** (a kernel's variants summed, ×N; per iteration):";
  // What a change such as torch.compile fused away (base only) and generated (new only).
  for (auto [change, what] :
       {std::pair{KernelChange::kRemoved, "removed (in base only)"},
        std::pair{KernelChange::kAdded, "added (in new only)"}, std::pair{KernelChange::kChanged, "changed"}}) {
    const FamilyTotals t = TotalFamilies(c, change);
    if (t.families > 0)
      out << "\n- " << t.families << " " << what << ", " << FormatSigned(t.delta_ms, 3) << " ms and "
          << FormatSigned(t.delta_launches, 1) << " launches";
  }
  if (c.families.empty()) {
    out << " none changed beyond noise (1% of its base and 0.001 ms)\n";
    return;
  }
  out << "\n\n";
  FamilyRows(out, c, 0, kFamiliesShown);
}

// A folded section: "<details><summary>TITLE</summary>\n\nBODY\n</details>\n".
std::string Folded(const std::string& title, const std::string& body) {
  return "\n<details><summary>" + title + "</summary>\n\n" + body + "\n</details>\n";
}

std::string FullNames(const Comparison& c) {
  std::string full;
  for (size_t j = 0; j < c.families.size() && j < kFamiliesShown; ++j)
    if (c.families[j].name.size() > kNameChars) full += "- " + MdCode(c.families[j].name, false) + "\n";
  return full.empty() ? "" : Folded("Full names", full);
}

std::string PhasesAndStatistics(const Comparison& c) {
  std::ostringstream out;
  if (!c.phases.empty()) {
    out << "| phase | base ms | new ms | delta ms | share of the change |\n|---|---:|---:|---:|---:|\n";
    for (const PhaseDelta& p : c.phases)
      if (p.base_ms != 0 || p.new_ms != 0)
        out << "| " << p.phase << " | " << FormatNumber(p.base_ms, 3) << " | " << FormatNumber(p.new_ms, 3) << " | "
            << FormatSigned(p.delta_ms, 3) << " | "
            << (p.has_share ? FormatNumber(p.share_of_change * 100, 1) + "%" : std::string("n/a")) << " |\n";
    out << "\n";
  }
  const MannWhitneyResult& mw = c.mann_whitney;
  const BootstrapResult& bs = c.bootstrap;
  if (mw.ok)
    out << "- Mann-Whitney U = " << FormatNumber(mw.u, 1) << ", two-sided p = " << FormatP(mw.p_two_sided) << " ("
        << (mw.exact ? "exact" : "normal approximation") << "): " << (c.significant ? "significant" : "not significant")
        << " at alpha = " << FormatNumber(c.options.alpha, -1) << "\n";
  else out << "- Mann-Whitney U: not computed (" << Md(mw.reason) << ")\n";
  if (bs.ok)
    out << "- Bootstrap " << FormatNumber(bs.confidence * 100, -1)
        << "% interval of mean(new) / mean(base): " << FormatNumber(bs.ratio, 4) << " [" << FormatNumber(bs.lo, 4)
        << ", " << FormatNumber(bs.hi, 4) << "] (" << bs.resamples << " resamples)\n";
  for (const SideInfo* s : {&c.base, &c.next})
    out << "- " << (s == &c.base ? "base" : "new") << ": " << s->samples << " iterations, CV "
        << (s->has_cv ? FormatNumber(s->cv, 4) : "n/a") << "\n";
  if (!c.kernels.empty()) {
    const std::array<size_t, 4> n = CountChanges(c);
    out << "- kernels: " << n[static_cast<size_t>(KernelChange::kAdded)] << " added, "
        << n[static_cast<size_t>(KernelChange::kRemoved)] << " removed, "
        << n[static_cast<size_t>(KernelChange::kChanged)] << " changed, "
        << n[static_cast<size_t>(KernelChange::kUnchanged)] << " unchanged (per-iteration time)\n";
  }
  return Folded(c.phases.empty() ? "Statistics" : "Phases and statistics", out.str());
}

std::string MoreFamilies(const Comparison& c) {
  if (c.families.size() <= kFamiliesShown) return "";
  std::ostringstream out;
  const size_t to = std::min(c.families.size(), kFamiliesShown + kFamiliesFolded);
  FamilyRows(out, c, kFamiliesShown, to);
  if (c.families.size() > to) out << "\n" << c.families.size() - to << " more in the JSON comparison (--json).\n";
  return Folded(std::to_string(to - kFamiliesShown) + " more kernel families", out.str());
}

std::string OtherMetrics(const Comparison& c) {
  std::ostringstream out;
  MetricRows(out, c, false);
  return Folded("Other metrics", out.str());
}

}  // namespace

double internal::SmallestMannWhitneyP(size_t na, size_t nb) {
  double combinations = 1;  // C(na + nb, na), as a double: only compared with 2 / alpha
  for (size_t i = 1; i <= na; ++i) combinations = combinations * static_cast<double>(nb + i) / static_cast<double>(i);
  return std::min(1.0, 2 / combinations);
}

std::vector<std::string> internal::VerdictClauses(const std::string& text) {
  std::vector<std::string> clauses;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')') depth = std::max(0, depth - 1);
    else if (depth == 0 && text.compare(i, 2, "; ") == 0) {
      clauses.push_back(text.substr(begin, i - begin));
      begin = i + 2;
    }
  }
  clauses.push_back(text.substr(begin));
  return clauses;
}

std::vector<Caveat> internal::ComparisonCaveats(const Comparison& c) {
  std::vector<Caveat> out;
  for (const SideInfo* s : {&c.base, &c.next}) {
    const std::string side = s == &c.base ? "base" : "new";
    if (!s->warning_counters.empty()) {
      std::string text = "Data quality, " + side + ": warnings";
      for (size_t i = 0; i < s->warning_counters.size(); ++i) text += (i ? ", " : ": ") + s->warning_counters[i];
      out.push_back({true, text});
    }
    if (s->skipped > 0) out.push_back({false, "Warm-up, " + side + ": " + s->warmup});
    if (s->has_cv && s->cv > kUnstableCv && !c.serving.applies)  // serving: the CV is the batch mix's
      out.push_back({true, "Unstable, " + side + ": latency CV " + FormatNumber(s->cv, 4) +
                               " > 0.15, so a small change is noise"});
  }
  if (c.base.samples >= 1 && c.next.samples >= 1 &&
      SmallestMannWhitneyP(c.base.samples, c.next.samples) >= c.options.alpha)
    out.push_back({true, std::to_string(c.base.samples) + " and " + std::to_string(c.next.samples) +
                             " iterations: the Mann-Whitney test can never reach p < " +
                             FormatNumber(c.options.alpha, -1) + " (its smallest p is " +
                             FormatP(SmallestMannWhitneyP(c.base.samples, c.next.samples)) + "); record more"});
  for (const std::string& n : c.notes) out.push_back({false, n});
  return out;
}

std::string ComparisonMarkdown(const Comparison& c) {
  std::ostringstream out;
  const std::vector<std::string> clauses = VerdictClauses(c.verdict_text);
  out << "**" << Md(ShortWords(clauses.front())) << "**\n\n";
  for (size_t i = 1; i < clauses.size(); ++i) out << "- " << Md(ShortWords(clauses[i])) << "\n";
  const std::vector<Caveat> caveats = ComparisonCaveats(c);
  if (!caveats.empty()) {
    out << (clauses.size() > 1 ? "\n" : "") << "Caveats:\n";
    for (const Caveat& k : caveats) out << "- " << (k.warning ? "**" + Md(k.text) + "**" : Md(k.text)) << "\n";
  }
  if (clauses.size() > 1 || !caveats.empty()) out << "\n";
  out << "tracegate: base " << MdCode(c.base.label, false) << ", new " << MdCode(c.next.label, false) << ", threshold "
      << FormatSigned(c.options.threshold_pct, -1) << "%"
      << (c.options.require_significance ? ", significance required" : "");
  if (c.bootstrap.ok && !c.serving.applies)  // serving: the groups' intervals are in their table
    out << "; " << FormatNumber(c.bootstrap.confidence * 100, -1) << "% interval of the change "
        << FormatSigned((c.bootstrap.lo - 1) * 100, 2) << "% to " << FormatSigned((c.bootstrap.hi - 1) * 100, 2)
        << "% (bootstrap)";
  if (c.mann_whitney.ok && !c.serving.applies) out << ", Mann-Whitney p = " << FormatP(c.mann_whitney.p_two_sided);
  out << "\n";
  if (c.metrics.empty()) return out.str();  // the inputs could not be read
  out << "\n";
  MetricRows(out, c, true);
  if (!c.ranks.empty()) out << "\n";
  RankTable(out, c, true);
  internal::ServingTable(out, c, true);  // serving reports: the step groups
  Families(out, c);
  std::string text = out.str();
  internal::AppendWithinBudget(text,
                               {{"full names", FullNames(c)},
                                {"phases and statistics", PhasesAndStatistics(c)},
                                {"more kernel families", MoreFamilies(c)},
                                {"other metrics", OtherMetrics(c)}},
                               kBudget);
  return text;
}

}  // namespace tg
