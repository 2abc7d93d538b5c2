// BaselineHistoryHtml: `tracegate baseline history NAME --html FILE`, the saves and gates of one
// baseline as a trend chart (avg and p95 latency, a dot per row coloured by what it was) and a
// table, on the analyze page's style and script (sortable table).
#include <algorithm>
#include <optional>

#include "reports/view/charts_html.h"
#include "reports/view/page_assets.h"
#include "reports/view/report_view.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using namespace internal;

std::string Esc(std::string_view s) { return HtmlEscape(RepairUtf8(s)); }

std::optional<double> Present(double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; }

std::string Short(const std::string& commit) { return commit.size() > 12 ? commit.substr(0, 12) : commit; }

// "2024-05-23 12:00" from ISO-8601.
std::string When(const std::string& iso) {
  std::string s = iso.substr(0, std::min<size_t>(iso.size(), 16));
  std::replace(s.begin(), s.end(), 'T', ' ');
  return s;
}

std::string Sentence(const std::string& name, const std::vector<HistoryRow>& rows) {
  std::string text = StrFormat("%zu record%s of '%s'", rows.size(), rows.size() == 1 ? "" : "s", name.c_str());
  if (!rows.empty()) text += " from " + When(rows.front().recorded_at) + " to " + When(rows.back().recorded_at);
  const auto first = std::find_if(rows.begin(), rows.end(), [](const HistoryRow& r) { return r.avg_latency_ms > 0; });
  const auto last = std::find_if(rows.rbegin(), rows.rend(), [](const HistoryRow& r) { return r.avg_latency_ms > 0; });
  if (first != rows.end() && &*first != &*last)
    text += StrFormat(": avg latency %.3f ms -> %.3f ms (%+.1f%%)", first->avg_latency_ms, last->avg_latency_ms,
                      (last->avg_latency_ms / first->avg_latency_ms - 1) * 100);
  else if (first != rows.end())
    text += StrFormat(": avg latency %.3f ms", first->avg_latency_ms);
  const auto gate = std::find_if(rows.rbegin(), rows.rend(), [](const HistoryRow& r) { return r.kind == "gated"; });
  if (gate != rows.rend())
    text += "; last gate: " + (gate->verdict.empty() ? std::string("no verdict") : gate->verdict) + " (" + When(gate->recorded_at) +
            (gate->commit.empty() ? "" : ", commit " + Short(gate->commit)) + ")";
  return text + ".";
}

}  // namespace

std::string BaselineHistoryHtml(const std::string& name, const std::string& dir, const std::vector<HistoryRow>& rows) {
  std::string out = PageHead("tracegate baseline history: " + name);
  out += "<header>\n<h1>Baseline history: <span class=\"name\">" + Esc(name) + "</span></h1>\n<p class=\"facts\">" +
         "<span class=\"fact\"><b>History</b> <span class=\"name\">" + Esc(HistoryPath(dir)) + "</span></span></p>\n";
  out += "<p id=\"summary\" class=\"verdict\">" + Esc(Sentence(name, rows)) + "</p>\n</header>\n<main>\n";
  std::vector<std::string> labels, classes, titles;
  Series avg{"avg latency", "trend-avg", {}}, p95{"p95 latency", "trend-p95", {}};
  Series fps{"throughput", "trend-avg", {}};
  bool any_fps = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const HistoryRow& r = rows[i];
    labels.push_back(StrFormat("%zu", i + 1));
    classes.push_back(r.kind == "gated" ? "pt-" + (r.verdict.empty() ? std::string("cannot_judge") : r.verdict) : "pt-saved");
    titles.push_back(StrFormat("#%zu %s ", i + 1, r.kind.c_str()) + When(r.recorded_at) +
                     (r.commit.empty() ? "" : ", commit " + Short(r.commit)) +
                     (r.avg_latency_ms > 0 ? StrFormat(", avg %.3f ms", r.avg_latency_ms) : std::string()) +
                     (r.p95_latency_ms > 0 ? StrFormat(", p95 %.3f ms", r.p95_latency_ms) : std::string()) +
                     (r.verdict.empty() ? "" : ", " + r.verdict));
    avg.values.push_back(Present(r.avg_latency_ms));
    p95.values.push_back(Present(r.p95_latency_ms));
    fps.values.push_back(Present(r.throughput_fps));
    any_fps = any_fps || r.throughput_fps > 0;
  }
  out += "<h2 id=\"trend\">Latency trend</h2>\n<section>\n<p>One point per save or gate, oldest first; dots: "
         "<span class=\"key pt-saved\"></span>saved <span class=\"key pt-pass\"></span>gate passed "
         "<span class=\"key pt-regression\"></span>regression <span class=\"key pt-cannot_judge\"></span>cannot judge; "
         "lines: <span class=\"key trend-avg\"></span>avg <span class=\"key trend-p95\"></span>p95.</p>\n" +
         TrendSvg(labels, {avg, p95}, classes, titles, "latency (ms)", "save or gate (#, oldest first)", "Latency trend of the baseline") +
         "</section>\n";
  if (any_fps)
    out += "<h2 id=\"throughput\">Throughput trend</h2>\n<section>\n" +
           TrendSvg(labels, {fps}, classes, titles, "throughput (iterations/s)", "save or gate (#, oldest first)",
                    "Throughput trend of the baseline") +
           "</section>\n";
  out += "<h2 id=\"records\">Records</h2>\n<section>\n<div class=\"tablewrap\"><table id=\"history-table\" class=\"sortable\">"
         "<thead><tr><th class=\"num\" data-sort=\"num\">#</th><th data-sort=\"text\">Recorded (UTC)</th>"
         "<th data-sort=\"text\">Kind</th><th data-sort=\"text\">Commit</th><th class=\"num\" data-sort=\"num\">Avg (ms)</th>"
         "<th class=\"num\" data-sort=\"num\">Change</th><th class=\"num\" data-sort=\"num\">p95 (ms)</th>"
         "<th class=\"num\" data-sort=\"num\">Throughput (/s)</th><th data-sort=\"text\">Verdict</th><th>Source</th></tr></thead><tbody>\n";
  double first = 0;
  auto cell = [](double v, const char* format) {
    return v > 0 ? StrFormat("<td class=\"num\" data-v=\"%.17g\">", v) + StrFormat(format, v) + "</td>"
                 : std::string("<td class=\"num\">-</td>");
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const HistoryRow& r = rows[i];
    if (first == 0) first = r.avg_latency_ms;
    const double change = first > 0 && r.avg_latency_ms > 0 ? (r.avg_latency_ms / first - 1) * 100 : 0;
    out += StrFormat("<tr><td class=\"num\" data-v=\"%zu\">%zu</td><td>", i + 1, i + 1) + Esc(When(r.recorded_at)) + "</td><td>" +
           Esc(r.kind) + "</td><td class=\"name\">" + Esc(r.commit.empty() ? "-" : Short(r.commit)) + "</td>" +
           cell(r.avg_latency_ms, "%.3f") +
           (first > 0 && r.avg_latency_ms > 0 ? StrFormat("<td class=\"num\" data-v=\"%.17g\">%+.1f%%</td>", change, change)
                                              : std::string("<td class=\"num\">-</td>")) +
           cell(r.p95_latency_ms, "%.3f") + cell(r.throughput_fps, "%.3g") + "<td>" + Esc(r.verdict.empty() ? "-" : r.verdict) +
           "</td><td class=\"name\">" + Esc(r.source) + "</td></tr>\n";
  }
  out += "</tbody></table></div>\n</section>\n</main>\n";
  return out + PageEnd("Generated by tracegate from " + HistoryPath(dir) + ". Self-contained: one inline script (table sorting), no network.");
}

}  // namespace tg
