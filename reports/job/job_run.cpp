// The job's map step on one machine: a worker pool loads and reduces the ranks, `jobs` at a time,
// so at most that many traces are in memory at once.
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "reports/document/report_document.h"
#include "reports/job/job_internal.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/analyze.h"
#include "tracegate/reports/job.h"

namespace tg {

namespace {

using internal::JobReducer;
using internal::RankReport;
using internal::RankSource;

// Runs load(i) for every input on `jobs` threads and adds each result to the reducer. Stops
// taking new inputs at the first error; of several, the earliest input's is returned.
Status RunPool(size_t n, const JobOptions& options, JobReducer& reducer,
               const std::function<StatusOr<RankReport>(size_t)>& load) {
  size_t jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min(jobs, n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  size_t done = 0, error_at = n;
  double said_at = -1e300;  // when progress was last printed (s)
  Status error = Status::Ok();
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i = next++; i < n && !failed; i = next++) {
      StatusOr<RankReport> r = load(i);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        failed = true;
        if (i < error_at) error = r.status(), error_at = i;
        continue;
      }
      reducer.Add(std::move(r).value());
      ++done;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Long jobs say how far they are; short ones (tests, small jobs) stay quiet.
      if (options.progress && s >= options.progress_after_s &&
          (s >= said_at + options.progress_every_s || done == n)) {
        std::fprintf(stderr, "tracegate: %zu/%zu ranks done (%.1f s)\n", done, n, s);
        said_at = s;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return error;
}

std::optional<int64_t> IntegerText(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

StatusOr<RankReport> AnalyzeRank(const std::string& path, size_t index, const AnalysisConfig& config) {
  RankReport r;
  r.index = index;
  r.file = path;
  StatusOr<Report> analyzed = AnalyzeFile(path, config);
  TG_RETURN_IF_ERROR(analyzed.status());
  // The rank's report without its iteration rows: the job's reduce does not read them.
  // The Kineto importer keeps distributedInfo.rank as the "rank" metadata.
  const std::string rank_text(analyzed->TraceMetadata("rank"));
  r.doc = std::move(*analyzed).TakeHead();
  if (!rank_text.empty()) {
    if (std::optional<int64_t> rank = IntegerText(rank_text)) {
      r.rank = rank;
      r.source = RankSource::kDistributedInfo;
    }
  }
  if (!r.rank) {
    r.rank = RankFromFileName(path);
    if (r.rank) r.source = RankSource::kFileName;
  }
  return r;
}

// Two files of one rank, found before any trace is loaded: distributedInfo.rank from a bounded
// prefix of each Kineto file, else the file name where that is what the load will take. Files it
// cannot decide (SQLite, a header past the prefix) are left to the reducer's check after loading.
Status CheckRanksBeforeLoading(const std::vector<std::string>& traces) {
  std::map<int64_t, std::pair<size_t, RankSource>> seen;
  for (size_t i = 0; i < traces.size(); ++i) {
    TraceRankPeek peek;
    if (!PeekTraceRank(traces[i], &peek).ok() || !peek.known) continue;  // the load reports the error
    std::optional<int64_t> rank = peek.rank;
    RankSource source = RankSource::kDistributedInfo;
    if (!rank) {
      rank = RankFromFileName(traces[i]);
      source = RankSource::kFileName;
    }
    if (!rank) continue;
    auto [it, inserted] = seen.try_emplace(*rank, i, source);
    if (!inserted)
      return internal::DuplicateRank(traces[it->second.first], it->second.second, traces[i], source, *rank);
  }
  return Status::Ok();
}

// While the ranks load one after another, each allocating and freeing about what the previous one
// did, the freed memory stays in the process instead of going back to the kernel only to be
// faulted in again, page by page, for the next rank: glibc's heaps keep 64 MiB of slack at their
// top. On 8 ranks of 34 MB that is 14% of the job's time (0.29 -> 0.25 s on 2 cores) for 12 MiB
// of peak RSS (docs/PERFORMANCE.md). One trace (`analyze FILE`) keeps the default: there the
// slack would only add to the peak. The default (128 KiB) comes back when the pool is done.
class RankHeapSlack {
 public:
  explicit RankHeapSlack(size_t ranks) : on_(ranks > 1) {
#if defined(__GLIBC__)
    if (on_) mallopt(M_TOP_PAD, 64 << 20);
#endif
  }
  ~RankHeapSlack() {
#if defined(__GLIBC__)
    if (on_) mallopt(M_TOP_PAD, 128 << 10);
#endif
  }
  RankHeapSlack(const RankHeapSlack&) = delete;
  RankHeapSlack& operator=(const RankHeapSlack&) = delete;

 private:
  bool on_;
};

}  // namespace

StatusOr<nlohmann::json> AnalyzeJob(const std::vector<std::string>& traces, const AnalysisConfig& config,
                                    const JobOptions& options) {
  TG_RETURN_IF_ERROR(CheckRanksBeforeLoading(traces));
  const RankHeapSlack slack(traces.size());
  JobReducer reducer(traces.size(), config.rules);
  TG_RETURN_IF_ERROR(RunPool(traces.size(), options, reducer,
                             [&](size_t i) { return AnalyzeRank(traces[i], i, config); }));
  return reducer.Finish("traces");
}

StatusOr<nlohmann::json> MergeReports(const std::vector<std::string>& reports, const RulesConfig& rules,
                                      const JobOptions& options) {
  JobReducer reducer(reports.size(), rules);
  TG_RETURN_IF_ERROR(RunPool(reports.size(), options, reducer, [&](size_t i) -> StatusOr<RankReport> {
    RankReport r;
    r.index = i;
    r.input = reports[i];
    TG_RETURN_IF_ERROR(internal::LoadReportFile(reports[i], "report", &r.doc));
    const internal::ReportCheck check = internal::CheckReportDocument(r.doc, {});
    if (!check.ok()) return InvalidInput(reports[i] + ": not a tracegate report (tracegate analyze TRACE -o REPORT)");
    if (internal::IsJobReport(r.doc)) return InvalidInput(reports[i] + ": a job report; merge takes the ranks' reports");
    internal::RankOfReport(reports[i], &r);
    return r;
  }));
  return reducer.Finish("reports");
}

}  // namespace tg
