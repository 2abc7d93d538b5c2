// A job: the traces of its ranks, one file per rank (docs/SCALE.md). `tracegate analyze DIR |
// FILE FILE...` analyses every rank on a worker pool and reduces them to one job report;
// `tracegate merge REPORT...` reduces per-rank reports written by `tracegate analyze` to the same
// job report, on another machine or later.
//
// The job report is a tracegate.report/v1 document (analysis_report.h) whose body is the report
// of the slowest rank (the largest avg_latency_ms: the job's latency; its iteration_table left
// empty), with the job's keys:
//   ranks[]{rank, file, rank_source (distributed_info | file_name | file_order), avg_latency_ms,
//           p95_latency_ms, iterations, idle_ratio, comm_ms, compute_ms, overlap_ratio (null +
//           _reason until the rank's report has them), wait_ms, clock_offset_ns (onto the clock of
//           the first rank sharing collectives; null + _reason for a rank sharing none with it,
//           directly or through others), collectives, last_arrivals,
//           kernel_families[]{name, count, ms_per_iteration} (the rank's kernel_table grouped by
//           ShortKernelName, the kJobRankFamilies largest by ms per iteration; null + _reason when
//           the rank's report has no kernel_table), kernel_families_left_out (how many more)}   by rank
//   slowest_rank (null + _reason when no rank has a latency)
//   job{ranks, built_from (traces | reports), shared_collectives, matched_by (seq, step, order, joined
//       by " and "), collectives[]{collective,
//       dtype, message_bytes, group_size, ranks, count, count_per_rank (null + _reason when the
//       ranks disagree), count_min, count_max, total_ms, mean_ms, algbw_gbs, busbw_gbs}}
//   findings: the cross-rank findings (straggler, compute_imbalance, comm_exposed) with the slowest rank's
//   data_quality: every rank's counters summed by key, and the job's warnings: rank_from_file_order
//                 (a rank's number came from the order of the files), collective_counts_differ and
//                 collective_match_doubtful (a match across ranks that may be wrong; docs/RULES.md)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct JobOptions {
  size_t jobs = 0;        // ranks in flight at once; 0: the hardware threads
  // "tracegate: 12/64 ranks done (3.1 s)" on stderr once the job has run progress_after_s, then
  // at most every progress_every_s, and when the last rank is done: short jobs stay quiet.
  bool progress = true;
  double progress_after_s = 2, progress_every_s = 1;
};

// The trace files of a job: each argument is a file, or a directory whose trace files (*.json,
// *.json.gz, *.sqlite, *.db; not *.report.json nor hidden files) are taken in name order.
[[nodiscard]] StatusOr<std::vector<std::string>> ListJobFiles(const std::vector<std::string>& args);

// The rank a file name gives ("rank-3", "rank3", "rank_3", "worker3", case-insensitive; the last
// such word of the base name), or nullopt.
std::optional<int64_t> RankFromFileName(std::string_view path);

// Loads and analyses the ranks, `options.jobs` at a time, each trace freed once reduced to its
// report; `config.rules` sets the rules of each trace and those across ranks. Errors name the file; two files of one
// rank are an error naming both, before any trace is loaded where each file's prefix or name tells its rank
// (PeekTraceRank), else after.
[[nodiscard]] StatusOr<nlohmann::json> AnalyzeJob(const std::vector<std::string>& traces, const AnalysisConfig& config,
                                                  const JobOptions& options);

// The job report from per-rank reports (`tracegate analyze TRACE -o REPORT`). `rules`: the settings
// of the rules across ranks (merge --rules); each rank's own findings are those of its report.
[[nodiscard]] StatusOr<nlohmann::json> MergeReports(const std::vector<std::string>& reports, const RulesConfig& rules,
                                                    const JobOptions& options);

// The kernel families kept per rank in a job report: enough for the gate to name what grew on a
// rank that got slower, without keeping the ranks' whole reports.
inline constexpr size_t kJobRankFamilies = 10;

// The per-rank table, the straggler chart (per rank its compute, communication and wait per
// iteration, stacked; the slowest rank and the straggler marked; at most 64 ranks drawn) and the
// job's per-collective table of a job report, as text (the analyze summary) and as Markdown.
void PrintJobRanks(std::ostream& out, const nlohmann::json& job);
std::string JobRanksMarkdown(const nlohmann::json& job);
// The Markdown of a job (analyze DIR --md): one bold line first (ranks, the slowest rank's
// latency and top finding, the straggler), the ranks, then the slowest rank's report; the chart
// and the collectives folded.
std::string JobMarkdownReport(const nlohmann::json& job);
// The HTML report of a job: the per-rank table, the straggler chart (inline SVG) and the job's
// collectives, then the slowest rank's report.
std::string JobHtmlReport(const nlohmann::json& job);

}  // namespace tg
