// HtmlReport: the report document as one self-contained page. No script and no external
// resource; a Content-Security-Policy that forbids both makes a missed escape inert, but every
// string from the report is escaped anyway (HtmlEscape) — the policy is the second wall.
#include <sstream>

#include "reports/report/report_svg.h"
#include "reports/report/report_view.h"
#include "analyzer/util/fileio.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using namespace internal;

constexpr size_t kInvolvedShown = 5;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2330;
       background: #f6f7f9; }
header, main { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 20px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 28px 0 10px; border-bottom: 1px solid #d8dce3; padding-bottom: 4px; }
section { background: #fff; border: 1px solid #e1e4ea; border-radius: 6px; padding: 4px 16px 14px;
          margin-bottom: 14px; }
.facts { color: #4a5263; margin: 0 0 12px; }
.facts b { color: #1d2330; font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px; }
.card { border: 1px solid #e1e4ea; border-radius: 5px; padding: 6px 10px; }
.card .label { color: #5b6475; font-size: 12px; }
.card .value { font-size: 18px; font-weight: 600; }
.card .reason, .na { color: #8a6d1f; font-size: 12px; }
.alert { background: #fdecea; border: 1px solid #f5c2bd; color: #8c1d13; padding: 8px 12px;
         border-radius: 5px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceef2; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.name { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.name summary { cursor: pointer; } .name details[open] summary { font-weight: 600; }
.finding { border-left: 4px solid #bab0ac; padding: 4px 12px; margin: 10px 0; }
.finding.high { border-color: #d62728; } .finding.medium { border-color: #f28e2b; }
.finding.low { border-color: #4e79a7; }
.badge { display: inline-block; font-size: 11px; text-transform: uppercase; padding: 1px 6px; border-radius: 3px;
         color: #fff; background: #7f7f7f; }
.high .badge { background: #d62728; } .medium .badge { background: #c0661a; } .low .badge { background: #4e79a7; }
.gain { font-weight: 600; }
svg.chart { display: block; margin: 8px 0; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .lane-label, svg .end { text-anchor: end; } svg .tick-label { text-anchor: middle; fill: #5b6475; }
svg .bar-label { fill: #fff; font-weight: 600; }
svg .axis, svg .tick { stroke: #9aa1ad; } svg .marker { stroke: #1d2330; stroke-dasharray: 4 3; }
.kernel { fill: #4e79a7; } .memcpy { fill: #f28e2b; } .memset { fill: #9c755f; } .gap { fill: #f8d7d3; }
.collective { fill: #b07aa1; }
.hist { fill: #59a14f; }
.phase-pre { fill: #76b7b2; } .phase-h2d { fill: #f28e2b; } .phase-infer { fill: #4e79a7; }
.phase-d2h { fill: #e15759; } .phase-post { fill: #59a14f; } .phase-idle { fill: #bab0ac; }
.key { display: inline-block; width: 11px; height: 11px; vertical-align: -1px; margin: 0 4px 0 12px; }
.key.kernel { background: #4e79a7; } .key.memcpy { background: #f28e2b; } .key.memset { background: #9c755f; }
.key.gap { background: #f8d7d3; } .key.collective { background: #b07aa1; }
footer { color: #5b6475; font-size: 12px; max-width: 1280px; margin: 0 auto; padding: 8px 24px 24px; }
)css";

void HeadSection(std::ostream& out, const json& doc) {
  std::string model = Text(doc, "model");
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<link rel=\"icon\" href=\"data:,\">\n"
      << "<title>tracegate report" << (model.empty() ? "" : ": " + Esc(model)) << "</title>\n"
      << "<style>" << kStyle << "</style>\n</head>\n<body>\n<header>\n<h1>tracegate report"
      << (model.empty() ? "" : ": " + Esc(model)) << "</h1>\n<p class=\"facts\">";
  bool first = true;
  for (const auto& [label, value] : RunFacts(doc)) {
    out << (first ? "" : " · ") << "<b>" << Esc(label) << "</b> <span class=\"name\">" << Esc(value) << "</span>";
    first = false;
  }
  out << "</p>\n";
  if (Text(doc, "schema").empty()) out << "<p class=\"alert\">Not a tracegate report: no schema key.</p>\n";
  if (QualityVerdict(doc) == "errors")
    out << "<p class=\"alert\">Data quality errors: the numbers below may be wrong (see Data quality).</p>\n";
  out << "</header>\n<main>\n";
}

void HeadlineSection(std::ostream& out, const json& doc) {
  out << "<h2 id=\"headline\">Headline</h2>\n<section class=\"cards\">\n";
  for (const HeadlineRow& r : internal::Headline(doc)) {
    out << "<div class=\"card\"><div class=\"label\">" << Esc(r.label) << "</div><div class=\"value\">"
        << Esc(r.value.text) << "</div>";
    if (!r.value.present) out << "<div class=\"reason\">" << Esc(r.value.reason) << "</div>";
    out << "</div>\n";
  }
  out << "</section>\n";
}

void TimelineSection(std::ostream& out, const json& doc) {
  const json& tl = Object(doc, "timeline");
  out << "<h2 id=\"timeline\">Timeline of one iteration</h2>\n<section>\n<p>";
  if (auto it = Number(tl, "iteration")) {
    out << StrFormat("Iteration %.0f", *it);
    if (!Text(tl, "name").empty()) out << " (<span class=\"name\">" << Esc(Text(tl, "name")) << "</span>)";
    out << ", " << Esc(Text(tl, "selection")) << ": " << Esc(ShowInline(Show(tl, "latency_ms", Unit::kMs))) << ". ";
  }
  out << "One lane per stream; shaded background is idle time (a gap)."
      << "<span class=\"key kernel\"></span>kernel<span class=\"key collective\"></span>collective"
      << "<span class=\"key memcpy\"></span>memcpy"
      << "<span class=\"key memset\"></span>memset<span class=\"key gap\"></span>idle</p>\n";
  out << internal::TimelineSvg(doc);
  if (auto dropped = Number(tl, "items_dropped"); dropped && *dropped > 0)
    out << "<p class=\"na\">" << StrFormat("%.0f of %.0f items", *dropped, Number(tl, "items_total").value_or(0))
        << " are not drawn (the shortest; the report lists at most "
        << StrFormat("%.0f", Number(tl, "item_cap").value_or(0)) << "): some small gaps may be covered work.</p>\n";
  out << "</section>\n";
}

// The chart and the table show short names; the table keeps the full demangled name (template
// arguments, parameters) in a disclosure when it differs.
void KernelTableSection(std::ostream& out, const json& doc) {
  const json& kernels = Array(doc, "top_kernels");
  if (kernels.empty()) return;
  out << "<table><tr><th class=\"num\">#</th><th>Kernel</th><th class=\"num\">Calls</th><th class=\"num\">Total</th>"
         "<th class=\"num\">Mean</th><th class=\"num\">p95</th><th class=\"num\">Share</th></tr>\n";
  size_t rank = 0;
  for (const json& k : kernels) {
    auto ns_as_ms = [&](const char* key) {
      auto v = Number(k, key);
      return v ? FormatValue(*v / 1e6, Unit::kMs) : std::string("n/a");
    };
    const std::string name = Text(k, "name");
    const std::string short_name = ShortKernelName(name);
    out << "<tr><td class=\"num\">" << ++rank << "</td><td class=\"name\">";
    if (short_name == name)
      out << Esc(name);
    else
      out << "<details><summary>" << Esc(short_name) << "</summary>" << Esc(name) << "</details>";
    out << "</td><td class=\"num\">" << Esc(ShowInline(Show(k, "count", Unit::kCount))) << "</td><td class=\"num\">"
        << Esc(ShowInline(Show(k, "total_ms", Unit::kMs))) << "</td><td class=\"num\">" << ns_as_ms("mean_ns")
        << "</td><td class=\"num\">" << ns_as_ms("p95_ns") << "</td><td class=\"num\">"
        << Esc(ShowInline(Show(k, "share_ratio", Unit::kPercent))) << "</td></tr>\n";
  }
  out << "</table>\n";
}

void ChartsSection(std::ostream& out, const json& doc) {
  out << "<h2 id=\"phases\">Phase breakdown</h2>\n<section>\n<p>Share of the summed iteration latency.</p>\n"
      << internal::PhaseBarSvg(doc) << "</section>\n";
  out << "<h2 id=\"kernels\">Top kernels</h2>\n<section>\n";
  if (const std::string note = internal::WholeTraceNote(doc); !note.empty()) out << "<p>Of the " << Esc(note) << ".</p>\n";
  out << internal::KernelBarsSvg(doc);
  KernelTableSection(out, doc);
  out << "</section>\n";
  out << "<h2 id=\"latency\">Latency histogram</h2>\n<section>\n<p>"
      << StrFormat("%zu iteration(s).", Array(doc, "latency_samples_ms").size()) << "</p>\n"
      << internal::LatencyHistogramSvg(doc) << "</section>\n";
}

// Only for traces with collectives: the others' reports read as before.
void CollectivesSection(std::ostream& out, const json& doc) {
  const std::vector<CollectiveCells> rows = CollectiveTable(doc);
  if (rows.empty()) return;
  out << "<h2 id=\"collectives\">Collectives</h2>\n<section>\n";
  if (std::string rank = RankCommunicationText(doc); !rank.empty()) out << "<p>" << Esc(rank) << ".</p>\n";
  out << "<table><tr><th>Collective</th><th>Dtype</th><th class=\"num\">Message</th><th class=\"num\">Group</th>"
         "<th class=\"num\">Calls</th><th class=\"num\">Total</th><th class=\"num\">Mean</th>"
         "<th class=\"num\">Alg bw</th><th class=\"num\">Bus bw</th></tr>\n";
  for (const CollectiveCells& r : rows) {
    out << "<tr><td class=\"name\">" << Esc(r.collective) << "</td><td>" << Esc(r.dtype) << "</td>";
    for (const std::string* cell : {&r.message, &r.group, &r.calls, &r.total, &r.mean, &r.algbw, &r.busbw})
      out << "<td class=\"num\">" << Esc(*cell) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n</section>\n";
}

void OneFinding(std::ostream& out, const json& f) {
  std::string priority = Text(f, "priority");
  out << "<article class=\"finding " << Esc(priority) << "\">\n<h3><span class=\"badge\">" << Esc(priority)
      << "</span> " << Esc(Text(f, "title")) << " <small class=\"name\">" << Esc(Text(f, "id")) << "</small></h3>\n";
  if (!Text(f, "summary").empty()) out << "<p>" << Esc(Text(f, "summary")) << "</p>\n";
  out << "<p>Predicted gain: <span class=\"gain\">" << Esc(GainText(f)) << "</span>";
  std::string assumption = Text(Object(f, "amdahl"), "assumption");
  if (!assumption.empty()) out << " — " << Esc(assumption);
  out << "</p>\n";
  if (std::string overlap = OverlapText(f); !overlap.empty()) out << "<p class=\"na\">" << Esc(overlap) << "</p>\n";
  const json& evidence = Array(f, "evidence");
  if (!evidence.empty()) {
    out << "<p>Evidence:</p><ul>\n";
    for (const json& e : evidence) out << "<li>" << Esc(EvidenceText(e)) << "</li>\n";
    out << "</ul>\n";
  }
  const json& involved = Array(f, "involved");
  if (!involved.empty()) {
    out << "<table><tr><th>Involved</th><th>Name</th><th class=\"num\">Count</th><th class=\"num\">Time</th>"
           "<th>Detail</th></tr>\n";
    for (size_t i = 0; i < involved.size() && i < kInvolvedShown; ++i) {
      const json& v = involved[i];
      out << "<tr><td>" << Esc(Text(v, "kind")) << "</td><td class=\"name\">" << Esc(Text(v, "name"))
          << "</td><td class=\"num\">" << Esc(ShowInline(Show(v, "count", Unit::kCount))) << "</td><td class=\"num\">"
          << Esc(ShowInline(Show(v, "time_ms", Unit::kMs))) << "</td><td>" << Esc(Text(v, "detail")) << "</td></tr>\n";
    }
    out << "</table>\n";
    if (involved.size() > kInvolvedShown)
      out << "<p class=\"na\">" << involved.size() - kInvolvedShown << " more in the JSON report.</p>\n";
  }
  const json& strategies = Array(f, "strategies");
  if (!strategies.empty()) {
    out << "<p>Strategies:</p><ol>\n";
    for (const json& s : strategies)
      if (s.is_string()) out << "<li>" << Esc(s.get<std::string>()) << "</li>\n";
    out << "</ol>\n";
  }
  out << "</article>\n";
}

void FindingsSection(std::ostream& out, const json& doc) {
  const json& findings = Array(doc, "findings");
  out << "<h2 id=\"findings\">Findings (" << findings.size() << ")</h2>\n<section>\n";
  if (std::string why = EmptyListReason(doc, "findings", "no rule matched"); !why.empty())
    out << "<p class=\"na\">None: " << Esc(why) << "</p>\n";
  for (const json& f : findings) OneFinding(out, f);
  if (std::string combined = CombinedText(doc); !combined.empty() && !findings.empty())
    out << "<p>Combined estimate: " << Esc(combined) << "</p>\n";
  out << "</section>\n";
}

void QualitySection(std::ostream& out, const json& doc) {
  out << "<h2 id=\"quality\">Data quality: " << Esc(QualityVerdict(doc)) << "</h2>\n<section>\n";
  std::vector<const json*> counters = NonZeroCounters(doc);
  if (counters.empty()) {
    out << (Find(doc, "data_quality") ? "<p>Every counter is zero.</p>\n"
                                      : "<p class=\"na\">n/a: this report has no data_quality section</p>\n");
  } else {
    out << "<table><tr><th>Counter</th><th>Severity</th><th class=\"num\">Count</th><th>Meaning</th></tr>\n";
    for (const json* c : counters)
      out << "<tr><td class=\"name\">" << Esc(Text(*c, "key")) << "</td><td>" << Esc(Text(*c, "severity"))
          << "</td><td class=\"num\">" << Esc(ShowInline(Show(*c, "count", Unit::kCount))) << "</td><td>"
          << Esc(Text(*c, "description")) << "</td></tr>\n";
    out << "</table>\n";
  }
  out << "</section>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (const char* entity = HtmlEntity(ch)) out += entity;
    else if (!IsBadControl(ch)) out += ch;
  }
  return out;
}

std::string HtmlReport(const nlohmann::json& report) {
  const json doc = ValidUtf8(report);
  std::ostringstream out;
  HeadSection(out, doc);
  HeadlineSection(out, doc);
  TimelineSection(out, doc);
  ChartsSection(out, doc);
  CollectivesSection(out, doc);
  FindingsSection(out, doc);
  QualitySection(out, doc);
  out << "</main>\n<footer>Generated by tracegate from the report JSON (schema "
      << Esc(Text(doc, "schema").empty() ? "n/a" : Text(doc, "schema"))
      << "). Self-contained: no script, no network.</footer>\n</body>\n</html>\n";
  return out.str();
}

Status WriteHtmlReport(const nlohmann::json& report, const std::string& path) {
  return WriteFileAtomic(path, HtmlReport(report));
}

}  // namespace tg
