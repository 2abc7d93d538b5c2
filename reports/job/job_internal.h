// The job stage's shared pieces: one rank's report as the reducer takes it, the reducer that
// turns the ranks' reports into the job report (the same for `analyze DIR` and `merge`), and the
// cross-rank findings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/cross_rank.h"
#include "tracegate/analyzer/rules.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

using nlohmann::json;

enum class RankSource : uint8_t { kDistributedInfo, kFileName, kFileOrder };
const char* RankSourceName(RankSource s);

// "A and B: both are rank R (source of A, source of B)": two files of one rank, found before
// loading (job_run.cpp) or after (JobReducer::Finish).
Status DuplicateRank(const std::string& a, RankSource a_source, const std::string& b, RankSource b_source,
                     int64_t rank);

struct RankReport {
  size_t index = 0;              // in the input's order
  std::string input;             // the file given: the trace, or the rank's report (merge)
  std::string file;              // the rank's trace
  std::optional<int64_t> rank;   // nullopt: numbered by file order at the end
  RankSource source = RankSource::kFileOrder;
  json doc;                      // the rank's report
};

// The rank a report names: ranks[0].rank of a per-rank report, else its trace's file name, else
// the report's own file name.
void RankOfReport(const std::string& report_path, RankReport* r);

// A rank's collective calls as the reducer keeps them until every rank is in: ~10 bytes a call
// (job_pack.cpp), unpacked for the cross-rank step.
class PackedCalls {
 public:
  void Add(const RankCall& c);
  std::vector<RankCall> Unpack() const;
  size_t size() const { return size_; }
  void ShrinkToFit();

 private:
  std::vector<uint8_t> bytes_;
  size_t size_ = 0;
  RankCall last_;
};

// Keeps what the job report needs of each rank (its figures and collective calls, packed) and
// the whole report of the slowest rank only, so memory does not grow with the ranks' reports.
// Add is not thread-safe: the caller serialises it.
class JobReducer {
 public:
  // `rules`: the settings of the rules across ranks (the ranks' own findings are in their reports).
  JobReducer(size_t ranks, const RulesConfig& rules);
  void Add(RankReport r);
  // Numbers the ranks without one, checks that no two files share a rank, analyses across ranks
  // and builds the job report. `built_from`: "traces" or "reports".
  StatusOr<json> Finish(const char* built_from);

 private:
  // What is kept of a rank until the end: what memory grows by with the ranks (a few kB each;
  // docs/PERFORMANCE.md, "Jobs").
  struct Kept {
    size_t index = 0;
    std::string input, file;
    std::optional<int64_t> rank;
    RankSource source = RankSource::kFileOrder;
    std::vector<uint8_t> figures;      // its entry of ranks[] without the cross-rank keys, as CBOR
    std::vector<uint8_t> collectives;  // its report's per-collective rows, as CBOR
    PackedCalls calls;                 // names and groups interned in names_
    double iterations = 1;
    std::vector<std::pair<uint32_t, int64_t>> counters;  // its data-quality counters: (counters_ index, count)
    bool has_errors = false;
  };
  uint32_t Intern(const std::string& s);
  RulesConfig rules_;
  std::vector<Kept> kept_;
  std::vector<std::string> names_;  // interned collective and group names; 0 is ""
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::vector<json> counters_;      // each data-quality key's counter as the first rank gave it
  std::unordered_map<std::string, uint32_t> counter_ids_;
  json slowest_doc_;
  std::optional<double> slowest_ms_;
  size_t slowest_index_ = 0;
  std::tuple<bool, int64_t, size_t> slowest_order_{true, 0, 0};  // (no rank yet, rank, index)
  bool have_body_ = false;
};

// A rank's per-collective rows (its report's `collectives`), and the job's table from every
// rank's (job.collectives, docs/RULES.md "Across ranks"): one row per (collective, dtype, message
// bytes, group size) with how many ranks ran it, its calls per rank, its calls and time summed over
// the ranks, and the bandwidths of the mean call.
std::vector<CollectiveStat> RankCollectives(const json& doc);
json JobCollectivesJson(const std::vector<std::vector<CollectiveStat>>& ranks);

// The findings across ranks (docs/RULES.md, "Across ranks"), in the report's findings[] shape:
// the rules across ranks of the rule table (straggler, compute_imbalance, comm_exposed) with
// `rules`' settings. `figures`: the job's ranks[] entries, by rank, with the cross-rank results in
// `cross` in the same order; `slowest`: the index in `figures` of the rank whose latency is the
// job's, `slowest_devices` the devices with kernels in its report; `collectives`: the job's
// per-collective table.
json CrossRankFindings(const json& figures, const CrossRank& cross, std::optional<double> job_latency_ms,
                       std::optional<size_t> slowest, size_t slowest_devices, const json& collectives,
                       const RulesConfig& rules);

// The slowest rank's own `communication` finding claims the GPU time where its collectives run
// alone, which comm_exposed claims too: marks each in the other's `overlaps` (the job's
// combined_estimate is that rank's and counts the time once).
void MarkSharedClaims(json& findings);

}  // namespace tg::internal
