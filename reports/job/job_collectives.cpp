// The job's per-collective table (job.collectives): every rank's per-trace `collectives` rows
// summed by (collective, dtype, message bytes, group size) across the ranks. The reducer keeps
// only these rows of each rank (one per kind of collective), never its report, so memory does not
// grow with the ranks' traces.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reports/document/report_document.h"
#include "reports/job/job_internal.h"
#include "reports/report/communication_json.h"

namespace tg::internal {

namespace {

// A row's identity across ranks; unknown message bytes are -1, an unknown group size 0.
using Key = std::tuple<std::string, std::string, int64_t, int32_t>;

Key KeyOf(const CollectiveStat& s) { return {s.collective, s.dtype, s.bytes.value_or(-1), s.group_size}; }

struct JobRow {
  CollectiveStat sum;  // count and total_ns over every rank's calls
  uint64_t ranks = 0;
  uint64_t min_count = std::numeric_limits<uint64_t>::max(), max_count = 0;
};

}  // namespace

std::vector<CollectiveStat> RankCollectives(const json& doc) {
  std::vector<CollectiveStat> rows;
  for (const json& c : Array(doc, "collectives")) {
    CollectiveStat s;
    s.collective = Text(c, "collective");
    s.dtype = Text(c, "dtype");
    if (Number(c, "message_bytes")) s.bytes = Int(c, "message_bytes");
    else s.bytes_reason = Text(c, "message_bytes_reason");
    s.group_size = static_cast<int32_t>(std::max<int64_t>(0, Int(c, "group_size")));
    s.count = static_cast<uint64_t>(std::max<int64_t>(0, Int(c, "count")));
    // The report keeps ms; a whole number of ns below 2^53 comes back exactly.
    s.total_ns = std::llround(Number(c, "total_ms").value_or(0) * 1e6);
    if (s.count > 0) rows.push_back(std::move(s));
  }
  return rows;
}

json JobCollectivesJson(const std::vector<std::vector<CollectiveStat>>& ranks) {
  std::map<Key, JobRow> rows;
  for (const std::vector<CollectiveStat>& rank : ranks) {
    std::map<Key, uint64_t> calls;  // this rank's calls per key
    for (const CollectiveStat& s : rank) {
      const Key key = KeyOf(s);
      JobRow& r = rows[key];
      if (r.sum.count == 0) {
        r.sum.collective = s.collective;
        r.sum.dtype = s.dtype;
        r.sum.bytes = s.bytes;
        r.sum.bytes_reason = s.bytes_reason;
        r.sum.group_size = s.group_size;
      }
      r.sum.count += s.count;
      r.sum.total_ns += s.total_ns;
      calls[key] += s.count;
    }
    for (const auto& [key, n] : calls) {
      JobRow& r = rows[key];
      ++r.ranks;
      r.min_count = std::min(r.min_count, n);
      r.max_count = std::max(r.max_count, n);
    }
  }
  std::vector<JobRow> ordered;
  for (auto& [key, r] : rows) {
    FillCollectiveBandwidths(r.sum);
    ordered.push_back(std::move(r));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const JobRow& a, const JobRow& b) { return a.sum.total_ns > b.sum.total_ns; });
  json out = json::array();
  for (const JobRow& r : ordered) {
    json row = CollectiveJson(r.sum);
    row["ranks"] = r.ranks;
    row["count_min"] = r.min_count;
    row["count_max"] = r.max_count;
    if (r.min_count == r.max_count) {
      row["count_per_rank"] = r.min_count;
    } else {
      row["count_per_rank"] = nullptr;
      row["count_per_rank_reason"] = "the ranks disagree: " + std::to_string(r.min_count) + " to " +
                                     std::to_string(r.max_count) + " calls per rank";
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace tg::internal
