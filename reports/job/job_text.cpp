// The per-rank table, the straggler chart and the per-collective table of a job report, for the
// analyze summary, the Markdown and the HTML report.
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

// job.matched_by in words: "seq and step" -> "process group and sequence number, and order within
// each profiler step".
std::string MatchedBy(const std::string& by) {
  std::string out;
  size_t at = 0;
  while (at <= by.size()) {
    const size_t end = std::min(by.find(" and ", at), by.size());
    const std::string way = by.substr(at, end - at);
    out += out.empty() ? "" : ", and ";
    out += way == "seq" ? "process group and sequence number"
           : way == "step" ? "order within each profiler step"
           : way == "order" ? "order on each rank"
                            : way;
    at = end + 5;
  }
  return out;
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
  if (const std::string by = internal::Text(info, "matched_by"); !by.empty()) out << " (matched by " << MatchedBy(by) << ")";
  return out.str();
}

// The job's per-collective table (job.collectives), one row of cells per collective.
const char* const kCollectiveHeader[] = {"collective", "dtype",   "message", "group",  "ranks",
                                         "calls/rank", "total ms", "mean ms", "alg bw", "bus bw"};
constexpr const char* kCollectivesNote =
    "every rank's calls: total over the ranks, mean per call, bandwidths of the mean call";

std::vector<std::vector<std::string>> CollectiveRows(const json& job) {
  std::vector<std::vector<std::string>> rows;
  for (const json& c : internal::Array(internal::Object(job, "job"), "collectives")) {
    const std::string dtype = internal::Text(c, "dtype");
    const std::string per_rank = internal::Number(c, "count_per_rank")
                                     ? std::to_string(internal::Int(c, "count_per_rank"))
                                     : std::to_string(internal::Int(c, "count_min")) + "-" +
                                           std::to_string(internal::Int(c, "count_max"));
    rows.push_back({internal::Text(c, "collective"), dtype.empty() ? "n/a" : dtype,
                    Cell(c, "message_bytes", "%.0f B"), Cell(c, "group_size", "%.0f"), Cell(c, "ranks", "%.0f"),
                    per_rank, Cell(c, "total_ms", "%.3f"), Cell(c, "mean_ms", "%.3f"), Cell(c, "algbw_gbs", "%.2f GB/s"),
                    Cell(c, "busbw_gbs", "%.2f GB/s")});
  }
  return rows;
}

// A table in the summary's style: numbers right-aligned, column `name` (a file or a collective)
// left-aligned.
void PrintTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, size_t name) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < width.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    out << " ";
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out << " " << (c == name ? cells[c] + (c + 1 == width.size() ? "" : pad) : pad + cells[c]);
    }
    out << "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
}

void MarkdownTable(std::ostream& out, const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, size_t name) {
  out << "|";
  for (const std::string& h : header) out << " " << h << " |";
  out << "\n|";
  for (size_t c = 0; c < header.size(); ++c) out << (c == name ? " --- |" : " ---: |");
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (size_t c = 0; c < row.size(); ++c) out << " " << (c == name ? "`" + row[c] + "`" : row[c]) << " |";
    out << "\n";
  }
  out << "\n";
}

}  // namespace

void PrintJobRanks(std::ostream& out, const nlohmann::json& job) {
  out << "Job: " << Headline(job) << "\n";
  PrintTable(out, std::vector<std::string>(std::begin(kHeader), std::end(kHeader)), Rows(job), std::size(kHeader) - 1);
  out << "  (* the slowest rank: the rest of this summary is its report)\n\n";
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << chart << "\n";
  const auto collectives = CollectiveRows(job);
  if (collectives.empty()) return;
  out << "Job collectives (" << kCollectivesNote << "):\n";
  PrintTable(out, std::vector<std::string>(std::begin(kCollectiveHeader), std::end(kCollectiveHeader)), collectives, 0);
  out << "\n";
}

std::string JobRanksMarkdown(const nlohmann::json& job) {
  std::ostringstream out;
  out << "### Ranks\n\n" << Headline(job) << ". `*` marks the slowest rank, whose report follows.\n\n";
  MarkdownTable(out, std::vector<std::string>(std::begin(kHeader), std::end(kHeader)), Rows(job), std::size(kHeader) - 1);
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << "<details><summary>Straggler chart</summary>\n\n```text\n" << chart << "```\n\n</details>\n\n";
  if (const auto collectives = CollectiveRows(job); !collectives.empty()) {
    out << "<details><summary>Job collectives</summary>\n\n" << kCollectivesNote << ".\n\n";
    MarkdownTable(out, std::vector<std::string>(std::begin(kCollectiveHeader), std::end(kCollectiveHeader)), collectives, 0);
    out << "</details>\n\n";
  }
  return out.str();
}

std::string JobMarkdownReport(const nlohmann::json& job) {
  // The slowest rank's report leads with its bold line; the job's line takes its place, widened
  // by the job's facts, and the rank's report follows the ranks under a heading of its own.
  std::string rank = MarkdownReport(job);
  std::string line;
  if (rank.rfind("**", 0) == 0) {
    const size_t end = rank.find("**\n\n", 2);
    if (end != std::string::npos) {
      line = rank.substr(2, end - 2);
      rank.erase(0, end + 4);
    }
  }
  std::string lead = "Job of " + std::to_string(internal::Array(job, "ranks").size()) + " ranks";
  // The rank's line starts with the model's name where one was given: it leads the job's line.
  if (const std::string model = MarkdownEscape(internal::Text(job, "model")); !model.empty() && line.rfind(model + ": ", 0) == 0) {
    lead = model + ", job of " + std::to_string(internal::Array(job, "ranks").size()) + " ranks";
    line.erase(0, model.size() + 2);
  }
  if (internal::Number(job, "avg_latency_ms")) lead += ", slowest rank " + std::to_string(internal::Int(job, "slowest_rank"));
  for (const json& f : internal::Array(job, "findings")) {
    if (internal::Text(f, "id") != "straggler") continue;
    std::string ranks, detail;
    for (const json& i : internal::Array(f, "involved")) {
      if (internal::Text(i, "kind") != "rank") continue;
      ranks += (ranks.empty() ? "" : ", ") + internal::Text(i, "name");
      if (detail.empty()) detail = internal::Text(i, "detail").substr(0, internal::Text(i, "detail").find(','));
    }
    if (!ranks.empty()) line += "; straggler: rank " + ranks + (detail.empty() ? "" : " (" + MarkdownEscape(detail) + ")");
  }
  const std::string slowest = internal::Number(job, "avg_latency_ms")
                                  ? " (rank " + std::to_string(internal::Int(job, "slowest_rank")) + ")"
                                  : "";
  return "**" + lead + ": " + line + "**\n\n" + JobRanksMarkdown(job) + "### The slowest rank" + slowest + "\n\n" + rank;
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
  if (const auto collectives = CollectiveRows(job); !collectives.empty()) {
    out << "<h3 id=\"job-collectives\">Job collectives</h3>\n<p>" << kCollectivesNote << ".</p>\n<table>\n<tr>";
    for (const char* h : kCollectiveHeader) out << "<th>" << h << "</th>";
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
  std::string html = HtmlReport(job);
  // The ranks come first in the main part; the slowest rank's report follows them.
  size_t at = html.find("<main>\n");
  at = at == std::string::npos ? html.rfind("</body>") : at + 7;
  if (at == std::string::npos) at = html.size();
  html.insert(at, JobRanksHtml(job));
  return html;
}

}  // namespace tg
