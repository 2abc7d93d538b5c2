// The job's worker pool (AnalyzeJob, MergeReports) with several ranks in flight at once: the
// job report does not depend on how many threads load the ranks, and the reduce of per-rank
// reports gives the same ranks. ci/sanitize.sh runs these under ThreadSanitizer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "temp_file.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/json_out.h"

namespace tg {
namespace {

// One rank's Kineto trace, as tests/gen/gen_ranks.py writes it, smaller: per iteration a compute
// kernel (2 ms, `late_us` more on the straggler), then an all-reduce that every rank leaves at
// the same instant, each launched from a ProfilerStep.
std::string RankTrace(int rank, int ranks, int late_us) {
  std::string ev;
  int corr = 1;
  auto us = [](long long ns) { return std::to_string(ns / 1000) + "." + std::to_string(1000 + ns % 1000).substr(1); };
  auto kernel = [&](const std::string& name, long long start, long long end, int stream, const std::string& args) {
    ev += R"(,{"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": )" + std::to_string(stream) +
          R"(, "ts": )" + us(start) + R"(, "dur": )" + us(end - start) + R"(, "args": {"device": 0, "stream": )" +
          std::to_string(stream) + R"(, "correlation": )" + std::to_string(corr) + args + "}}";
    ev += R"(,{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": )" +
          us(start - 20'000) + R"(, "dur": 5.000, "args": {"correlation": )" + std::to_string(corr++) + "}}";
  };
  const long long c = 2'000'000, late = late_us * 1000LL;
  for (int k = 0; k < 3; ++k) {
    const long long t = 1'000'000'000LL + k * 5'000'000LL;
    const long long mine = c + (rank == 2 ? late : 0);
    ev += R"(,{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" + std::to_string(k) +
          R"(", "pid": 100, "tid": 100, "ts": )" + us(t - 30'000) + R"(, "dur": 5000.000, "args": {}})";
    kernel("gemm_compute_kernel", t, t + mine, 7, "");
    kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + mine, t + c + late + 1'000'000, 40,
           R"(, "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": )" +
               std::to_string(ranks) + R"(, "dtype": "Float", "Process Group Name": "0", "Seq": )" + std::to_string(k));
  }
  return R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
         R"(, "world_size": )" + std::to_string(ranks) + R"(}, "traceEvents": [)" + ev.substr(1) + "]}\n";
}

std::vector<std::string> WriteRanks(int ranks) {
  std::vector<std::string> files;
  // Written in reverse: the job orders ranks by distributedInfo, not by the order of its inputs.
  for (int r = ranks - 1; r >= 0; --r)
    files.push_back(testing::WriteTempFile("rank" + std::to_string(r) + ".json", RankTrace(r, ranks, 300)));
  return files;
}

TEST(JobPool, ReportDoesNotDependOnThreads) {
  const std::vector<std::string> files = WriteRanks(6);
  StatusOr<nlohmann::json> one = AnalyzeJob(files, AnalysisConfig{}, JobOptions{1, false});
  StatusOr<nlohmann::json> four = AnalyzeJob(files, AnalysisConfig{}, JobOptions{4, false});
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(four.ok()) << four.status().message();
  EXPECT_EQ(*one, *four);
  const nlohmann::json& ranks = (*four)["ranks"];
  ASSERT_EQ(ranks.size(), 6u);
  for (size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(ranks[r]["rank"], r);
    EXPECT_EQ(ranks[r]["rank_source"], "distributed_info");
  }
  // Every rank but the straggler waits its 0.3 ms at each of the 3 all-reduces.
  EXPECT_EQ(ranks[2]["last_arrivals"], 3);
  EXPECT_NEAR(ranks[0]["wait_ms"].get<double>(), 0.3, 1e-9);
  EXPECT_NEAR(ranks[2]["wait_ms"].get<double>(), 0.0, 1e-9);
}

TEST(JobPool, MergeOfRankReportsOnThreads) {
  const std::vector<std::string> files = WriteRanks(5);
  std::vector<std::string> reports;
  for (const std::string& f : files) {
    Trace trace;
    ASSERT_TRUE(ImportTrace(f, &trace).ok());
    Analysis analysis;
    ASSERT_TRUE(RunAnalysis(trace, AnalysisConfig{}, &analysis).ok());
    reports.push_back(f + ".report.json");
    testing::RemovedAtExit(reports.back());
    ASSERT_TRUE(WriteJsonFile(AnalysisToJson(trace, analysis, AnalysisConfig{}), reports.back()).ok());
  }
  StatusOr<nlohmann::json> merged = MergeReports(reports, RulesConfig(), JobOptions{3, false});
  StatusOr<nlohmann::json> direct = AnalyzeJob(files, AnalysisConfig{}, JobOptions{3, false});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  EXPECT_EQ((*merged)["job"]["built_from"], "reports");
  ASSERT_EQ((*merged)["ranks"].size(), 5u);
  for (size_t r = 0; r < 5; ++r) {
    const nlohmann::json &m = (*merged)["ranks"][r], &d = (*direct)["ranks"][r];
    for (const char* key : {"rank", "avg_latency_ms", "wait_ms", "last_arrivals", "clock_offset_ns"})
      EXPECT_EQ(m[key], d[key]) << key << " of rank " << r;
  }
  // A duplicate rank is an error naming both files, whatever the threads.
  std::vector<std::string> twice = {reports[0], reports[1], reports[0]};
  StatusOr<nlohmann::json> dup = MergeReports(twice, RulesConfig(), JobOptions{3, false});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find(reports[0] + ": given twice"), std::string::npos) << dup.status().message();
  dup = MergeReports({reports[0], reports[1], files[0] + ".copy.report.json"}, RulesConfig(), JobOptions{3, false});
  ASSERT_FALSE(dup.ok());  // the copy is absent: an error naming it
  EXPECT_NE(dup.status().message().find(".copy.report.json"), std::string::npos) << dup.status().message();
}

// Progress on stderr: a line per rank done when every moment is time to say it, and the last
// line when the job is done; none when progress is off.
TEST(JobPool, ProgressNamesRanksDoneOutOfAll) {
  const std::vector<std::string> files = WriteRanks(3);
  JobOptions chatty{2, true, 0, 0};
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(AnalyzeJob(files, AnalysisConfig{}, chatty).ok());
  const std::string said = ::testing::internal::GetCapturedStderr();
  for (const char* line : {"tracegate: 1/3 ranks done (", "tracegate: 2/3 ranks done (", "tracegate: 3/3 ranks done ("})
    EXPECT_NE(said.find(line), std::string::npos) << said;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(AnalyzeJob(files, AnalysisConfig{}, JobOptions{2, true, 1e9, 1e9}).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace tg
