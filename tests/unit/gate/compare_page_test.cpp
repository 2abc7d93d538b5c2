// The comparison's human outputs: the HTML page (compare --html, gate --html) and the Markdown's
// shape for a pull-request comment, on reports analyzed from hand-built traces.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/gate/compare_internal.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/compare_html.h"

namespace tg {

using internal::SmallestMannWhitneyP;
using internal::VerdictClauses;
namespace {

using nlohmann::json;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kMs = 1'000'000;

// `n` iterations of `ms` each; every iteration runs the kernels named in `kernels`, one after the
// other, 0.1 ms each.
Trace Iterations(size_t n, TimeNs latency, const std::vector<std::string>& kernels) {
  Trace t;
  t.devices.push_back(Device{0, "NVIDIA H200", 132, 0, 0, 9, 0});
  TimeNs at = 1'000 * kMs;
  for (size_t i = 0; i < n; ++i) {
    AddRange(t, "iteration " + std::to_string(i), at, at + latency + static_cast<TimeNs>(i) * 10'000);
    TimeNs k = at;
    for (const std::string& name : kernels) {
      AddKernel(t, name, k, k + kMs / 10);
      k += kMs / 10;
    }
    at += latency + 2 * kMs;
  }
  return t;
}

json Report(const Trace& t) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, {}, &a).ok());
  return AnalysisToJson(t, a, {});
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ComparePage, DrawsEverySectionAndEscapesNames) {
  const json base = Report(Iterations(12, 10 * kMs, {"conv", "gemm"}));
  const json next = Report(Iterations(12, 11 * kMs, {"conv", "gemm", "<script>alert(1)</script>"}));
  const Comparison c = CompareReports(base, next, {}, "base.json", "new.json");
  ASSERT_EQ(c.verdict, Verdict::kRegression) << c.verdict_text;
  const std::string html = ComparisonHtml(c, base, next);
  EXPECT_NE(html.find("<section class=\"banner regression\" id=\"verdict\">"), std::string::npos);
  for (const char* chart : {"Latency per iteration of both runs", "by kernel family", "Phases of both runs",
                            "The median iteration of each run on one time axis"})
    EXPECT_NE(html.find(chart), std::string::npos) << chart;
  // 12 iterations a side: histograms on shared bins as well as the samples.
  EXPECT_NE(html.find("class=\"hist-base\""), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"rug side-base\""), 12u);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  // Every axis is titled with its unit.
  EXPECT_EQ(Count(html, "<line class=\"axis\""), Count(html, "class=\"axis-title"))  // the phase bars too
      << "an axis without a title";
}

TEST(ComparePage, SaysWhatIsMissingInsteadOfDrawingIt) {
  json base = Report(Iterations(3, 10 * kMs, {"conv"}));
  json next = base;
  base.erase("timeline");
  const Comparison c = CompareReports(base, next, {}, "old.json", "new.json");
  const std::string html = ComparisonHtml(c, base, next);
  EXPECT_NE(html.find("base: the report has no timeline section"), std::string::npos);
  EXPECT_EQ(html.find("class=\"hist-base\""), std::string::npos);  // 3 samples: no histogram
  // Few samples: the test can never be significant, and the page says so at the top.
  EXPECT_NE(html.find("the Mann-Whitney test can never reach p &lt; 0.05"), std::string::npos) << html;
}

TEST(ComparePage, UnreadableInputsStillGetABanner) {
  const Comparison c = CannotReadInputs("missing.json: cannot open the report", {}, "missing.json", "new.json");
  const std::string html = ComparisonHtml(c, json::object(), json::object());
  EXPECT_NE(html.find("<section class=\"banner cannot_judge\""), std::string::npos);
  EXPECT_NE(html.find("Cannot judge (inputs): missing.json: cannot open the report"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_EQ(ComparisonMarkdown(c).rfind("**CANNOT JUDGE: missing.json: cannot open the report**\n", 0), 0u);
}

TEST(CompareMarkdown, StaysShortWithManyChangedKernels) {
  std::vector<std::string> many;
  for (int i = 0; i < 300; ++i) many.push_back("kernel_" + std::to_string(i) + "_" + std::string(200, 'x'));
  const json base = Report(Iterations(12, 40 * kMs, {"conv"}));
  const json next = Report(Iterations(12, 44 * kMs, many));
  const Comparison c = CompareReports(base, next, {}, "base.json", "new.json");
  ASSERT_GT(c.families.size(), 200u);
  const std::string md = ComparisonMarkdown(c);
  EXPECT_LT(md.size(), 4096u) << md;
  EXPECT_EQ(md.rfind("**REGRESSION: ", 0), 0u);
  EXPECT_NE(md.find("Left out to keep this short: "), std::string::npos) << md;
  std::string shown = md;  // what a reader sees before unfolding anything
  for (size_t at; (at = shown.find("<details>")) != std::string::npos;)
    shown.erase(at, shown.find("</details>", at) + 10 - at);
  EXPECT_EQ(shown.find(std::string(60, 'x')), std::string::npos) << "a long name outside <details>: " << shown;
  EXPECT_NE(md.find(std::string(200, 'x')), std::string::npos) << "no full name in <details>";
  EXPECT_EQ(Count(md, "<details>"), Count(md, "</details>"));
}

TEST(CompareMarkdown, VerdictClausesAndTheSmallestP) {
  EXPECT_EQ(VerdictClauses("REGRESSION: a (x; y); b; c (d)"),
            (std::vector<std::string>{"REGRESSION: a (x; y)", "b", "c (d)"}));
  EXPECT_EQ(VerdictClauses("PASS: a"), std::vector<std::string>{"PASS: a"});
  EXPECT_DOUBLE_EQ(SmallestMannWhitneyP(2, 2), 2.0 / 6);   // C(4, 2) = 6
  EXPECT_DOUBLE_EQ(SmallestMannWhitneyP(4, 4), 2.0 / 70);  // C(8, 4) = 70
  EXPECT_DOUBLE_EQ(SmallestMannWhitneyP(1, 1), 1.0);
}

}  // namespace
}  // namespace tg
