// The HTML page of a job report (tracegate/reports/job.h): the analyze page of the slowest rank's
// report with the job's ranks composed in at the head of its main part (the per-rank table, the
// straggler chart, the job's collectives; cells from reports/view/job_view.h).
#include <sstream>
#include <string>

#include "reports/document/report_document.h"
#include "reports/html/analyze_page.h"
#include "reports/view/job_chart.h"
#include "reports/view/job_view.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using internal::JobCollectiveRows;
using internal::JobHeadline;
using internal::JobRankRows;
using internal::kJobCollectiveHeader;
using internal::kJobCollectivesNote;
using internal::kJobRankHeader;

}  // namespace

std::string JobRanksHtml(const nlohmann::json& job) {
  std::ostringstream out;
  const auto rows = JobRankRows(job);
  out << "<h2 id=\"ranks\">Ranks (" << rows.size() << ")</h2>\n<p>" << HtmlEscape(JobHeadline(job))
      << ". * marks the slowest rank, whose report follows.</p>\n<table>\n<tr>";
  for (const char* h : kJobRankHeader) out << "<th>" << h << "</th>";
  out << "</tr>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out << (c + 1 == row.size() ? "<td class=\"name\">" : "<td class=\"num\">") << HtmlEscape(row[c]) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n";
  out << "<h3 id=\"straggler-chart\">Straggler chart</h3>\n" << internal::RankChartSvg(internal::ChartRanks(job));
  if (const auto collectives = JobCollectiveRows(job); !collectives.empty()) {
    out << "<h3 id=\"job-collectives\">Job collectives</h3>\n<p>" << kJobCollectivesNote << ".</p>\n<table>\n<tr>";
    for (const char* h : kJobCollectiveHeader) out << "<th>" << h << "</th>";
    out << "</tr>\n";
    for (const auto& row : collectives) {
      out << "<tr>";
      for (size_t c = 0; c < row.size(); ++c)
        out << (c == 0 ? "<td class=\"name\">" : "<td class=\"num\">") << HtmlEscape(row[c]) << "</td>";
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  return out.str();
}

std::string JobHtmlReport(const nlohmann::json& job) {
  // The ranks come first in the main part; the slowest rank's report follows them.
  return internal::AnalyzePage(job, JobRanksHtml(job));
}

}  // namespace tg
