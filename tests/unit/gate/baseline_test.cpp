// Baselines (save, list, load, history) and the report's provenance keys.
#include "tracegate/reports/baseline.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace_builder.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/report_provenance.h"
#include "tracegate/reports/report_read.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A report with the keys a baseline needs (the rest of a real report is optional to it).
json SmallReport(double avg_ms, const std::string& commit = "c0ffee") {
  return {{"schema", kReportSchema},
          {"model", "resnet50"},
          {"precision", "fp16"},
          {"commit", commit},
          {"profiling_date", "2023-11-14T22:13:20Z"},
          {"avg_latency_ms", avg_ms},
          {"p95_latency_ms", avg_ms * 1.5},
          {"throughput_fps", 1000.0 / avg_ms},
          {"latency_samples_ms", {avg_ms, avg_ms}},
          {"devices", json::array()},
          {"data_quality", {{"has_errors", false}, {"counters", json::array()}}}};
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Every test gets an empty directory of its own; `dir` is the baseline directory inside it.
class BaselineStore : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) / (std::string("baseline_") + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir = (root_ / "baselines").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
  std::string dir;
};

TEST(BaselineName, AcceptsLettersDigitsDotUnderscoreDash) {
  EXPECT_TRUE(ValidateBaselineName("resnet50_fp16-v1.2").ok());
  EXPECT_TRUE(ValidateBaselineName("a").ok());
  EXPECT_TRUE(ValidateBaselineName(std::string(100, 'x')).ok());
}

TEST(BaselineName, RejectsPathsHiddenNamesAndOtherCharacters) {
  for (const std::string bad : {"", ".hidden", "..", "a/b", "../x", "a\\b", "a b", "na\xc3\xafve", "x:y"}) {
    Status s = ValidateBaselineName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << bad;
    EXPECT_NE(s.message().find("no path separators"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(ValidateBaselineName(std::string(101, 'x')).ok());
}

TEST(CheckReport, NamesTheMissingOrMistypedKey) {
  json r = SmallReport(10);
  EXPECT_TRUE(CheckReport(r, "r.json").ok());
  json no_samples = r;
  no_samples.erase("latency_samples_ms");
  EXPECT_EQ(CheckReport(no_samples, "r.json").message(), "r.json: the report has no \"latency_samples_ms\"");
  json bad_type = r;
  bad_type["avg_latency_ms"] = "10";
  EXPECT_EQ(CheckReport(bad_type, "r.json").message(), "r.json: \"avg_latency_ms\" is not a number or null");
  json other = r;
  other["schema"] = "tracegate.report/v2";
  EXPECT_EQ(CheckReport(other, "r.json").code(), StatusCode::kUnsupported);
  EXPECT_EQ(CheckReport(json::array(), "r.json").code(), StatusCode::kInvalidInput);
  json nulls = r;
  nulls["avg_latency_ms"] = nullptr;  // an empty run's report is still a report
  EXPECT_TRUE(CheckReport(nulls, "r.json").ok());
}

// One check, three wordings: the gate's CheckReport, the reference run's and compare's problems
// name the same faults of a document as each command always has.
TEST_F(BaselineStore, EveryReaderChecksTheSameWay) {
  fs::create_directories(dir);
  const std::string file = dir + "/r.json";
  auto reference = [&](const json& doc) {
    WriteAll(file, doc.dump());
    ReferenceRun run;
    return ReadReferenceRun(file, &run).message();
  };
  auto compare = [](const json& doc) {
    Comparison c = CompareReports(doc, SmallReport(10), {}, "b.json", "n.json");
    return c.problems.empty() ? std::string() : c.problems.front().message;
  };
  json other = SmallReport(10);
  other["schema"] = "other/v9";
  EXPECT_EQ(
      CheckReport(other, "r.json").message(),
      "r.json: report schema \"other/v9\" is not tracegate.report/v1; re-run tracegate analyze with this version");
  EXPECT_EQ(reference(other), file + ": not a tracegate report (schema is not tracegate.report/v1)");
  EXPECT_EQ(compare(other), "b.json: schema is 'other/v9', expected tracegate.report/v1");
  json no_schema = SmallReport(10);
  no_schema.erase("schema");
  EXPECT_EQ(CheckReport(no_schema, "r.json").message(), "r.json: not a tracegate report (no \"schema\" key)");
  EXPECT_EQ(compare(no_schema), "b.json: schema is missing, expected tracegate.report/v1");
  EXPECT_EQ(reference(json::array()), file + ": not a JSON report object");
  EXPECT_EQ(compare(json::array()), "b.json: not a JSON object, so not a tracegate report");
  json zero = SmallReport(10);
  zero["avg_latency_ms"] = 0.0;
  EXPECT_TRUE(CheckReport(zero, "r.json").ok());
  EXPECT_EQ(reference(zero), file + ": the report has no positive avg_latency_ms");
  EXPECT_EQ(compare(zero), "b.json: avg_latency_ms is 0.000, not positive");
  zero["avg_latency_ms"] = nullptr;
  zero["avg_latency_ms_reason"] = "no iterations";
  EXPECT_EQ(compare(zero), "b.json: avg_latency_ms is null (no iterations)");

  WriteAll(file, "{\"schema\": ");
  ReferenceRun run;
  EXPECT_EQ(ReadReferenceRun(file, &run).message().rfind(file + ": not valid JSON", 0), 0u);
  WriteAll(file, SmallReport(12.5).dump());
  ASSERT_TRUE(ReadReferenceRun(file, &run).ok());
  EXPECT_EQ(run.avg_latency_ms, 12.5);
  EXPECT_EQ(run.precision, "fp16");
}

// `baseline show` renders any stored report; what it lacks reads "-" (with the reason if given).
TEST(BaselineText, ShowSaysWhatTheReportLacks) {
  json r = SmallReport(12.5);
  r["memory_peak_mb"] = nullptr;
  r["memory_peak_mb_reason"] = "no NVML samples";
  r["findings"] = {{{"priority", "high"}, {"title", "Idle GPU"}, {"summary", "gaps"}, {"amdahl", {{"gain_pct", 4.3}}}}};
  std::string text = BaselineShowText("resnet50", "b/resnet50.json", r);
  EXPECT_NE(text.find("baseline resnet50 (b/resnet50.json)\n  model resnet50, precision fp16, batch -\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("iterations -: avg 12.500 ms, p50 -, p95 18.750"), std::string::npos) << text;
  EXPECT_NE(text.find("memory peak - (no NVML samples), temperature -\n  data quality: ok\n"), std::string::npos);
  EXPECT_NE(text.find("top findings (1 of 1):\n  1. [high] Idle GPU (est. gain 4.3%)\n     gaps\n"), std::string::npos)
      << text;
  EXPECT_EQ(BaselineSavedText("x", "b/x.json", r),
            "saved baseline 'x' to b/x.json: avg latency 12.500 ms, commit c0ffee\n");
}

TEST_F(BaselineStore, SaveCreatesTheDirectoryAndLoadReturnsTheReport) {
  json report = SmallReport(12.5);
  ASSERT_TRUE(SaveBaseline(dir, "resnet50", report, "run.json").ok());
  EXPECT_EQ(Files(), (std::vector<std::string>{"history.db", "resnet50.json"}));

  json loaded;
  std::string path;
  ASSERT_TRUE(LoadBaseline(dir, "resnet50", &loaded, &path).ok());
  EXPECT_EQ(loaded, report);
  EXPECT_EQ(path, dir + "/resnet50.json");
  // A file path (a '/' or a .json ending) is read as it is.
  json by_file;
  ASSERT_TRUE(LoadBaseline("elsewhere", path, &by_file, nullptr).ok());
  EXPECT_EQ(by_file, report);
}

TEST_F(BaselineStore, SaveRejectsBadNamesAndReportsWithoutLatency) {
  EXPECT_EQ(SaveBaseline(dir, "../escape", SmallReport(1), "r").code(), StatusCode::kInvalidInput);
  json empty_run = SmallReport(1);
  empty_run["avg_latency_ms"] = nullptr;
  empty_run["avg_latency_ms_reason"] = "no iterations";
  Status s = SaveBaseline(dir, "empty", empty_run, "r.json");
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("no iterations"), std::string::npos) << s.message();
  json not_report = {{"traceEvents", json::array()}};
  EXPECT_FALSE(SaveBaseline(dir, "x", not_report, "trace.json").ok());
  EXPECT_FALSE(fs::exists(dir));  // nothing was written
}

TEST_F(BaselineStore, SaveReplacesAnExistingBaseline) {
  ASSERT_TRUE(SaveBaseline(dir, "m", SmallReport(10), "a.json").ok());
  ASSERT_TRUE(SaveBaseline(dir, "m", SmallReport(11), "b.json").ok());
  json loaded;
  ASSERT_TRUE(LoadBaseline(dir, "m", &loaded, nullptr).ok());
  EXPECT_EQ(loaded["avg_latency_ms"], 11.0);
}

TEST_F(BaselineStore, FailedWriteLeavesTheOldBaselineWhole) {
  ASSERT_TRUE(SaveBaseline(dir, "m", SmallReport(10), "old.json").ok());
  const std::string path = dir + "/m.json";
  const std::string before = ReadAll(path);
  // A file-size limit below the new report's size makes the temp file's write fail part-way, as a
  // full disk would (root ignores permissions, not this limit). SIGXFSZ would kill the process.
  json big = SmallReport(20);
  big["padding"] = std::string(before.size() * 4, 'x');
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = before.size() * 2;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = SaveBaseline(dir, "m", big, "new.json");
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_EQ(ReadAll(path), before);
  EXPECT_EQ(Files(), (std::vector<std::string>{"history.db", "m.json"}));  // no temp file left
  std::vector<HistoryRow> rows;
  ASSERT_TRUE(ReadHistory(dir, "m", &rows).ok());
  EXPECT_EQ(rows.size(), 1u);  // only the save that happened
}

TEST_F(BaselineStore, SaveOverADirectoryFailsAndLeavesItAlone) {
  fs::create_directories(dir + "/m.json");
  WriteAll(dir + "/m.json/keep", "x");
  Status s = SaveBaseline(dir, "m", SmallReport(10), "r.json");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find(dir + "/m.json"), std::string::npos) << s.message();
  EXPECT_EQ(ReadAll(dir + "/m.json/keep"), "x");
  // No temp file and no row; history.db may exist (the row's transaction was rolled back).
  for (const std::string& f : Files()) EXPECT_TRUE(f == "m.json" || f == "history.db") << f;
  std::vector<HistoryRow> rows;
  Status read = ReadHistory(dir, "m", &rows);
  EXPECT_TRUE(read.code() == StatusCode::kNotFound || (read.ok() && rows.empty())) << read.message();
  EXPECT_NE(s.message().find("nothing was saved"), std::string::npos) << s.message();
}

TEST_F(BaselineStore, CorruptedBaselineErrorNamesTheFile) {
  fs::create_directories(dir);
  WriteAll(dir + "/bad.json", "{\"schema\": \"tracegate.report/v1\", \"avg_");
  json out;
  Status s = LoadBaseline(dir, "bad", &out, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message().rfind(dir + "/bad.json: not valid JSON", 0), 0u) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);

  WriteAll(dir + "/other.json", "{\"schema\": \"something/else\"}");
  s = LoadBaseline(dir, "other", &out, nullptr);
  EXPECT_EQ(s.message(), dir +
                             "/other.json: report schema \"something/else\" is not tracegate.report/v1; "
                             "re-run tracegate analyze with this version");
}

TEST_F(BaselineStore, MissingBaselineSaysWhereItLooked) {
  json out;
  Status s = LoadBaseline(dir, "nope", &out, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), dir + "/nope.json: no baseline named 'nope' (see tracegate baseline list --dir " + dir + ")");
  EXPECT_EQ(LoadBaseline(dir, "missing/file.json", &out, nullptr).code(), StatusCode::kNotFound);
}

TEST_F(BaselineStore, ListIsSortedByNameAndMarksUnreadableFiles) {
  json b = SmallReport(20, "");
  b["model"] = nullptr;
  ASSERT_TRUE(SaveBaseline(dir, "b", b, "b.json").ok());
  ASSERT_TRUE(SaveBaseline(dir, "a", SmallReport(10), "a.json").ok());
  WriteAll(dir + "/c.json", "not json");
  WriteAll(dir + "/notes.txt", "ignored");
  WriteAll(dir + "/.hidden.json", "ignored: not a baseline name");

  std::vector<BaselineInfo> list;
  ASSERT_TRUE(ListBaselines(dir, &list).ok());
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "a");
  EXPECT_EQ(list[0].model, "resnet50");
  EXPECT_EQ(list[0].precision, "fp16");
  EXPECT_EQ(list[0].commit, "c0ffee");
  EXPECT_EQ(list[0].profiling_date, "2023-11-14T22:13:20Z");
  EXPECT_TRUE(list[0].has_avg_latency);
  EXPECT_DOUBLE_EQ(list[0].avg_latency_ms, 10.0);
  EXPECT_TRUE(list[0].error.empty());
  EXPECT_EQ(list[1].name, "b");
  EXPECT_EQ(list[1].model, "");  // null in the report
  EXPECT_EQ(list[1].commit, "");
  EXPECT_EQ(list[2].name, "c");
  EXPECT_EQ(list[2].path, dir + "/c.json");
  EXPECT_NE(list[2].error.find(dir + "/c.json: not valid JSON"), std::string::npos) << list[2].error;

  EXPECT_EQ(ListBaselines(dir + "/absent", &list).code(), StatusCode::kNotFound);
}

TEST_F(BaselineStore, HistoryKeepsSavesAndGatesInOrderPerName) {
  ASSERT_TRUE(SaveBaseline(dir, "m", SmallReport(10, "aaa"), "first.json").ok());
  ASSERT_TRUE(SaveBaseline(dir, "other", SmallReport(99), "x.json").ok());
  HistoryRow gate = HistoryRowFor("m", "gated", SmallReport(10.6, "bbb"), "new.json");
  gate.verdict = "regression";
  ASSERT_TRUE(AppendHistory(dir, gate).ok());
  HistoryRow empty;  // a gate on a report without latency: metrics absent
  empty.name = "m";
  empty.kind = "gated";
  empty.verdict = "cannot_judge";
  empty.source = "broken.json";
  ASSERT_TRUE(AppendHistory(dir, empty).ok());

  std::vector<HistoryRow> rows;
  ASSERT_TRUE(ReadHistory(dir, "m", &rows).ok());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, "saved");
  EXPECT_EQ(rows[0].commit, "aaa");
  EXPECT_DOUBLE_EQ(rows[0].avg_latency_ms, 10.0);
  EXPECT_DOUBLE_EQ(rows[0].p95_latency_ms, 15.0);   // 10 * 1.5
  EXPECT_DOUBLE_EQ(rows[0].throughput_fps, 100.0);  // 1000 / 10
  EXPECT_EQ(rows[0].verdict, "");
  EXPECT_EQ(rows[0].source, "first.json");
  EXPECT_EQ(rows[0].recorded_at.size(), 20u);  // YYYY-MM-DDTHH:MM:SSZ
  EXPECT_EQ(rows[0].recorded_at.back(), 'Z');
  EXPECT_EQ(rows[1].kind, "gated");
  EXPECT_EQ(rows[1].verdict, "regression");
  EXPECT_EQ(rows[1].commit, "bbb");
  EXPECT_DOUBLE_EQ(rows[1].avg_latency_ms, 10.6);
  EXPECT_LT(rows[0].id, rows[1].id);
  EXPECT_EQ(rows[2].verdict, "cannot_judge");
  EXPECT_EQ(rows[2].avg_latency_ms, 0.0);
  EXPECT_EQ(rows[2].commit, "");
  EXPECT_FALSE(rows[2].recorded_at.empty());  // filled in when the caller left it empty

  ASSERT_TRUE(ReadHistory(dir, "never", &rows).ok());
  EXPECT_TRUE(rows.empty());
}

TEST_F(BaselineStore, HistoryRejectsBadRowsAndCorruptFiles) {
  HistoryRow r = HistoryRowFor("m", "deleted", SmallReport(1), "r.json");
  EXPECT_EQ(AppendHistory(dir, r).code(), StatusCode::kInvalidInput);
  r.kind = "gated";
  r.name = "a/b";
  EXPECT_EQ(AppendHistory(dir, r).code(), StatusCode::kInvalidInput);

  std::vector<HistoryRow> rows;
  Status s = ReadHistory(dir, "m", &rows);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message().rfind(dir + "/history.db: no history yet", 0), 0u) << s.message();

  fs::create_directories(dir);
  WriteAll(dir + "/history.db", std::string(4096, 'z'));
  s = ReadHistory(dir, "m", &rows);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message().rfind(dir + "/history.db: not a valid SQLite database", 0), 0u) << s.message();
}

TEST_F(BaselineStore, ReadReportOrTraceReadsReportsAndAnalyzesTraces) {
  fs::create_directories(dir);
  const std::string report_path = dir + "/r.json";
  WriteAll(report_path, SmallReport(3).dump());
  json out;
  ASSERT_TRUE(ReadReportOrTrace(report_path, &out).ok());
  EXPECT_EQ(out, SmallReport(3));

  const std::string trace = std::string(TRACEGATE_FIXTURES_DIR) + "/kineto/new_generation.json";
  ASSERT_TRUE(ReadReportOrTrace(trace, &out).ok());
  EXPECT_EQ(out["schema"], kReportSchema);
  EXPECT_EQ(out["source"]["path"], trace);
  EXPECT_TRUE(CheckReport(out, trace).ok());

  WriteAll(dir + "/junk.json", "{\"hello\": 1}");
  Status s = ReadReportOrTrace(dir + "/junk.json", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(dir + "/junk.json: ", 0), 0u) << s.message();
}

// --- the report's provenance keys ---

json Provenance(const Trace& t, const AnalysisConfig& config = {}) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, config, &a).ok());
  return AnalysisToJson(t, a, config);
}

TEST(ReportProvenance, SamplesGiveMemoryPeakAndTemperatureRange) {
  Trace t;
  testing::AddKernel(t, "k", 1'000, 2'000);
  auto sample = [&](double temp, double mem) {
    Sample s;
    s.time = 1'500;
    s.device = 0;
    s.temperature_c = temp;
    s.memory_used_mb = mem;
    t.samples.Add(s);
  };
  sample(54, 1200);
  sample(58.2, 3400.5);
  sample(-1, -1);  // not sampled on this tick
  sample(56, 2000);
  json r = Provenance(t);
  EXPECT_EQ(r["memory_peak_mb"], 3400.5);        // max(1200, 3400.5, 2000)
  EXPECT_EQ(r["temperature_c_range"], "54-58");  // min 54, max 58.2 rounded
  EXPECT_FALSE(r.contains("memory_peak_mb_reason"));
}

TEST(ReportProvenance, MissingValuesAreNullWithAReason) {
  Trace t;
  testing::AddKernel(t, "k", 1'000, 2'000);  // a clock counting from session start
  json r = Provenance(t);
  EXPECT_TRUE(r["commit"].is_null());
  EXPECT_EQ(r["commit_reason"], "not given (--commit)");
  EXPECT_TRUE(r["memory_peak_mb"].is_null());
  EXPECT_EQ(r["memory_peak_mb_reason"], "the trace has no NVML samples");
  EXPECT_TRUE(r["temperature_c_range"].is_null());
  EXPECT_EQ(r["temperature_c_range_reason"], "the trace has no NVML samples");
  EXPECT_TRUE(r["profiling_date"].is_null());
  EXPECT_EQ(
      r["profiling_date_reason"],
      "the trace's times are not Unix-epoch nanoseconds (it starts at 1000 ns), so its wall-clock date is unknown");

  testing::AddSample(t, 1'500, -1, 1400);  // a clock sample only
  r = Provenance(t);
  EXPECT_EQ(r["memory_peak_mb_reason"], "the NVML samples have no memory_used_mb");
  EXPECT_EQ(r["temperature_c_range_reason"], "the NVML samples have no temperature_c");
}

TEST(ReportProvenance, CommitAndDateFromConfigAndEpochClock) {
  Trace t;
  const TimeNs base = 1'700'000'000'000'000'000;  // 1.7e9 s after 1970 = 2023-11-14 22:13:20 UTC
  testing::AddKernel(t, "k", base + 999'999'999, base + 2'000'000'000);
  AnalysisConfig config;
  config.commit = "0123456789abcdef0123456789abcdef01234567";
  json r = Provenance(t, config);
  EXPECT_EQ(r["commit"], config.commit);
  EXPECT_FALSE(r.contains("commit_reason"));
  EXPECT_EQ(r["profiling_date"], "2023-11-14T22:13:20Z");  // base + 0.999999999 s, truncated to the second

  config.commit.clear();
  config.commit_reason = "not given (--commit) and git is not installed";
  EXPECT_EQ(Provenance(t, config)["commit_reason"], config.commit_reason);
}

TEST(ReportProvenance, EpochRangeIs2000To2100) {
  std::string iso;
  EXPECT_TRUE(EpochNsToIso(946'684'800'000'000'000, &iso));  // 2000-01-01T00:00:00Z
  EXPECT_EQ(iso, "2000-01-01T00:00:00Z");
  EXPECT_FALSE(EpochNsToIso(946'684'799'999'999'999, &iso));
  EXPECT_FALSE(EpochNsToIso(0, &iso));
  EXPECT_FALSE(EpochNsToIso(4'102'444'800'000'000'000, &iso));  // 2100-01-01
}

TEST_F(BaselineStore, GitHeadOutsideAWorkTreeGivesAReason) {
  // The test's own directory is under the system temp dir, outside any git work tree.
  fs::path cwd = fs::current_path();
  fs::current_path(root_);
  std::string commit, reason;
  bool found = GitHead(&commit, &reason);
  fs::current_path(cwd);
  EXPECT_FALSE(found);
  EXPECT_TRUE(commit.empty());
  EXPECT_TRUE(reason == "not given (--commit) and the current directory is not in a git work tree" ||
              reason == "not given (--commit) and git is not installed")
      << reason;
}

}  // namespace
}  // namespace tg
