// MarkdownReport: the report document as GitHub-flavoured Markdown for a pull-request comment or
// a CI step summary. Short by design (GitHub caps a comment at 65,536 characters): the top
// kernels are cut at kMaxKernels, evidence at kMaxEvidence per finding.
#include <sstream>
#include <string_view>

#include "reports/report/report_view.h"
#include "analyzer/util/fileio.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using namespace internal;

constexpr size_t kMaxKernels = 15;
constexpr size_t kMaxEvidence = 3;
constexpr size_t kMaxNameChars = 80;

std::string Md(const std::string& s) { return MarkdownEscape(s); }

void FactsSection(std::ostream& out, const json& doc) {
  std::string line;
  for (const auto& [label, value] : RunFacts(doc))
    line += (line.empty() ? "" : " · ") + std::string("**") + label + "** " + Md(value);
  if (!line.empty()) out << line << "\n\n";
}

void HeadlineTableSection(std::ostream& out, const json& doc) {
  out << "### Headline\n\n| Metric | Value |\n|---|---:|\n";
  for (const HeadlineRow& r : Headline(doc)) out << "| " << r.label << " | " << Md(ShowInline(r.value)) << " |\n";
  out << "\n";
}

void FindingsSection(std::ostream& out, const json& doc) {
  const json& findings = Array(doc, "findings");
  out << "### Findings (" << findings.size() << ")\n\n";
  if (std::string why = EmptyListReason(doc, "findings", "no rule matched"); !why.empty())
    out << "None: " << why << ".\n\n";
  size_t n = 0;
  for (const json& f : findings) {
    out << ++n << ". **[" << Md(Text(f, "priority")) << "] " << Md(Text(f, "title")) << "**";
    if (!Text(f, "summary").empty()) out << " — " << Md(Text(f, "summary"));
    out << "\n";
    const json& evidence = Array(f, "evidence");
    if (!evidence.empty()) {
      std::string line;
      for (size_t i = 0; i < evidence.size() && i < kMaxEvidence; ++i)
        line += (i ? "; " : "") + Md(EvidenceText(evidence[i]));
      if (evidence.size() > kMaxEvidence) line += StrFormat("; %zu more", evidence.size() - kMaxEvidence);
      out << "   - Evidence: " << line << "\n";
    }
    out << "   - Predicted gain: " << Md(GainText(f));
    std::string assumption = Text(Object(f, "amdahl"), "assumption");
    if (!assumption.empty()) out << " — " << Md(assumption);
    out << "\n";
    if (std::string overlap = OverlapText(f); !overlap.empty()) out << "   - Overlap: " << Md(overlap) << "\n";
    const json& strategies = Array(f, "strategies");
    if (!strategies.empty() && strategies[0].is_string())
      out << "   - First strategy: " << Md(strategies[0].get<std::string>()) << "\n";
  }
  if (std::string combined = CombinedText(doc); !combined.empty() && !findings.empty())
    out << "\nCombined estimate: " << Md(combined) << "\n";
  if (!findings.empty()) out << "\n";
}

void TopKernelsSection(std::ostream& out, const json& doc) {
  const json& kernels = Array(doc, "top_kernels");
  out << "### Top kernels\n\n";
  if (const std::string note = WholeTraceNote(doc); !note.empty()) out << "Of the " << note << ".\n\n";
  if (std::string why = EmptyListReason(doc, "top_kernels", "the trace has no kernels"); !why.empty()) {
    out << "None: " << why << ".\n\n";
    return;
  }
  out << "| # | Kernel | Calls | Total | Mean | Share |\n|--:|---|--:|--:|--:|--:|\n";
  for (size_t i = 0; i < kernels.size() && i < kMaxKernels; ++i) {
    const json& k = kernels[i];
    auto mean_ns = Number(k, "mean_ns");
    out << "| " << i + 1 << " | " << Md(Cut(ShortKernelName(Text(k, "name")), kMaxNameChars)) << " | "
        << ShowInline(Show(k, "count", Unit::kCount)) << " | " << ShowInline(Show(k, "total_ms", Unit::kMs)) << " | "
        << (mean_ns ? FormatValue(*mean_ns / 1e6, Unit::kMs) : "n/a") << " | "
        << ShowInline(Show(k, "share_ratio", Unit::kPercent)) << " |\n";
  }
  if (kernels.size() > kMaxKernels) out << "\n" << kernels.size() - kMaxKernels << " more in the JSON report.\n";
  out << "\n";
}

// Only for traces with collectives: the others' reports read as before.
void CollectivesSection(std::ostream& out, const json& doc) {
  const std::vector<CollectiveCells> rows = CollectiveTable(doc);
  if (rows.empty()) return;
  out << "### Collectives\n\n";
  if (std::string rank = RankCommunicationText(doc); !rank.empty()) out << Md(rank) << ".\n\n";
  out << "| Collective | Dtype | Message | Group | Calls | Total | Mean | Alg bw | Bus bw |\n"
         "|---|---|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const CollectiveCells& r : rows)
    out << "| " << Md(Cut(r.collective, kMaxNameChars)) << " | " << Md(r.dtype) << " | " << r.message << " | "
        << r.group << " | " << r.calls << " | " << r.total << " | " << r.mean << " | " << r.algbw << " | "
        << r.busbw << " |\n";
  out << "\n";
}

void QualitySection(std::ostream& out, const json& doc) {
  out << "### Data quality: " << QualityVerdict(doc) << "\n\n";
  std::vector<const json*> counters = NonZeroCounters(doc);
  if (counters.empty()) {
    out << (Find(doc, "data_quality") ? "Every counter is zero.\n" : "n/a (not in this report)\n");
    return;
  }
  out << "| Counter | Severity | Count | Meaning |\n|---|---|--:|---|\n";
  for (const json* c : counters)
    out << "| " << Md(Text(*c, "key")) << " | " << Md(Text(*c, "severity")) << " | "
        << ShowInline(Show(*c, "count", Unit::kCount)) << " | " << Md(Text(*c, "description")) << " |\n";
}

}  // namespace

std::string MarkdownEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // Punctuation that starts emphasis, code, links, tables, strikethrough or headings.
  constexpr std::string_view kSpecial = "\\`*_[]|~#";
  for (char ch : text) {
    const char* entity = ch == '"' || ch == '\'' ? nullptr : HtmlEntity(ch);  // quotes are plain text
    if (entity) out += entity;
    else if (static_cast<unsigned char>(ch) < 0x20) out += ' ';  // newlines would end the cell
    else out += kSpecial.find(ch) == std::string_view::npos ? std::string(1, ch) : std::string{'\\', ch};
  }
  return out;
}

std::string MarkdownReport(const nlohmann::json& report) {
  const json doc = ValidUtf8(report);
  std::ostringstream out;
  std::string model = Text(doc, "model");
  out << "## tracegate report" << (model.empty() ? "" : ": " + Md(model)) << "\n\n";
  if (Text(doc, "schema").empty()) out << "> Not a tracegate report: no `schema` key; values below are n/a.\n\n";
  FactsSection(out, doc);
  if (QualityVerdict(doc) == "errors")
    out << "> **Data quality errors**: numbers below may be wrong (see Data quality).\n\n";
  HeadlineTableSection(out, doc);
  FindingsSection(out, doc);
  TopKernelsSection(out, doc);
  CollectivesSection(out, doc);
  QualitySection(out, doc);
  return out.str();
}

Status WriteMarkdownReport(const nlohmann::json& report, const std::string& path) {
  return WriteFileAtomic(path, MarkdownReport(report));
}

}  // namespace tg
