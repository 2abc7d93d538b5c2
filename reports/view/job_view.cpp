// The cells of a job report's tables (reports/view/job_view.h), shared by its text, Markdown and
// HTML renderers.
#include "reports/view/job_view.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"

namespace tg::internal {

std::string JobCell(const json& rank, std::string_view key, const char* format, double scale) {
  const std::optional<double> v = Number(rank, key);
  if (!v) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, *v * scale);
  return buf;
}

// One row of cells per rank; the slowest rank's number is starred.
std::vector<std::vector<std::string>> JobRankRows(const json& job) {
  std::vector<std::vector<std::string>> rows;
  const std::optional<double> slowest = Number(job, "slowest_rank");
  for (const json& r : Array(job, "ranks")) {
    const int64_t rank = Int(r, "rank");
    rows.push_back({std::to_string(rank) + (slowest && *slowest == static_cast<double>(rank) ? "*" : ""),
                    JobCell(r, keys::kAvgLatencyMs.name, "%.3f"), JobCell(r, keys::kP95LatencyMs.name, "%.3f"),
                    JobCell(r, keys::kIdleRatio.name, "%.1f%%", 100), JobCell(r, "comm_ms", "%.3f"),
                    JobCell(r, "compute_ms", "%.3f"), JobCell(r, "overlap_ratio", "%.1f%%", 100),
                    JobCell(r, "wait_ms", "%.3f"), JobCell(r, "clock_offset_ns", "%.3f", 1e-3),
                    JobCell(r, "last_arrivals", "%.0f"), Text(r, "file")});
  }
  return rows;
}

// job.matched_by in words: "seq and step" -> "process group and sequence number, and order within
// each profiler step".
namespace {

std::string MatchedBy(const std::string& by) {
  std::string out;
  size_t at = 0;
  while (at <= by.size()) {
    const size_t end = std::min(by.find(" and ", at), by.size());
    const std::string way = by.substr(at, end - at);
    out += out.empty() ? "" : ", and ";
    out += way == "seq"     ? "process group and sequence number"
           : way == "step"  ? "order within each profiler step"
           : way == "order" ? "order on each rank"
                            : way;
    at = end + 5;
  }
  return out;
}

}  // namespace

std::string JobHeadline(const json& job) {
  std::ostringstream out;
  out << Array(job, "ranks").size() << " ranks; job latency (the slowest rank's) ";
  if (std::optional<double> ms = Number(job, keys::kAvgLatencyMs.name)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", *ms);
    out << buf << ", rank " << Int(job, "slowest_rank");
  } else {
    out << "n/a (" << Text(job, "slowest_rank_reason") << ")";
  }
  const json& info = Object(job, "job");
  out << "; " << Int(info, "shared_collectives") << " collectives shared across ranks";
  if (const std::string by = Text(info, "matched_by"); !by.empty()) out << " (matched by " << MatchedBy(by) << ")";
  return out.str();
}

std::vector<std::vector<std::string>> JobCollectiveRows(const json& job) {
  std::vector<std::vector<std::string>> rows;
  for (const json& c : Array(Object(job, "job"), "collectives")) {
    const std::string dtype = Text(c, "dtype");
    const std::string per_rank = Number(c, "count_per_rank")
                                     ? std::to_string(Int(c, "count_per_rank"))
                                     : std::to_string(Int(c, "count_min")) + "-" + std::to_string(Int(c, "count_max"));
    rows.push_back({Text(c, "collective"), dtype.empty() ? "n/a" : dtype, JobCell(c, "message_bytes", "%.0f B"),
                    JobCell(c, "group_size", "%.0f"), JobCell(c, "ranks", "%.0f"), per_rank,
                    JobCell(c, "total_ms", "%.3f"), JobCell(c, "mean_ms", "%.3f"), JobCell(c, "algbw_gbs", "%.2f GB/s"),
                    JobCell(c, "busbw_gbs", "%.2f GB/s")});
  }
  return rows;
}

}  // namespace tg::internal
