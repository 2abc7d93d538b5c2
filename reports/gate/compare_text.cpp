// The comparison for people and CI systems: Markdown (pull-request comments, step summaries) and
// JUnit XML. Every string that came from a trace is escaped for the format it lands in.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "reports/gate/compare_internal.h"
#include "tracegate/reports/compare.h"

namespace tg {

std::string FormatNumber(double v, int decimals) {
  char buf[64];
  if (decimals < 0)
    std::snprintf(buf, sizeof buf, "%g", v);
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string FormatSigned(double v, int decimals) {
  std::string s = FormatNumber(v, decimals);
  return s.front() == '-' ? s : "+" + s;
}

std::string FormatP(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

int MetricDecimals(const MetricDelta& m) { return m.key.ends_with("_ratio") || m.key == "latency_cv" ? 4 : 3; }

std::string VerdictHeading(Verdict v) {
  std::string heading(VerdictName(v));
  for (char& ch : heading) ch = ch == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return heading;
}

std::array<size_t, 4> CountChanges(const Comparison& c) {
  std::array<size_t, 4> counts{};
  for (const KernelDelta& k : c.kernels) counts[static_cast<size_t>(k.change)]++;
  return counts;
}

std::string MdCode(const std::string& s, bool in_table) {
  std::string out = "`";
  for (char ch : s) {
    if (ch == '`') out += '\'';
    else if (ch == '|' && in_table) out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out + "`";
}

namespace {

constexpr size_t kMarkdownKernelRows = 20;
constexpr size_t kMarkdownContributorRows = 10;

// Plain Markdown text: the characters that can start markup, links or HTML backslash-escaped
// (CommonMark allows it for any ASCII punctuation), line breaks flattened, so a trace string is
// never markup or HTML.
std::string MdText(const std::string& s) {
  constexpr std::string_view kMarkup = "\\`*_{}[]<>()#+-.!|~&";
  std::string out;
  for (char ch : s) {
    if (ch == '\n' || ch == '\r') {
      out += ' ';
      continue;
    }
    if (kMarkup.find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

// A fenced code block: nothing inside is markup. The fence is longer than any backtick run.
std::string MdFenced(const std::string& s) {
  size_t run = 0, longest = 0;
  std::string body;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    body += ch == '\n' || ch == '\r' ? ' ' : ch;
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  return fence + "\n" + body + "\n" + fence + "\n";
}

std::string Cell(bool has, double v, int decimals) { return has ? FormatNumber(v, decimals) : "n/a"; }

void MetricsTable(std::ostream& out, const Comparison& c) {
  out << "| metric | base | new | delta | delta % |\n|---|---:|---:|---:|---:|\n";
  for (const MetricDelta& m : c.metrics) {
    if (!m.has_base && !m.has_new) continue;
    const int d = MetricDecimals(m);
    out << "| " << m.key << " | " << Cell(m.has_base, m.base, d) << " | " << Cell(m.has_new, m.next, d) << " | "
        << (m.has_base && m.has_new ? FormatSigned(m.delta, d) : "n/a") << " | "
        << (m.has_pct ? FormatSigned(m.pct, 2) + "%" : "n/a") << " |\n";
  }
}

std::string Share(bool has, double share) { return has ? FormatNumber(share * 100, 1) + "%" : "n/a"; }
std::string Pct(bool has, double pct) { return has ? FormatSigned(pct, 2) + "%" : "n/a"; }

void ContributorTables(std::ostream& out, const Comparison& c) {
  if (!c.has_latency || c.latency_delta_ms == 0) return;
  out << "\n### What moved the latency (" << FormatSigned(c.latency_delta_ms, 3) << " ms per iteration)\n\n";
  if (!c.kernel_contributors.empty()) {
    out << "| kernel | base ms/iter | new ms/iter | delta ms/iter | delta % of its base | share of the change |\n"
           "|---|---:|---:|---:|---:|---:|\n";
    for (size_t j = 0; j < c.kernel_contributors.size() && j < kMarkdownContributorRows; ++j) {
      const KernelDelta& k = c.kernels[c.kernel_contributors[j]];
      out << "| " << MdCode(k.name) << " | " << FormatNumber(k.base_ms, 3) << " | " << FormatNumber(k.new_ms, 3)
          << " | " << FormatSigned(k.delta_ms, 3) << " | " << Pct(k.has_delta_pct, k.delta_pct) << " | "
          << Share(k.has_share, k.share_of_change) << " |\n";
    }
    out << "\nKernel time is summed over streams; on overlapping streams it can exceed its effect on latency.\n\n";
    if (const double kernels = KernelDeltaMs(c); kernels * c.latency_delta_ms < 0)
      out << "The kernels' GPU time per iteration as a whole moved the other way (" << FormatSigned(kernels, 3)
          << " ms): the kernels above grew, but the change is in the phases below.\n\n";
  }
  if (!c.significant) {
    out << "Shares of the change are given only when the latency change is significant (Mann-Whitney p < "
        << FormatNumber(c.options.alpha, -1) << ").\n\n";
  }
  if (!c.phases.empty()) {
    out << "| phase | base ms | new ms | delta ms | share of the change |\n|---|---:|---:|---:|---:|\n";
    for (const PhaseDelta& p : c.phases)
      out << "| " << p.phase << " | " << FormatNumber(p.base_ms, 3) << " | " << FormatNumber(p.new_ms, 3) << " | "
          << FormatSigned(p.delta_ms, 3) << " | " << Share(p.has_share, p.share_of_change) << " |\n";
  }
}

void KernelFamilies(std::ostream& out, const Comparison& c) {
  if (c.families.empty()) return;
  out << "\n### Kernel families whose GPU time changed\n\n";
  // What a change such as torch.compile fused away (base only) and generated (new only).
  for (auto [change, what] : {std::pair{KernelChange::kRemoved, "Removed (in base only)"},
                              std::pair{KernelChange::kAdded, "Added (in new only)"}}) {
    const FamilyTotals t = TotalFamilies(c, change);
    if (t.families == 0) continue;
    out << "- " << what << ": " << t.families << (t.families == 1 ? " family, " : " families, ")
        << FormatSigned(t.delta_ms, 3) << " ms and " << FormatSigned(t.delta_launches, 1)
        << " launches per iteration\n";
  }
  out << "\n| kernel family | change | variants | base ms/iter | new ms/iter | delta ms/iter | delta % of its base | "
         "launches/iter base / new |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (size_t j = 0; j < c.families.size() && j < kMarkdownKernelRows; ++j) {
    const FamilyDelta& f = c.families[j];
    out << "| " << MdCode(f.name) << " | " << KernelChangeName(f.change) << " | " << f.variants << " | "
        << FormatNumber(f.base_ms, 3) << " | " << FormatNumber(f.new_ms, 3) << " | " << FormatSigned(f.delta_ms, 3)
        << " | " << (f.has_delta_pct ? Pct(true, f.delta_pct) : std::string("n/a")) << " | "
        << FormatNumber(f.base_launches, 1) << " / " << FormatNumber(f.new_launches, 1) << " |\n";
  }
  if (c.families.size() > kMarkdownKernelRows)
    out << "\n" << c.families.size() - kMarkdownKernelRows << " more in the JSON comparison (--json).\n";
}

void KernelChanges(std::ostream& out, const Comparison& c) {
  if (c.kernels.empty()) return;
  const std::array<size_t, 4> counts = CountChanges(c);
  out << "\n### Kernel changes\n\n"
      << counts[static_cast<size_t>(KernelChange::kAdded)] << " added, "
      << counts[static_cast<size_t>(KernelChange::kRemoved)] << " removed, "
      << counts[static_cast<size_t>(KernelChange::kChanged)] << " changed, "
      << counts[static_cast<size_t>(KernelChange::kUnchanged)] << " unchanged (per-iteration time).\n\n";
  size_t listed = 0, changed = c.kernels.size() - counts[static_cast<size_t>(KernelChange::kUnchanged)];
  if (changed == 0) return;
  out << "| change | kernel | base ms/iter | new ms/iter | delta ms/iter | launches base / new |\n"
         "|---|---|---:|---:|---:|---:|\n";
  for (const KernelDelta& k : c.kernels) {
    if (k.change == KernelChange::kUnchanged) continue;
    if (listed++ == kMarkdownKernelRows) break;
    out << "| " << KernelChangeName(k.change) << " | " << MdCode(k.name) << " | " << FormatNumber(k.base_ms, 3) << " | "
        << FormatNumber(k.new_ms, 3) << " | " << FormatSigned(k.delta_ms, 3) << " | " << k.base_count << " / "
        << k.new_count << " |\n";
  }
  if (changed > kMarkdownKernelRows)
    out << "\n" << changed - kMarkdownKernelRows << " more in the JSON comparison (--json).\n";
}

void Statistics(std::ostream& out, const Comparison& c) {
  const MannWhitneyResult& mw = c.mann_whitney;
  const BootstrapResult& bs = c.bootstrap;
  out << "\n### Statistics on the per-iteration latency\n\n";
  if (mw.ok)
    out << "- Mann-Whitney U = " << FormatNumber(mw.u, 1) << ", two-sided p = " << FormatP(mw.p_two_sided)
        << " (" << (mw.exact ? "exact" : "normal approximation") << "): "
        << (c.significant ? "significant" : "not significant") << " at alpha = " << FormatNumber(c.options.alpha, -1)
        << "\n";
  else
    out << "- Mann-Whitney U: not computed (" << MdText(mw.reason) << ")\n";
  if (bs.ok)
    out << "- Bootstrap " << FormatNumber(bs.confidence * 100, -1) << "% interval of mean(new) / mean(base): "
        << FormatNumber(bs.ratio, 4) << " [" << FormatNumber(bs.lo, 4) << ", " << FormatNumber(bs.hi, 4) << "] ("
        << bs.resamples << " resamples)\n";
  else
    out << "- Bootstrap interval: not computed (" << MdText(bs.reason) << ")\n";
  for (const SideInfo* s : {&c.base, &c.next})
    out << "- Noise of " << MdCode(s->label, false) << ": " << s->samples << " iterations"
        << (s->skipped > 0 ? " (" + std::to_string(s->skipped) + " warm-up dropped)" : std::string()) << ", CV "
        << (s->has_cv ? FormatNumber(s->cv, 4) : "n/a") << (s->has_cv && s->cv > 0.15 ? " (unstable: CV > 0.15)" : "")
        << "\n";
}

void List(std::ostream& out, const char* title, const std::vector<std::string>& items) {
  if (items.empty()) return;
  out << "\n### " << title << "\n\n";
  for (const std::string& s : items) out << "- " << MdText(s) << "\n";
}

// XML 1.0 text or attribute value: markup characters as entities, control characters that XML
// cannot carry dropped.
std::string Xml(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t' || ch == '\r') out += ch;
    }
  }
  return out;
}

struct JunitCase {
  std::string name;
  std::string kind;     // "", "failure", "error", "skipped"
  std::string message;
};

}  // namespace

std::string ComparisonMarkdown(const Comparison& c) {
  std::ostringstream out;
  out << "## tracegate: " << VerdictHeading(c.verdict) << "\n\n" << MdFenced(c.verdict_text) << "\n";
  out << "Base " << MdCode(c.base.label, false) << ", new " << MdCode(c.next.label, false) << ", threshold +"
      << FormatNumber(c.options.threshold_pct, -1) << "%"
      << (c.options.require_significance ? ", significance required" : "") << "\n\n";
  for (const SideInfo* s : {&c.base, &c.next})
    if (s->skipped > 0) out << "- Warm-up, " << (s == &c.base ? "base" : "new") << ": " << MdText(s->warmup) << "\n";
  if (c.base.skipped > 0 || c.next.skipped > 0) out << "\n";
  MetricsTable(out, c);
  RankTable(out, c, true);
  ContributorTables(out, c);
  KernelFamilies(out, c);
  KernelChanges(out, c);
  Statistics(out, c);
  std::vector<std::string> problems;
  for (const CompareProblem& p : c.problems) problems.push_back(p.message);
  List(out, "Why it cannot judge", problems);
  List(out, "Notes", c.notes);
  return out.str();
}

std::string ComparisonJunit(const Comparison& c) {
  std::vector<JunitCase> cases;
  for (const char* check : {"inputs", "devices", "data_quality", "latency"}) {
    JunitCase jc{check == std::string("latency") ? "avg_latency_ms" : check, "", ""};
    for (const CompareProblem& p : c.problems)
      if (p.check == check) {
        jc.kind = "error";
        jc.message += (jc.message.empty() ? "" : "; ") + p.message;
      }
    cases.push_back(std::move(jc));
  }
  // Checks that could not run because an input is unusable are skipped, not passed.
  const bool inputs_ok = cases.front().kind.empty();
  for (JunitCase& jc : cases)
    if (!inputs_ok && jc.kind.empty()) jc = {jc.name, "skipped", "not judged: the inputs cannot be compared"};
  const bool latency_failed = c.verdict == Verdict::kRegression && c.over_threshold &&
                              (!c.options.require_significance || c.significant);
  if (c.options.has_kernel_threshold) {
    JunitCase kernels{"kernel_gpu_time", "", ""};
    if (!c.families_over.empty()) kernels = {kernels.name, "failure", c.verdict_text};
    else if (c.verdict == Verdict::kCannotJudge) kernels = {kernels.name, "skipped", "not judged: the inputs cannot be compared"};
    cases.push_back(std::move(kernels));
  }
  JunitCase& latency_case = cases[3];
  if (latency_failed) {
    latency_case = {latency_case.name, "failure", c.verdict_text};
  } else if (c.verdict == Verdict::kCannotJudge && latency_case.kind.empty()) {
    latency_case = {latency_case.name, "skipped", "not judged: the inputs cannot be compared"};
  }
  size_t failures = 0, errors = 0, skipped = 0;
  for (const JunitCase& jc : cases) {
    failures += jc.kind == "failure";
    errors += jc.kind == "error";
    skipped += jc.kind == "skipped";
  }
  std::ostringstream out;
  const std::string totals = "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"" + std::to_string(errors) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"tracegate\" " << totals << ">\n"
      << "  <testsuite name=\"tracegate.gate\" " << totals << " skipped=\"" << skipped << "\">\n";
  for (const JunitCase& jc : cases) {
    out << "    <testcase classname=\"tracegate.gate\" name=\"" << Xml(jc.name) << "\"";
    if (jc.kind.empty()) {
      out << "/>\n";
      continue;
    }
    out << ">\n      <" << jc.kind << " message=\"" << Xml(jc.message) << "\"";
    if (jc.kind == "skipped") {
      out << "/>\n";
    } else {
      out << " type=\"" << VerdictName(c.verdict) << "\">" << Xml(c.verdict_text) << "</" << jc.kind << ">\n";
    }
    out << "    </testcase>\n";
  }
  out << "    <system-out>" << Xml(c.verdict_text);
  for (const std::string& n : c.notes) out << "\nnote: " << Xml(n);
  out << "</system-out>\n  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace tg
