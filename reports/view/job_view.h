// What every renderer of a job report (tracegate/reports/job.h) shows of it: the per-rank table,
// the job's line and the per-collective table, as cells; the text, Markdown and HTML renderers
// lay them out.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tg::internal {

// The per-rank table's header, and one row of cells per rank (the slowest rank's number starred).
inline constexpr const char* kJobRankHeader[] = {"rank",    "avg ms",  "p95 ms",    "idle", "comm ms", "compute ms",
                                                 "overlap", "wait ms", "offset us", "last", "file"};
std::vector<std::vector<std::string>> JobRankRows(const nlohmann::json& job);
// "8 ranks; job latency (the slowest rank's) 1.234 ms, rank 3; 12 collectives shared across ranks
// (matched by ...)".
std::string JobHeadline(const nlohmann::json& job);
// The job's per-collective table (job.collectives): header, note, one row of cells per collective.
inline constexpr const char* kJobCollectiveHeader[] = {"collective", "dtype",    "message", "group",  "ranks",
                                                       "calls/rank", "total ms", "mean ms", "alg bw", "bus bw"};
inline constexpr const char* kJobCollectivesNote =
    "every rank's calls: total over the ranks, mean per call, bandwidths of the mean call";
std::vector<std::vector<std::string>> JobCollectiveRows(const nlohmann::json& job);
// rank[key] formatted with `format` after scaling, or "n/a".
std::string JobCell(const nlohmann::json& rank, std::string_view key, const char* format, double scale = 1);

}  // namespace tg::internal
