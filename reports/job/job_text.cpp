// The per-rank table and the straggler chart of a job report, for the analyze summary, the Markdown
// and the HTML report.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "reports/document/report_document.h"
#include "reports/job/job_chart.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using internal::json;

std::string Cell(const json& rank, const char* key, const char* format, double scale = 1) {
  const std::optional<double> v = internal::Number(rank, key);
  if (!v) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, *v * scale);
  return buf;
}

const char* const kHeader[] = {"rank", "avg ms", "p95 ms", "idle", "comm ms", "compute ms",
                               "overlap", "wait ms", "offset us", "last", "file"};

// One row of cells per rank; the slowest rank's number is starred.
std::vector<std::vector<std::string>> Rows(const json& job) {
  std::vector<std::vector<std::string>> rows;
  const std::optional<double> slowest = internal::Number(job, "slowest_rank");
  for (const json& r : internal::Array(job, "ranks")) {
    const int64_t rank = internal::Int(r, "rank");
    rows.push_back({std::to_string(rank) + (slowest && *slowest == static_cast<double>(rank) ? "*" : ""),
                    Cell(r, "avg_latency_ms", "%.3f"), Cell(r, "p95_latency_ms", "%.3f"),
                    Cell(r, "idle_ratio", "%.1f%%", 100), Cell(r, "comm_ms", "%.3f"), Cell(r, "compute_ms", "%.3f"),
                    Cell(r, "overlap_ratio", "%.1f%%", 100), Cell(r, "wait_ms", "%.3f"),
                    Cell(r, "clock_offset_ns", "%.3f", 1e-3), Cell(r, "last_arrivals", "%.0f"),
                    internal::Text(r, "file")});
  }
  return rows;
}

std::string Headline(const json& job) {
  std::ostringstream out;
  out << internal::Array(job, "ranks").size() << " ranks; job latency (the slowest rank's) ";
  if (std::optional<double> ms = internal::Number(job, "avg_latency_ms")) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", *ms);
    out << buf << ", rank " << internal::Int(job, "slowest_rank");
  } else {
    out << "n/a (" << internal::Text(job, "slowest_rank_reason") << ")";
  }
  const json& info = internal::Object(job, "job");
  out << "; " << internal::Int(info, "shared_collectives") << " collectives shared across ranks";
  if (const std::string by = internal::Text(info, "matched_by"); !by.empty()) out << " (matched by " << by << ")";
  return out.str();
}

}  // namespace

void PrintJobRanks(std::ostream& out, const nlohmann::json& job) {
  out << "Job: " << Headline(job) << "\n";
  const auto rows = Rows(job);
  std::vector<size_t> width(std::size(kHeader));
  for (size_t c = 0; c < width.size(); ++c) width[c] = std::string(kHeader[c]).size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const auto& cells) {
    out << " ";
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = cells[c];
      // Numbers right-aligned, the file name left-aligned and last.
      if (c + 1 == width.size()) out << " " << cell;
      else out << " " << std::string(width[c] - cell.size(), ' ') << cell;
    }
    out << "\n";
  };
  line(kHeader);
  for (const auto& row : rows) line(row);
  out << "  (* the slowest rank: the rest of this summary is its report)\n\n";
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << chart << "\n";
}

std::string JobRanksMarkdown(const nlohmann::json& job) {
  std::ostringstream out;
  out << "### Ranks\n\n" << Headline(job) << ". `*` marks the slowest rank, whose report follows.\n\n|";
  for (const char* h : kHeader) out << " " << h << " |";
  out << "\n|";
  for (size_t c = 0; c < std::size(kHeader); ++c) out << (c + 1 == std::size(kHeader) ? " --- |" : " ---: |");
  out << "\n";
  for (const auto& row : Rows(job)) {
    out << "|";
    for (size_t c = 0; c < row.size(); ++c) out << " " << (c + 1 == row.size() ? "`" + row[c] + "`" : row[c]) << " |";
    out << "\n";
  }
  out << "\n";
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << "#### Straggler chart\n\n```text\n" << chart << "```\n\n";
  return out.str();
}

std::string JobRanksHtml(const nlohmann::json& job) {
  std::ostringstream out;
  const auto rows = Rows(job);
  out << "<h2 id=\"ranks\">Ranks (" << rows.size() << ")</h2>\n<p>" << HtmlEscape(Headline(job))
      << ". * marks the slowest rank, whose report follows.</p>\n<table>\n<tr>";
  for (const char* h : kHeader) out << "<th>" << h << "</th>";
  out << "</tr>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out << (c + 1 == row.size() ? "<td class=\"name\">" : "<td class=\"num\">") << HtmlEscape(row[c]) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n";
  out << "<h3 id=\"straggler-chart\">Straggler chart</h3>\n" << internal::RankChartSvg(internal::ChartRanks(job));
  return out.str();
}

std::string JobHtmlReport(const nlohmann::json& job) {
  std::string html = HtmlReport(job);
  // The ranks come first in the main part; the slowest rank's report follows them.
  size_t at = html.find("<main>\n");
  at = at == std::string::npos ? html.rfind("</body>") : at + 7;
  if (at == std::string::npos) at = html.size();
  html.insert(at, JobRanksHtml(job));
  return html;
}

}  // namespace tg
