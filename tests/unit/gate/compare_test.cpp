// CompareReports and its outputs, on reports analyzed from hand-built traces whose change is
// known exactly, plus the report's kernel_table section they rely on.
#include "tracegate/reports/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "temp_file.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
namespace {

using nlohmann::json;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kMs = 1'000'000;

// One marker per iteration: "iteration i" spans [t, t + L]; kernel "conv" runs [t, t + 2 ms] and
// kernel "gemm" [t + 2 ms, t + L], so every change of L is gemm's; 1 ms between iterations.
Trace LatencyTrace(const std::vector<TimeNs>& latencies, const char* device = "NVIDIA A100") {
  Trace t;
  t.devices.push_back(Device{0, device, 108, 0, 0, 8, 0});
  TimeNs at = 1'000 * kMs;
  for (size_t i = 0; i < latencies.size(); ++i) {
    AddRange(t, "iteration " + std::to_string(i), at, at + latencies[i]);
    AddKernel(t, "conv", at, at + 2 * kMs);
    AddKernel(t, "gemm", at + 2 * kMs, at + latencies[i]);
    at += latencies[i] + kMs;
  }
  return t;
}

json Report(const Trace& t, const AnalysisConfig& config = {}) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, config, &a).ok());
  return AnalysisToJson(t, a, config);
}

// Ten distinct latencies with mean exactly 10 ms (sum 100 ms), each a multiple of 10 us.
const std::vector<TimeNs> kBase{9'900'000, 10'100'000, 9'950'000, 10'050'000, 9'970'000,
                                9'980'000, 10'020'000, 9'990'000, 10'010'000, 10'030'000};

// kBase scaled by per_mille / 1000 (exact in ns: every value is a multiple of 10'000).
std::vector<TimeNs> Scaled(const std::vector<TimeNs>& v, TimeNs per_mille) {
  std::vector<TimeNs> out;
  for (TimeNs x : v) out.push_back(x / 1000 * per_mille);
  return out;
}

const KernelDelta* FindKernel(const Comparison& c, const std::string& name) {
  for (const KernelDelta& k : c.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(ReportKernelTable, EveryKernelOfTheKeptIterationsPerIteration) {
  // Three iterations, the first skipped; "late" runs outside every marker.
  Trace t;
  AddRange(t, "iteration 0", 0, 10 * kMs);
  AddKernel(t, "conv", 1 * kMs, 2 * kMs);  // skipped iteration: not counted
  AddRange(t, "iteration 1", 20 * kMs, 30 * kMs);
  AddKernel(t, "conv", 21 * kMs, 23 * kMs);
  AddKernel(t, "_Z4gemmPfS_i", 23 * kMs, 24 * kMs);
  AddKernel(t, "_Z4gemmPfS_i", 24 * kMs, 24 * kMs + 500'000);
  AddRange(t, "iteration 2", 40 * kMs, 50 * kMs);
  AddKernel(t, "conv", 41 * kMs, 45 * kMs);
  AddKernel(t, "late", 60 * kMs, 61 * kMs);
  AnalysisConfig config;
  config.iterations.skip = 1;
  json table = Report(t, config)["kernel_table"];
  ASSERT_EQ(table.size(), 2u);
  // conv: 2 ms + 4 ms = 6 ms in 2 kept iterations -> 3 ms per iteration, mean 3000 us.
  EXPECT_EQ(table[0]["name"], "conv");
  EXPECT_EQ(table[0]["count"], 2);
  EXPECT_DOUBLE_EQ(table[0]["total_ms"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(table[0]["per_iteration_ms"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(table[0]["mean_us"].get<double>(), 3000.0);
  // gemm (demangled): 1 ms + 0.5 ms = 1.5 ms -> 0.75 ms per iteration, mean 750 us.
  EXPECT_EQ(table[1]["name"], "gemm(float*, float*, int)");
  EXPECT_EQ(table[1]["count"], 2);
  EXPECT_DOUBLE_EQ(table[1]["per_iteration_ms"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(table[1]["mean_us"].get<double>(), 750.0);
}

TEST(Compare, FourPointNinePercentSlowerPasses) {
  // Mean 10 ms -> 10.49 ms: +4.9% <= +5%.
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1049))), {});
  EXPECT_EQ(c.verdict, Verdict::kPass) << c.verdict_text;
  ASSERT_TRUE(c.has_latency);
  EXPECT_NEAR(c.base_latency_ms, 10.0, 1e-12);
  EXPECT_NEAR(c.new_latency_ms, 10.49, 1e-12);
  EXPECT_NEAR(c.latency_delta_pct, 4.9, 1e-9);
  EXPECT_NEAR(c.limit_ms, 10.5, 1e-12);
  EXPECT_FALSE(c.over_threshold);
  EXPECT_EQ(c.verdict_text, "PASS: avg_latency_ms 10.000 -> 10.490 ms (+4.90%, limit +5%)");
}

TEST(Compare, FivePointOnePercentSlowerIsARegressionThatNamesTheKernel) {
  // Mean 10 ms -> 10.51 ms: +5.1% > +5%. Only gemm grew: per iteration 10 - 2 = 8 ms -> 8.51 ms.
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), {});
  ASSERT_EQ(c.verdict, Verdict::kRegression) << c.verdict_text;
  EXPECT_TRUE(c.over_threshold);
  EXPECT_NEAR(c.latency_delta_pct, 5.1, 1e-9);
  const KernelDelta* gemm = FindKernel(c, "gemm");
  const KernelDelta* conv = FindKernel(c, "conv");
  ASSERT_TRUE(gemm && conv);
  EXPECT_EQ(gemm->change, KernelChange::kChanged);
  EXPECT_NEAR(gemm->base_ms, 8.0, 1e-9);
  EXPECT_NEAR(gemm->delta_ms, 0.51, 1e-9);
  EXPECT_NEAR(gemm->share_of_change, 1.0, 1e-9);  // all of the 0.51 ms
  EXPECT_EQ(conv->change, KernelChange::kUnchanged);
  ASSERT_EQ(c.kernel_contributors.size(), 1u);
  EXPECT_EQ(c.kernels[c.kernel_contributors[0]].name, "gemm");
  // GPU work covers each iteration, so the whole change is in the infer phase.
  ASSERT_FALSE(c.phase_contributors.empty());
  EXPECT_EQ(c.phases[c.phase_contributors[0]].phase, "infer");
  EXPECT_NEAR(c.phases[c.phase_contributors[0]].delta_ms, 0.51, 1e-9);
  EXPECT_EQ(c.verdict_text,
            "REGRESSION: avg_latency_ms 10.000 -> 10.510 ms (+5.10%, limit +5%); slower kernels: gemm +0.510 ms/iter; "
            "phases: infer +0.510 ms");
}

TEST(Compare, TheThresholdIsAnOption) {
  CompareOptions o;
  o.threshold_pct = 6;  // +5.1% is within +6%
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), o);
  EXPECT_EQ(c.verdict, Verdict::kPass);
  EXPECT_NEAR(c.limit_ms, 10.6, 1e-12);
}

TEST(Compare, RequireSignificanceFailsOnASeparatedShift) {
  // Every new latency (>= 9.9 x 1.051 = 10.40 ms) is above every base one (<= 10.1 ms): U_base = 0,
  // exact two-sided p = 2 / C(20, 10) = 2 / 184756.
  CompareOptions o;
  o.require_significance = true;
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), o);
  ASSERT_TRUE(c.mann_whitney.ok);
  EXPECT_TRUE(c.mann_whitney.exact);
  EXPECT_NEAR(c.mann_whitney.p_two_sided, 2.0 / 184756, 1e-15);
  EXPECT_TRUE(c.significant);
  EXPECT_EQ(c.verdict, Verdict::kRegression);
  EXPECT_NE(c.verdict_text.find("Mann-Whitney p = 1.08e-05"), std::string::npos) << c.verdict_text;
  // The bootstrap interval of the ratio of means holds the exact ratio 1.051 and excludes 1.
  ASSERT_TRUE(c.bootstrap.ok);
  EXPECT_NEAR(c.bootstrap.ratio, 1.051, 1e-12);
  EXPECT_LT(c.bootstrap.lo, 1.051);
  EXPECT_GT(c.bootstrap.lo, 1.0);
  EXPECT_GT(c.bootstrap.hi, 1.051);
}

TEST(Compare, RequireSignificancePassesANoisyShift) {
  // Base alternates 4 / 16 ms (mean 10), new 3.8 / 17.4 ms (mean 10.6, +6%). Pairs where base is
  // larger: each 16 beats each 3.8 (5 x 5) and each 4 beats each 3.8 (5 x 5): U_base = 50 =
  // n_a n_b / 2, so p = 1: the mean moved, the samples did not.
  std::vector<TimeNs> base, next;
  for (int i = 0; i < 5; ++i) {
    base.insert(base.end(), {4 * kMs, 16 * kMs});
    next.insert(next.end(), {3'800'000, 17'400'000});
  }
  CompareOptions o;
  o.require_significance = true;
  Comparison c = CompareReports(Report(LatencyTrace(base)), Report(LatencyTrace(next)), o);
  EXPECT_TRUE(c.over_threshold);
  ASSERT_TRUE(c.mann_whitney.ok);
  EXPECT_EQ(c.mann_whitney.u, 50);
  EXPECT_EQ(c.mann_whitney.p_two_sided, 1);
  EXPECT_EQ(c.verdict, Verdict::kPass);
  EXPECT_EQ(c.verdict_text,
            "PASS: avg_latency_ms 10.000 -> 10.600 ms (+6.00%, limit +5%) is over the limit but not significant "
            "(Mann-Whitney p = 1 >= 0.05)");
  // Without the requirement the same pair fails.
  EXPECT_EQ(CompareReports(Report(LatencyTrace(base)), Report(LatencyTrace(next)), {}).verdict, Verdict::kRegression);
}

TEST(Compare, RequireSignificanceCannotJudgeOneIteration) {
  CompareOptions o;
  o.require_significance = true;
  Comparison c = CompareReports(Report(LatencyTrace({10 * kMs})), Report(LatencyTrace({11 * kMs})), o);
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].check, "latency");
  EXPECT_EQ(c.verdict_text,
            "CANNOT JUDGE: over the limit, but --require-significance needs at least 2 latency samples per side "
            "for the Mann-Whitney test (base has 1, new has 1)");
  // Within the limit there is nothing to confirm: a pass.
  EXPECT_EQ(CompareReports(Report(LatencyTrace({10 * kMs})), Report(LatencyTrace({10 * kMs})), o).verdict,
            Verdict::kPass);
}

TEST(Compare, DifferentDevicesCannotBeJudgedUnlessAllowed) {
  json a100 = Report(LatencyTrace(kBase)), h100 = Report(LatencyTrace(Scaled(kBase, 1051), "NVIDIA H100"));
  Comparison c = CompareReports(a100, h100, {}, "baseline.json", "run.json");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  EXPECT_EQ(c.verdict_text,
            "CANNOT JUDGE: devices differ: baseline.json ran on NVIDIA A100, run.json on NVIDIA H100 "
            "(pass --allow-device-mismatch to compare anyway)");
  CompareOptions o;
  o.allow_device_mismatch = true;
  Comparison allowed = CompareReports(a100, h100, o);
  EXPECT_EQ(allowed.verdict, Verdict::kRegression);
  ASSERT_FALSE(allowed.notes.empty());
  EXPECT_NE(allowed.notes[0].find("compared anyway"), std::string::npos);
}

TEST(Compare, UnknownDevicesAreNotedNotRefused) {
  json base = Report(LatencyTrace(kBase)), next = Report(LatencyTrace(kBase));
  next["devices"][0]["name"] = nullptr;
  Comparison c = CompareReports(base, next, {}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kPass);
  ASSERT_FALSE(c.notes.empty());
  EXPECT_EQ(c.notes[0], "device names unknown on new; devices not compared");
}

TEST(Compare, AnErrorLevelQualityCounterCannotBeJudged) {
  Trace dropped = LatencyTrace(kBase);
  dropped.quality.Add(Quality::kSourceDroppedRecords, 3);
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(dropped), {}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].check, "data_quality");
  EXPECT_EQ(c.problems[0].message, "new: error-level data-quality counter source_dropped_records = 3");
  // Warning-level counters do not stop the gate.
  Trace clock = LatencyTrace(kBase);
  clock.quality.Add(Quality::kClockJump, 2);
  EXPECT_EQ(CompareReports(Report(clock), Report(LatencyTrace(kBase)), {}).verdict, Verdict::kPass);
}

TEST(Compare, AMissingAverageCannotBeJudged) {
  json base = Report(LatencyTrace(kBase)), next = base;
  next["avg_latency_ms"] = nullptr;
  next["avg_latency_ms_reason"] = "no iterations";
  Comparison c = CompareReports(base, next, {}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  EXPECT_EQ(c.verdict_text, "CANNOT JUDGE: new: avg_latency_ms is null (no iterations)");
  next.erase("avg_latency_ms");
  EXPECT_EQ(CompareReports(base, next, {}, "base", "new").verdict_text, "CANNOT JUDGE: new: avg_latency_ms is missing");
}

TEST(Compare, AnotherSchemaCannotBeJudged) {
  json base = Report(LatencyTrace(kBase));
  json other = {{"schema", "something/else"}, {"avg_latency_ms", 10}};
  Comparison c = CompareReports(base, other, {}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  EXPECT_EQ(c.verdict_text, "CANNOT JUDGE: new: schema is 'something/else', expected tracegate.report/v1");
  EXPECT_EQ(CompareReports(json::array(), base, {}, "base", "new").verdict_text,
            "CANNOT JUDGE: base: not a JSON object, so not a tracegate report");
}

TEST(Compare, KernelsAddedAndRemoved) {
  Trace base = LatencyTrace({10 * kMs, 10 * kMs}), next;
  next.devices = base.devices;
  for (TimeNs at : {1'000 * kMs, 1'020 * kMs}) {
    AddRange(next, "iteration", at, at + 10 * kMs);
    AddKernel(next, "gemm", at, at + 9 * kMs);
    AddKernel(next, "relu", at + 9 * kMs, at + 10 * kMs);
  }
  Comparison c = CompareReports(Report(base), Report(next), {});
  const KernelDelta *conv = FindKernel(c, "conv"), *relu = FindKernel(c, "relu"), *gemm = FindKernel(c, "gemm");
  ASSERT_TRUE(conv && relu && gemm);
  EXPECT_EQ(conv->change, KernelChange::kRemoved);
  EXPECT_EQ(conv->base_count, 2u);
  EXPECT_NEAR(conv->delta_ms, -2.0, 1e-9);
  EXPECT_EQ(relu->change, KernelChange::kAdded);
  EXPECT_NEAR(relu->new_ms, 1.0, 1e-9);
  EXPECT_EQ(gemm->change, KernelChange::kChanged);  // 8 ms -> 9 ms
  EXPECT_EQ(c.verdict, Verdict::kPass);             // same latency
  EXPECT_TRUE(c.kernel_contributors.empty());       // latency did not move
}

TEST(Compare, MetricsCoverTheHeadline) {
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), {});
  std::vector<std::string> keys;
  for (const MetricDelta& m : c.metrics) keys.push_back(m.key);
  for (const char* k : {"avg_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "throughput_fps",
                        "latency_cv", "h2d_ms_ratio", "idle_ratio", "kernels.total_ms"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
  const MetricDelta& p95 = c.metrics[2];
  ASSERT_EQ(p95.key, "p95_latency_ms");
  // Nearest rank of 10 samples: p95 is the largest, 10.1 ms -> 10.1 x 1.051 = 10.6151 ms.
  EXPECT_NEAR(p95.base, 10.1, 1e-12);
  EXPECT_NEAR(p95.delta, 0.5151, 1e-9);
  EXPECT_NEAR(c.base.cv, c.next.cv, 1e-12);  // scaling keeps the CV
  EXPECT_EQ(c.base.samples, 10u);
}

TEST(CompareOutput, JsonCarriesTheVerdictAndEveryKernel) {
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), {});
  json doc = ComparisonToJson(c);
  EXPECT_EQ(doc["schema"], "tracegate.comparison/v1");
  EXPECT_EQ(doc["verdict"]["name"], "regression");
  EXPECT_EQ(doc["verdict"]["text"], c.verdict_text);
  EXPECT_EQ(doc["kernels"].size(), 2u);
  EXPECT_EQ(doc["contributors"]["kernels"], json::array({"gemm"}));
  EXPECT_EQ(doc["statistics"]["mann_whitney"]["method"], "exact");
  EXPECT_NEAR(doc["latency"]["limit_ms"].get<double>(), 10.5, 1e-12);
  EXPECT_TRUE(doc["metrics"][0]["delta_pct"].is_number());
}

TEST(CompareOutput, MarkdownEscapesTraceStrings) {
  Trace base = LatencyTrace({10 * kMs, 10 * kMs}), next = LatencyTrace({10 * kMs, 10 * kMs});
  for (TimeNs at : {1'000 * kMs, 1'011 * kMs}) {
    AddKernel(next, "<script>alert(1)</script>|x`y", at, at + kMs, 0, 9);
    AddKernel(next, "pipe|name`tick", at + kMs, at + 2 * kMs, 0, 9);
  }
  Comparison c = CompareReports(Report(base), Report(next), {});
  std::string md = ComparisonMarkdown(c);
  EXPECT_EQ(md.rfind("**PASS: avg\\_latency\\_ms 10.000 -&gt; 10.000 ms (+0.00%, limit +5%)**\n", 0), 0u) << md;
  EXPECT_NE(md.find("| avg_latency_ms | 10.000 | 10.000 | +0.000 | +0.00% |"), std::string::npos) << md;
  // In a code span: a backtick cannot close it, a pipe cannot end the cell.
  EXPECT_NE(md.find("| `pipe\\|name'tick` | added |"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script"), std::string::npos) << md;
  EXPECT_NE(md.find("Mann-Whitney U = "), std::string::npos);
  EXPECT_EQ(md.find("```"), std::string::npos) << md;  // the verdict is no code block
}

TEST(CompareOutput, JunitMarksARegressionAsAFailure) {
  Comparison c = CompareReports(Report(LatencyTrace(kBase)), Report(LatencyTrace(Scaled(kBase, 1051))), {});
  std::string xml = ComparisonJunit(c);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"tracegate.gate\" name=\"avg_latency_ms\">"), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"REGRESSION: avg_latency_ms 10.000 -&gt; 10.510 ms"), std::string::npos);
}

TEST(CompareOutput, JunitMarksCannotJudgeAsAnErrorAndEscapes) {
  json base = Report(LatencyTrace(kBase));
  json other = {{"schema", "<&>\"'\x01"}};
  std::string xml = ComparisonJunit(CompareReports(base, other, {}, "base", "new"));
  EXPECT_NE(xml.find("failures=\"0\" errors=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"new: schema is &apos;&lt;&amp;&gt;&quot;&apos;&apos;"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"not judged"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
}

TEST(ClassifyInput, ReportsAndTraces) {
  const std::string report = ::tg::testing::TempPath("report.json"), other = ::tg::testing::TempPath("other.json");
  std::ofstream(report) << Report(LatencyTrace(kBase)).dump();
  std::ofstream(other) << R"({"schemaVersion": 1, "traceEvents": [], "schema": "late"})";
  InputKind kind = InputKind::kTrace;
  ASSERT_TRUE(ClassifyInput(report, &kind).ok());
  EXPECT_EQ(kind, InputKind::kReport);
  ASSERT_TRUE(ClassifyInput(other, &kind).ok());
  EXPECT_EQ(kind, InputKind::kTrace);  // traceEvents came first
  ASSERT_TRUE(ClassifyInput(std::string(TRACEGATE_FIXTURES_DIR) + "/real/kineto_sampled_rank0.json.gz", &kind).ok());
  EXPECT_EQ(kind, InputKind::kTrace);
  ASSERT_TRUE(ClassifyInput(std::string(TRACEGATE_FIXTURES_DIR) + "/kineto/new_generation.json", &kind).ok());
  EXPECT_EQ(kind, InputKind::kTrace);
  EXPECT_FALSE(ClassifyInput(::tg::testing::TempPath("missing.json"), &kind).ok());
  std::remove(report.c_str());
  std::remove(other.c_str());
}

}  // namespace
}  // namespace tg
