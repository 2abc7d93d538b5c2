// A job report as text (the analyze summary's ranks) and Markdown: the per-rank table, the
// straggler chart and the per-collective table (cells from reports/view/job_view.h).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/view/job_chart.h"
#include "reports/view/job_view.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace keys = internal::keys;

namespace {

using internal::JobCollectiveRows;
using internal::JobHeadline;
using internal::JobRankRows;
using internal::json;
using internal::kJobCollectiveHeader;
using internal::kJobCollectivesNote;
using internal::kJobRankHeader;

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
  out << "Job: " << JobHeadline(job) << "\n";
  PrintTable(out, std::vector<std::string>(std::begin(kJobRankHeader), std::end(kJobRankHeader)), JobRankRows(job),
             std::size(kJobRankHeader) - 1);
  out << "  (* the slowest rank: the rest of this summary is its report)\n\n";
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << chart << "\n";
  const auto collectives = JobCollectiveRows(job);
  if (collectives.empty()) return;
  out << "Job collectives (" << kJobCollectivesNote << "):\n";
  PrintTable(out, std::vector<std::string>(std::begin(kJobCollectiveHeader), std::end(kJobCollectiveHeader)),
             collectives, 0);
  out << "\n";
}

std::string JobRanksMarkdown(const nlohmann::json& job) {
  std::ostringstream out;
  out << "### Ranks\n\n" << JobHeadline(job) << ". `*` marks the slowest rank, whose report follows.\n\n";
  MarkdownTable(out, std::vector<std::string>(std::begin(kJobRankHeader), std::end(kJobRankHeader)), JobRankRows(job),
                std::size(kJobRankHeader) - 1);
  if (const std::string chart = internal::RankChartText(internal::ChartRanks(job)); !chart.empty())
    out << "<details><summary>Straggler chart</summary>\n\n```text\n" << chart << "```\n\n</details>\n\n";
  if (const auto collectives = JobCollectiveRows(job); !collectives.empty()) {
    out << "<details><summary>Job collectives</summary>\n\n" << kJobCollectivesNote << ".\n\n";
    MarkdownTable(out, std::vector<std::string>(std::begin(kJobCollectiveHeader), std::end(kJobCollectiveHeader)),
                  collectives, 0);
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
  if (const std::string model = MarkdownEscape(internal::Text(job, "model"));
      !model.empty() && line.rfind(model + ": ", 0) == 0) {
    lead = model + ", job of " + std::to_string(internal::Array(job, "ranks").size()) + " ranks";
    line.erase(0, model.size() + 2);
  }
  if (internal::Number(job, keys::kAvgLatencyMs.name))
    lead += ", slowest rank " + std::to_string(internal::Int(job, "slowest_rank"));
  for (const json& f : internal::Array(job, "findings")) {
    if (internal::Text(f, "id") != "straggler") continue;
    std::string ranks, detail;
    for (const json& i : internal::Array(f, "involved")) {
      if (internal::Text(i, "kind") != "rank") continue;
      ranks += (ranks.empty() ? "" : ", ") + internal::Text(i, "name");
      if (detail.empty()) detail = internal::Text(i, "detail").substr(0, internal::Text(i, "detail").find(','));
    }
    if (!ranks.empty())
      line += "; straggler: rank " + ranks + (detail.empty() ? "" : " (" + MarkdownEscape(detail) + ")");
  }
  const std::string slowest = internal::Number(job, keys::kAvgLatencyMs.name)
                                  ? " (rank " + std::to_string(internal::Int(job, "slowest_rank")) + ")"
                                  : "";
  return "**" + lead + ": " + line + "**\n\n" + JobRanksMarkdown(job) + "### The slowest rank" + slowest + "\n\n" +
         rank;
}

}  // namespace tg
