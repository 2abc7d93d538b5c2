// HtmlReport: the report document as one self-contained page, in the order a reader asks: one
// sentence (where the time goes, what to try), the findings, the headline cards, the timeline
// (where the time goes, drawn), the step time per iteration, kernels, latency, communication and
// data quality. Every string from the report is escaped (HtmlEscape); the page's one script runs
// by its hash (page_assets.h), so a missed escape would still be inert.
#include <sstream>

#include "analyzer/util/fileio.h"
#include "reports/html/analyze_page.h"
#include "reports/html/kernel_table_html.h"
#include "reports/html/page_summary.h"
#include "reports/html/timeline_html.h"
#include "reports/view/charts_html.h"
#include "reports/view/page_assets.h"
#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "tracegate/reports/report_html.h"

namespace tg {

using internal::WriteFileAtomic;

namespace {

using namespace internal;

constexpr size_t kInvolvedShown = 5;
constexpr size_t kFindingsOpen = 3;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

void HeadSection(std::ostream& out, const json& doc) {
  const std::string model = Text(doc, "model");
  const std::string title = "tracegate report" + (model.empty() ? "" : ": " + model);
  out << PageHead(title) << "<header>\n<h1>" << Esc(title) << "</h1>\n<p class=\"facts\">";
  for (const auto& [label, value] : RunFacts(doc))
    // Short values (a version, a date) never break; long ones (paths, how iterations were found) wrap.
    out << "<span class=\"fact" << (value.size() <= 40 ? " short" : "") << "\"><b>" << Esc(label) << "</b> <span class=\"name\">"
        << Esc(value) << "</span></span> ";
  out << "</p>\n";
  if (Text(doc, "schema").empty()) out << "<p class=\"alert\">Not a tracegate report: no schema key.</p>\n";
  if (QualityVerdict(doc) == "errors")
    out << "<p class=\"alert\">Data quality errors: the numbers below may be wrong (see Data quality).</p>\n";
  const std::string priority = SummaryPriority(doc);
  out << "<p id=\"summary\" class=\"verdict" << (priority.empty() ? "" : " " + Esc(priority)) << "\">"
      << Esc(SummarySentence(doc)) << "</p>\n</header>\n<main>\n";
}

void CardsSection(std::ostream& out, const json& doc) {
  std::vector<std::string> hidden;
  const std::vector<HeadlineRow> cards = HeadlineCards(doc, &hidden);
  out << "<h2 id=\"headline\">Headline</h2>\n<section class=\"cards\">\n";
  for (const HeadlineRow& r : cards)
    out << "<div class=\"card\"><div class=\"label\">" << Esc(r.label) << "</div><div class=\"value\">" << Esc(r.value.text)
        << "</div></div>\n";
  out << "</section>\n";
  if (!hidden.empty()) {
    std::string list;
    for (const std::string& h : hidden) list += (list.empty() ? "" : "; ") + h;
    out << "<p class=\"note\">Not shown: " << Esc(list) << ".</p>\n";
  }
}

// A finding: open (an article) or folded to its title line (details), for the ones after the first.
void OneFinding(std::ostream& out, const json& f, const std::vector<NumberedGap>& gaps, bool folded) {
  const std::string priority = Text(f, "priority");
  const auto gain = Number(Object(f, "amdahl"), "gain_pct");
  const std::string title = "<span class=\"badge\">" + Esc(priority) + "</span> " + Esc(Text(f, "title")) +
                            " <small class=\"name\">" + Esc(Text(f, "id")) + "</small>" +
                            (gain ? "<span class=\"gain\">" + Esc(StrFormat("%+.1f%%", *gain)) + "</span>" : std::string());
  if (folded)
    out << "<details class=\"finding folded " << Esc(priority) << "\">\n<summary><h3>" << title << "</h3></summary>\n";
  else
    out << "<article class=\"finding " << Esc(priority) << "\">\n<h3>" << title << "</h3>\n";
  if (!Text(f, "summary").empty()) out << "<p>" << Esc(Text(f, "summary")) << "</p>\n";
  const json& strategies = Array(f, "strategies");
  out << "<p class=\"try\">";
  for (const json& s : strategies)
    if (s.is_string()) {
      out << "<b>Try first:</b> " << Esc(s.get<std::string>()) << ". ";
      break;
    }
  out << "<span class=\"note\">Predicted gain " << Esc(GainText(f));
  const std::string assumption = Text(Object(f, "amdahl"), "assumption");
  if (!assumption.empty()) out << " — " << Esc(assumption);
  out << ".</span></p>\n";
  // The gaps it cites, by their numbers on the timeline.
  std::string refs;
  for (const json& v : Array(f, "involved"))
    if (int n = GapNumberOf(gaps, v); n > 0 && refs.find(StrFormat(">%d<", n)) == std::string::npos)
      refs += StrFormat(" <a class=\"gapref\" href=\"#gap-%d\">%d</a>", n, n);
  if (!refs.empty()) out << "<p>Gaps on the timeline:" << refs << "</p>\n";
  out << "<details class=\"more\"><summary>Evidence, involved and strategies</summary>\n";
  if (std::string overlap = OverlapText(f); !overlap.empty()) out << "<p class=\"note\">" << Esc(overlap) << "</p>\n";
  const json& evidence = Array(f, "evidence");
  if (!evidence.empty()) {
    out << "<p>Evidence:</p><ul>\n";
    for (const json& e : evidence) out << "<li>" << Esc(EvidenceText(e)) << "</li>\n";
    out << "</ul>\n";
  }
  const json& involved = Array(f, "involved");
  if (!involved.empty()) {
    out << "<div class=\"tablewrap\"><table><tr><th>Involved</th><th>Name</th><th class=\"num\">Count</th>"
           "<th class=\"num\">Time (ms)</th><th>Detail</th></tr>\n";
    for (size_t i = 0; i < involved.size() && i < kInvolvedShown; ++i) {
      const json& v = involved[i];
      const int n = GapNumberOf(gaps, v);
      out << "<tr><td>" << Esc(Text(v, "kind"))
          << (n > 0 ? StrFormat(" <a class=\"gapref\" href=\"#gap-%d\">%d</a>", n, n) : std::string()) << "</td><td class=\"name\">"
          << Esc(Text(v, "name")) << "</td><td class=\"num\">" << Esc(ShowInline(Show(v, "count", Unit::kCount)))
          << "</td><td class=\"num\">" << Esc(Number(v, "time_ms") ? StrFormat("%.3f", *Number(v, "time_ms")) : "n/a")
          << "</td><td>"
          << Esc(Text(v, "detail")) << "</td></tr>\n";
    }
    out << "</table></div>\n";
    if (involved.size() > kInvolvedShown)
      out << "<p class=\"note\">" << involved.size() - kInvolvedShown << " more in the JSON report.</p>\n";
  }
  if (!strategies.empty()) {
    out << "<p>Strategies:</p><ol>\n";
    for (const json& s : strategies)
      if (s.is_string()) out << "<li>" << Esc(s.get<std::string>()) << "</li>\n";
    out << "</ol>\n";
  }
  out << "</details>\n" << (folded ? "</details>\n" : "</article>\n");
}

void FindingsSection(std::ostream& out, const json& doc, const std::vector<NumberedGap>& gaps) {
  const json& findings = Array(doc, "findings");
  out << "<h2 id=\"findings\">Findings (" << findings.size() << ")</h2>\n<section>\n";
  if (std::string why = EmptyListReason(doc, "findings", "no rule matched"); !why.empty())
    out << "<p class=\"na\">None: " << Esc(why) << "</p>\n";
  // The first few open; the rest folded to one line each, so the page reaches the charts.
  for (size_t i = 0; i < findings.size(); ++i) {
    if (i == kFindingsOpen)
      out << "<p class=\"note\">" << findings.size() - kFindingsOpen << " more, by priority and gain: click one to open it.</p>\n";
    OneFinding(out, findings[i], gaps, i >= kFindingsOpen);
  }
  if (std::string combined = CombinedText(doc); !combined.empty() && !findings.empty())
    out << "<p>Combined estimate: " << Esc(combined) << "</p>\n";
  out << "</section>\n";
}

void ChartsSection(std::ostream& out, const json& doc) {
  out << "<h2 id=\"steps\">Step time per iteration</h2>\n<section>\n<p>Each iteration's latency by phase; the "
         "outlined column is the one on the timeline.</p>\n"
      << StepTimeSvg(doc) << "<p id=\"phases\">Share of the summed iteration latency:</p>\n"
      << PhaseBarSvg(doc) << "</section>\n";
  out << "<h2 id=\"kernels\">Kernels</h2>\n<section>\n";
  if (const std::string note = WholeTraceNote(doc); !note.empty())
    out << "<p>Top kernels of the " << Esc(note) << ".</p>\n";
  out << KernelBarsSvg(doc);
  if (!Array(doc, "kernel_table").empty()) out << "<p>Every kernel of the kept iterations:</p>\n";
  out << KernelTableHtml(doc, ReportKernelLabels(doc)) << "</section>\n";
  out << "<h2 id=\"latency\">Latency histogram</h2>\n<section>\n" << LatencyHistogramHtml(doc) << "</section>\n";
}

// Only for traces with collectives: the others' reports read as before.
void CollectivesSection(std::ostream& out, const json& doc) {
  const std::vector<CollectiveCells> rows = CollectiveTable(doc);
  if (rows.empty()) return;
  out << "<h2 id=\"collectives\">Collectives</h2>\n<section>\n";
  if (std::string rank = RankCommunicationText(doc); !rank.empty()) out << "<p>" << Esc(rank) << ".</p>\n";
  out << "<div class=\"tablewrap\"><table><tr><th>Collective</th><th>Dtype</th><th class=\"num\">Message</th>"
         "<th class=\"num\">Group</th><th class=\"num\">Calls</th><th class=\"num\">Total</th><th class=\"num\">Mean</th>"
         "<th class=\"num\">Alg bw</th><th class=\"num\">Bus bw</th></tr>\n";
  for (const CollectiveCells& r : rows) {
    out << "<tr><td class=\"name\">" << Esc(r.collective) << "</td><td>" << Esc(r.dtype) << "</td>";
    for (const std::string* cell : {&r.message, &r.group, &r.calls, &r.total, &r.mean, &r.algbw, &r.busbw})
      out << "<td class=\"num\">" << Esc(*cell) << "</td>";
    out << "</tr>\n";
  }
  out << "</table></div>\n</section>\n";
}

void QualitySection(std::ostream& out, const json& doc) {
  out << "<h2 id=\"quality\">Data quality: " << Esc(QualityVerdict(doc)) << "</h2>\n<section>\n";
  std::vector<const json*> counters = NonZeroCounters(doc);
  if (counters.empty()) {
    out << (Find(doc, "data_quality") ? "<p>Every counter is zero.</p>\n"
                                      : "<p class=\"na\">n/a: this report has no data_quality section</p>\n");
  } else {
    out << "<div class=\"tablewrap\"><table><tr><th>Counter</th><th>Severity</th><th class=\"num\">Count</th>"
           "<th>Meaning</th></tr>\n";
    for (const json* c : counters)
      out << "<tr><td class=\"name\">" << Esc(Text(*c, "key")) << "</td><td>" << Esc(Text(*c, "severity"))
          << "</td><td class=\"num\">" << Esc(ShowInline(Show(*c, "count", Unit::kCount))) << "</td><td>"
          << Esc(Text(*c, "description")) << "</td></tr>\n";
    out << "</table></div>\n";
  }
  out << "</section>\n";
}

}  // namespace

std::string internal::AnalyzePage(const nlohmann::json& report, const std::string& lead_html) {
  const json doc = ValidUtf8(report);
  const std::vector<NumberedGap> gaps = NumberGaps(doc);
  std::ostringstream out;
  HeadSection(out, doc);
  out << lead_html;
  FindingsSection(out, doc, gaps);
  CardsSection(out, doc);
  out << "<h2 id=\"timeline\">Timeline: where the time goes</h2>\n<section>\n" << TimelineHtml(doc, gaps) << "</section>\n";
  ChartsSection(out, doc);
  CollectivesSection(out, doc);
  QualitySection(out, doc);
  out << "</main>\n"
      << PageEnd("Generated by tracegate from the report JSON (schema " +
                 (Text(doc, "schema").empty() ? std::string("n/a") : Text(doc, "schema")) +
                 "). Self-contained: one inline script (zoom, pan, table sorting), no network.");
  return out.str();
}

std::string HtmlReport(const nlohmann::json& report) { return internal::AnalyzePage(report, ""); }

Status WriteHtmlReport(const nlohmann::json& report, const std::string& path) {
  return WriteFileAtomic(path, HtmlReport(report));
}

}  // namespace tg
