// The serving gate (compare_serving.cpp) on generated vLLM serving runs with known answers
// (tests/bench/gen_shapes.cpp, WriteServingRun): the report's step groups against the generator's
// answers, a slowed group, another batch mix, A/A pairs, no group on both sides.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gen_kineto.h"
#include "temp_file.h"
#include "tracegate/reports/analyze.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/compare_html.h"

namespace tg {
namespace {

using nlohmann::json;

struct ServingRun {
  json report, answers;
};

// Generates the run, analyzes it in-process as `tracegate analyze` does (--skip auto).
ServingRun Generate(const std::string& name, bench::ServingRunSpec spec, const std::string& mix = "",
                    const std::string& slow = "") {
  if (!mix.empty()) {
    EXPECT_EQ(bench::ParseServingGroups(mix, &spec.mix), "");
  }
  if (!slow.empty()) {
    EXPECT_EQ(bench::ParseServingGroups(slow, &spec.slow), "");
  }
  const std::string trace = testing::TempPath(name + ".json"), answers = testing::TempPath(name + ".answers.json");
  EXPECT_GT(bench::WriteServingRun(trace.c_str(), spec, answers.c_str()), 0);
  StatusOr<Report> report = AnalyzeFile(trace, AnalysisConfig{});
  EXPECT_TRUE(report.ok()) << report.status().message();
  ServingRun run;
  run.report = std::move(*report).TakeDocument();
  run.answers = json::parse(std::ifstream(answers));
  std::remove(trace.c_str());
  return run;
}

bench::ServingRunSpec Spec(long long steps, unsigned long long seed, double noise_pct = 2) {
  bench::ServingRunSpec spec;
  spec.steps = steps;
  spec.seed = seed;
  spec.noise_pct = noise_pct;
  return spec;
}

TEST(ServingGate, ReportGivesTheKnownAnswersExactly) {
  const ServingRun run = Generate("known", Spec(200, 7));
  const json& serving = run.report.at("serving");
  EXPECT_EQ(serving.at("steps"), 200);
  EXPECT_EQ(run.report.at("iteration_source").at("skipped"), 0);
  const json& groups = serving.at("groups");
  const json& want = run.answers.at("groups");
  ASSERT_EQ(groups.size(), want.size());
  ASSERT_EQ(groups.size(), 5u);  // the default mix
  for (size_t i = 0; i < want.size(); ++i)
    for (const char* key :
         {"kind", "token_bucket_min", "token_bucket_max", "count", "tokens", "latency_total_ms", "mean_latency_ms",
          "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "ms_per_token", "tokens_per_s"})
      EXPECT_EQ(groups[i].at(key), want[i].at(key)) << "group " << i << " " << key;
  EXPECT_EQ(serving.at("graph_replay").at("launches"), run.answers.at("graph_replay").at("launches"));
  EXPECT_EQ(serving.at("graph_replay").at("kernels"), run.answers.at("graph_replay").at("kernels"));
}

TEST(ServingGate, SlowerDecodeBucketFailsAndIsNamed) {
  const ServingRun base = Generate("slow_base", Spec(300, 1));
  const ServingRun next = Generate("slow_new", Spec(300, 2), "", "decode:64=1.06");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base", "new");
  ASSERT_TRUE(c.serving.applies);
  EXPECT_EQ(c.verdict, Verdict::kRegression) << c.verdict_text;
  EXPECT_EQ(c.serving.regressions, 1u);
  EXPECT_EQ(c.verdict_text.rfind("REGRESSION: ms/token over the +5% limit in decode 64-127 tokens ", 0), 0u)
      << c.verdict_text;
  EXPECT_FALSE(c.serving.workload_changed) << c.serving.workload_text;
  const json doc = ComparisonToJson(c);
  EXPECT_EQ(doc.at("serving").at("failing"), json::array({"decode 64-127 tokens"}));
  EXPECT_NE(ComparisonMarkdown(c).find("| decode 64-127 tokens | 90 / 90 |"), std::string::npos);
  for (const ServingGroupDelta& g : c.serving.groups) {
    if (g.kind == "decode" && g.bucket_min == 64) {
      EXPECT_GT(g.delta_pct, 5);
      EXPECT_LT(g.delta_pct, 7);
    } else {
      EXPECT_FALSE(g.regression) << g.kind << " " << g.bucket_min;
    }
  }
}

TEST(ServingGate, AnotherBatchMixIsAWorkloadChangeNotARegression) {
  const ServingRun base = Generate("mix_base", Spec(300, 1));
  const ServingRun next =
      Generate("mix_new", Spec(300, 3), "prefill:1024=4,decode:16=1,decode:32=1,decode:64=1,mixed:256=3");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kPass) << c.verdict_text;
  EXPECT_TRUE(c.over_threshold);  // the mean step latency grew with the prefill share
  EXPECT_TRUE(c.serving.workload_changed);
  EXPECT_NE(c.verdict_text.find("workload changed, not judged as latency: step mix shifted"), std::string::npos)
      << c.verdict_text;
  EXPECT_EQ(c.serving.judged, 5u);
}

TEST(ServingGate, GroupsOnOneSideOnlyAreAWorkloadChange) {
  const ServingRun base = Generate("side_base", Spec(120, 1), "decode:32=1,decode:64=1");
  const ServingRun next = Generate("side_new", Spec(120, 2), "decode:32=1,decode:64=1,prefill:512=1");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base", "new");
  EXPECT_EQ(c.verdict, Verdict::kPass) << c.verdict_text;
  EXPECT_NE(c.verdict_text.find("groups on one side only: prefill 512-1023 tokens (new only, 40 steps)"),
            std::string::npos)
      << c.verdict_text;
}

// A/A: two runs of the same workload and costs, other seeds. At most 1 false alarm in 100 pairs
// (issue 30); 100 steps a run (10 to 30 a group), 5% noise per step.
TEST(ServingGate, AaPairsPass) {
  int false_alarms = 0;
  for (unsigned long long i = 0; i < 100; ++i) {
    const ServingRun base = Generate("aa_base", Spec(100, 1000 + 2 * i, 5));
    const ServingRun next = Generate("aa_new", Spec(100, 1001 + 2 * i, 5));
    const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base", "new");
    ASSERT_TRUE(c.serving.applies);
    ASSERT_NE(c.verdict, Verdict::kCannotJudge) << c.verdict_text;
    EXPECT_FALSE(c.serving.workload_changed) << c.verdict_text;
    if (c.verdict == Verdict::kRegression) {
      ++false_alarms;
      std::printf("false alarm, seeds %llu and %llu: %s\n", 1000 + 2 * i, 1001 + 2 * i, c.verdict_text.c_str());
    }
  }
  std::printf("A/A false alarms: %d of 100\n", false_alarms);
  EXPECT_LE(false_alarms, 1);
}

TEST(ServingGate, NoGroupOnBothSidesCannotJudge) {
  const ServingRun base = Generate("none_base", Spec(20, 1), "decode:32=1");
  const ServingRun next = Generate("none_new", Spec(20, 2), "prefill:1024=1");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base.json", "new.json");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  EXPECT_EQ(c.verdict_text,
            "CANNOT JUDGE: no serving step group (kind x token bucket) on both sides, so no ms per token to compare "
            "(base.json: decode 32-63 tokens; new.json: prefill 1024-2047 tokens)");
}

TEST(ServingGate, GroupsOfFewerThan10StepsAreNotJudged) {
  const ServingRun base = Generate("few_base", Spec(9, 1), "decode:32=1");
  const ServingRun next = Generate("few_new", Spec(9, 2), "decode:32=1");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "base.json", "new.json");
  EXPECT_EQ(c.verdict, Verdict::kCannotJudge);
  EXPECT_EQ(c.verdict_text,
            "CANNOT JUDGE: no serving step group (kind x token bucket) has 10 steps on both sides, the fewest the gate "
            "judges (base.json: decode 32-63 tokens; new.json: decode 32-63 tokens)");
  EXPECT_EQ(ComparisonToJson(c).at("serving").at("groups").at(0).at("not_judged_reason"),
            "fewer than 10 steps on a side");
}

std::string Cells(const std::string& row) {  // "a|b|c": a table row's cells, tags dropped
  std::string out;
  const std::regex cell("<td[^>]*>(.*?)</td>");
  for (auto it = std::sregex_iterator(row.begin(), row.end(), cell); it != std::sregex_iterator(); ++it) {
    const std::string text = std::regex_replace(it->str(1), std::regex("<[^>]*>"), "");
    out += (out.empty() ? "" : "|") + text;
  }
  return out;
}

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The page's step-group table (compare_html.cpp): one row per group of the comparison document,
// its numbers those of compare --json, the regression and the workload change said; names escaped.
TEST(ServingGate, HtmlPageTablesTheStepGroups) {
  const ServingRun base = Generate("html_base", Spec(120, 1), "decode:32=1,decode:64=1");
  const ServingRun next = Generate("html_new", Spec(120, 2), "decode:32=1,decode:64=1,prefill:512=1", "decode:64=1.08");
  const Comparison c = CompareReports(base.report, next.report, CompareOptions{}, "<base>&", "new \"run\"");
  ASSERT_EQ(c.verdict, Verdict::kRegression) << c.verdict_text;
  const std::string html = ComparisonHtml(c, base.report, next.report);
  EXPECT_EQ(html.find("<base>"), std::string::npos);
  EXPECT_NE(html.find("&lt;base&gt;&amp;"), std::string::npos);
  EXPECT_NE(html.find("threshold +5% on ms per token in each serving step group"), std::string::npos);
  const size_t at = html.find("<table class=\"serving\">");
  ASSERT_NE(at, std::string::npos);
  const std::string table = html.substr(at, html.find("</table>", at) - at);
  std::vector<std::string> rows;
  const std::regex row("<tr><td.*?</tr>");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it)
    rows.push_back(Cells(it->str()));
  const json groups = ComparisonToJson(c).at("serving").at("groups");
  ASSERT_EQ(rows.size(), groups.size());
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& g = groups[i];
    std::string want = g.at("name").get<std::string>() + "|" + std::to_string(g.at("base_steps").get<int>()) + " / " +
                       std::to_string(g.at("new_steps").get<int>()) + "|" +
                       Printf("%.1f%%", g.at("base_step_share").get<double>() * 100) + " / " +
                       Printf("%.1f%%", g.at("new_step_share").get<double>() * 100) + "|";
    for (const char* side : {"base_ms_per_token", "new_ms_per_token"})
      want += (g.at(side).is_null() ? std::string("n/a") : Printf("%.4f", g.at(side).get<double>())) + "|";
    if (g.at("judged").get<bool>()) {
      want += Printf("%+.2f%%", g.at("delta_pct").get<double>()) + "|" +
              Printf("%+.2f%%", g.at("ci_lo_pct").get<double>()) + ".." +
              Printf("%+.2f%%", g.at("ci_hi_pct").get<double>()) + "|" + Printf("%.3g", g.at("q").get<double>()) + "|" +
              (g.at("regression").get<bool>() ? "REGRESSION" : "pass");
    } else {
      want += "n/a|n/a|n/a|new only";
    }
    EXPECT_EQ(rows[i], want) << i;
  }
  EXPECT_EQ(rows[0].rfind("prefill 512-1023 tokens|0 / 40|", 0), 0u) << rows[0];
  EXPECT_EQ(rows[2].rfind("decode 64-127 tokens|", 0), 0u) << rows[2];
  EXPECT_NE(rows[2].find("|REGRESSION"), std::string::npos) << rows[2];
  EXPECT_NE(html.find("<li class=\"warning\">workload changed, not judged as latency: step mix shifted by 33.3% "),
            std::string::npos);
  EXPECT_NE(html.find("groups on one side only: prefill 512-1023 tokens (new only, 40 steps)</li>"), std::string::npos);
}

// JUnit (compare_text.cpp): one case per step group on both sides in place of avg_latency_ms, the
// regressed one failing with the text gate's words, the workload verdict a case that never fails.
TEST(ServingGate, JunitHasACasePerStepGroup) {
  const ServingRun base = Generate("junit_base", Spec(300, 1));
  const ServingRun slow = Generate("junit_slow", Spec(300, 2), "", "decode:64=1.06");
  const Comparison c = CompareReports(base.report, slow.report, CompareOptions{}, "base", "new");
  const std::string xml = ComparisonJunit(c);
  EXPECT_NE(xml.find("<testsuite name=\"tracegate.gate\" tests=\"9\" failures=\"1\" errors=\"0\" skipped=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("avg_latency_ms\""), std::string::npos) << xml;
  const ServingGroupDelta* slowed = nullptr;
  for (const ServingGroupDelta& g : c.serving.groups) {
    if (g.regression) slowed = &g;
  }
  ASSERT_NE(slowed, nullptr);
  char change[256];
  std::snprintf(change, sizeof change, "%.4f -&gt; %.4f ms/token (%+.2f%%, 95%% CI %+.2f%%..%+.2f%%, q = %.3g)",
                slowed->base_ms_per_token, slowed->new_ms_per_token, slowed->delta_pct,
                (slowed->bootstrap.lo - 1) * 100, (slowed->bootstrap.hi - 1) * 100, slowed->q);
  EXPECT_NE(xml.find("<testcase classname=\"tracegate.gate\" name=\"serving decode 64-127 tokens ms_per_token\">\n"
                     "      <failure message=\"REGRESSION: ms/token over the +5% limit in decode 64-127 tokens " +
                     std::string(change) + "\" type=\"regression\">"),
            std::string::npos)
      << xml;
  for (const char* group : {"prefill 1024-2047", "decode 16-31", "decode 32-63", "mixed 256-511"})
    EXPECT_NE(xml.find("name=\"serving " + std::string(group) +
                       " tokens ms_per_token\">\n      <system-out>PASS: ms/token within the +5% limit in "),
              std::string::npos)
        << group;
  EXPECT_NE(xml.find("name=\"serving workload\">\n      <system-out>workload unchanged: every step group on both "
                     "sides, step mix shifted by 0.0% (5% or more is a workload change)</system-out>"),
            std::string::npos)
      << xml;

  const ServingRun mix =
      Generate("junit_mix", Spec(300, 3), "prefill:1024=4,decode:16=1,decode:32=1,decode:64=1,mixed:256=3");
  const std::string mixed = ComparisonJunit(CompareReports(base.report, mix.report, CompareOptions{}, "base", "new"));
  EXPECT_NE(mixed.find("tests=\"9\" failures=\"0\" errors=\"0\" skipped=\"0\">"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("name=\"serving workload\">\n      <system-out>workload changed, not judged as latency: step "
                       "mix shifted by 50.0% ("),
            std::string::npos)
      << mixed;

  const ServingRun few = Generate("junit_few", Spec(9, 4), "decode:32=1");
  const ServingRun other = Generate("junit_other", Spec(9, 5), "prefill:1024=1");
  const std::string none = ComparisonJunit(CompareReports(few.report, other.report, CompareOptions{}, "a", "b"));
  EXPECT_NE(none.find("name=\"serving ms_per_token\">\n      <error message=\"no serving step group (kind x token "
                      "bucket) on both sides"),
            std::string::npos)
      << none;
  const std::string short_runs = ComparisonJunit(CompareReports(few.report, few.report, CompareOptions{}, "a", "b"));
  EXPECT_NE(short_runs.find("name=\"serving decode 32-63 tokens ms_per_token\">\n      <skipped message=\"not "
                            "judged: fewer than 10 steps on a side\"/>"),
            std::string::npos)
      << short_runs;
}

TEST(ServingGate, RateBootstrapIsDeterministicAndExact) {
  const std::vector<double> bl = {3, 5, 4, 6}, bt = {30, 50, 40, 60}, nl = {3.3, 5.5, 4.4, 6.6}, nt = {30, 50, 40, 60};
  const RateBootstrapResult a = BootstrapRatioOfRates(bl, bt, nl, nt), b = BootstrapRatioOfRates(bl, bt, nl, nt);
  EXPECT_DOUBLE_EQ(a.ratio, 1.1);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_EQ(a.p_not_above, b.p_not_above);
  EXPECT_LE(a.lo, a.ratio);
  EXPECT_GE(a.hi, a.ratio);
  EXPECT_FALSE(BootstrapRatioOfRates({1}, {1}, nl, nt).ok);
  EXPECT_FALSE(BootstrapRatioOfRates(bl, {1, 2}, nl, nt).ok);
}

}  // namespace
}  // namespace tg
